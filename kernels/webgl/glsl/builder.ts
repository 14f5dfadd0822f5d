/**
 * The one way the webgl passes make shader text: uniforms from one list (declarations, the
 * values a draw sets, tfjs's customUniforms) and lines at an indentation; texts are kept per key
 * by textPerKey (kernels/text_per_key.ts).
 */

/** 'int[]': an int array sized by its values; the others one value of that GLSL type. */
export type UniformType = 'int' | 'int[]' | 'ivec2' | 'ivec3' | 'ivec4' | 'vec2';

/** A uniform: its name, type and values. */
export type Uniform = readonly [name: string, type: UniformType, values: readonly number[]];

/** A uniform's value as runMultiTarget sets it ('int' for any ints, set with uniform1iv). */
export interface UniformValue {
  readonly name: string;
  readonly type: 'int' | 'ivec2' | 'ivec3' | 'ivec4' | 'vec2';
  readonly values: number[];
}

/** `items` one a line, each after the first at `indent` spaces (the first goes where the caller writes it). */
export function lines(items: readonly string[], indent: number): string {
  return items.join(`\n${' '.repeat(indent)}`);
}

/** GLSL declaring `uniforms` (int arrays sized by their values), one a line at `indent` spaces. */
export function declareUniforms(uniforms: readonly Uniform[], indent = 6): string {
  return lines(uniforms.map(([name, type, values]) =>
                   type === 'int[]' ? `uniform int ${name}[${values.length}];` : `uniform ${type} ${name};`), indent);
}

/** The values of `uniforms` as runMultiTarget sets them. */
export function uniformValues(uniforms: readonly Uniform[]): UniformValue[] {
  return uniforms.map(([name, type, values]) => ({name, type: type === 'int[]' ? 'int' : type, values: [...values]}));
}

/** tfjs's customUniforms for a GPGPUProgram (tfjs writes their declarations). */
export function customUniforms(uniforms: readonly Uniform[]):
    Array<{name: string; type: Exclude<UniformType, 'int[]'>; arrayIndex?: number}> {
  return uniforms.map(([name, type, values]) => type === 'int[]' ? {name, type: 'int', arrayIndex: values.length} : {name, type});
}

/** The values runWebGLProgram takes for customUniforms(uniforms), in order. */
export function customUniformValues(uniforms: readonly Uniform[]): number[][] {
  return uniforms.map(([, , values]) => [...values]);
}

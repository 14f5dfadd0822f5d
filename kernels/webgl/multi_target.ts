import type {TensorInfo} from '@tensorflow/tfjs-core';
import {env} from '@tensorflow/tfjs-core';
import type {GPGPUContext, MathBackendWebGL} from '@tensorflow/tfjs-backend-webgl';

import type {UniformValue} from './glsl/builder';

/**
 * Running a fragment shader that writes several render targets at once (WebGL 2 draw buffers),
 * which tfjs's runWebGLProgram cannot: it binds one output texture, and its shader header
 * declares one output. On SwiftShader a texture read costs far more than a multiply-add, so a
 * fragment that writes 8 texels (32 sums) from the values it has read does ~3× fewer reads per
 * multiply-add than one writing a single texel; see passes/loops/dense_tiles.ts and depthwise_taps.ts.
 *
 * The targets are ordinary packed tfjs tensors (logical shape [2·rows, 2·columns], one texel
 * per fragment), so tfjs's own programs read them afterwards; the inputs are tfjs tensors
 * already on the GPU. The program is compiled once per GPGPU context and shader text (its cache
 * key), and the framebuffer is left as tfjs expects it: only COLOR_ATTACHMENT0 attached and
 * drawn to.
 *
 * A draw is one triangle covering the viewport (COVERING_TRIANGLE_VERTEX_SHADER), not tfjs's
 * two-triangle quad: a rasterizer shades fragments in 2 × 2 quads, and every quad the quad's
 * diagonal crosses is shaded once for each triangle (SwiftShader runs the whole shader for both,
 * with half the lanes masked). That is about 2 / rows + 2 / columns more work: a third more on
 * targets 6 texels tall, twice the work on targets 2 texels wide.
 */
export interface MultiTargetProgram {
  /** What kind of program this is, for counts (like the class names in tfjs's cache keys). */
  readonly name: string;
  /** The complete fragment shader (GLSL ES 3.00); also the program's cache key. */
  readonly source: string;
  /** Sampler uniform of each input, in the order of the inputs. */
  readonly inputNames: readonly string[];
  /** Integer uniforms (int arrays, ivecN) and float vec2 uniforms, set before each draw. */
  readonly uniforms: readonly UniformValue[];
}

/**
 * The vertex shader of every multi-target program: vertices (-1, -1), (3, -1), (-1, 3) from
 * gl_VertexID (no vertex buffer), one triangle whose inside holds the whole clip square.
 */
const COVERING_TRIANGLE_VERTEX_SHADER = `#version 300 es
      void main() {
        gl_Position = vec4(gl_VertexID == 1 ? 3.0 : -1.0, gl_VertexID == 2 ? 3.0 : -1.0, 0.0, 1.0);
      }`;

interface Compiled {
  name: string;
  program: WebGLProgram & {vao: WebGLVertexArrayObject};
  locations: Map<string, WebGLUniformLocation | null>;
}

const compiledPrograms = new WeakMap<GPGPUContext, Map<string, Compiled>>();

/** How many shaders this module has compiled for `gpgpu`. */
export function multiTargetProgramCount(gpgpu: GPGPUContext): number {
  return compiledPrograms.get(gpgpu)?.size ?? 0;
}

/** The shaders this module has compiled for `gpgpu`, as (program name, cache key) (for the benchmark's counts). */
export function multiTargetPrograms(gpgpu: GPGPUContext): Array<{name: string; key: string}> {
  return [...(compiledPrograms.get(gpgpu)?.entries() ?? [])].map(([key, compiled]) => ({name: compiled.name, key}));
}

function compile(gpgpu: GPGPUContext, program: MultiTargetProgram): Compiled {
  let cache = compiledPrograms.get(gpgpu);
  if (cache === undefined) compiledPrograms.set(gpgpu, cache = new Map());
  const cached = cache.get(program.source);
  if (cached !== undefined) return cached;
  const gl = gpgpu.gl as WebGL2RenderingContext;
  const fragmentShader = compileShader(gl, gl.FRAGMENT_SHADER, program.source);
  const linked = gl.createProgram()! as Compiled['program'];
  gl.attachShader(linked, coveringTriangleShader(gl));
  gl.attachShader(linked, fragmentShader);
  gl.linkProgram(linked);
  if (gl.getProgramParameter(linked, gl.LINK_STATUS) !== true) {
    throw new Error(`tfjs-conv-backprop-filters: webgl program failed to link: ${gl.getProgramInfoLog(linked)}\n${program.source}`);
  }
  // An empty vertex array: the vertex shader reads no attribute.
  linked.vao = gl.createVertexArray()!;
  const names = [...program.inputNames, ...program.uniforms.map(uniform => uniform.name)];
  const compiled = {name: program.name, program: linked, locations: new Map(names.map(name => [name, gl.getUniformLocation(linked, name)]))};
  cache.set(program.source, compiled);
  return compiled;
}

function compileShader(gl: WebGL2RenderingContext, type: number, source: string): WebGLShader {
  const shader = gl.createShader(type)!;
  gl.shaderSource(shader, source);
  gl.compileShader(shader);
  if (gl.getShaderParameter(shader, gl.COMPILE_STATUS) !== true) {
    const log = gl.getShaderInfoLog(shader);
    gl.deleteShader(shader);
    throw new Error(`tfjs-conv-backprop-filters: webgl shader failed to compile: ${log}\n${source}`);
  }
  return shader;
}

const coveringTriangleShaders = new WeakMap<WebGL2RenderingContext, WebGLShader>();

/** COVERING_TRIANGLE_VERTEX_SHADER compiled once per context. */
function coveringTriangleShader(gl: WebGL2RenderingContext): WebGLShader {
  let shader = coveringTriangleShaders.get(gl);
  if (shader === undefined) coveringTriangleShaders.set(gl, shader = compileShader(gl, gl.VERTEX_SHADER, COVERING_TRIANGLE_VERTEX_SHADER));
  return shader;
}

/** The texture of a tensor the caller has put on the GPU. */
function textureOf(backend: MathBackendWebGL, tensor: TensorInfo): WebGLTexture {
  const texture = backend.texData.get(tensor.dataId).texture;
  if (texture == null) throw new Error('tfjs-conv-backprop-filters: internal: a multi-target input or target is not on the GPU');
  return texture.texture;
}

/**
 * Packed float32 tensors [2·rows, 2·columns] on the GPU, one per target, whose textures are
 * exactly rows × columns texels (null when tfjs would have to fold such a texture: the caller
 * then takes another path).
 */
export function makeTargets(backend: MathBackendWebGL, count: number, rows: number, columns: number): TensorInfo[] | null {
  const targets: TensorInfo[] = [];
  for (let i = 0; i < count; i++) {
    const target = backend.makeTensorInfo([2 * rows, 2 * columns], 'float32');
    targets.push(target);
    const data = backend.texData.get(target.dataId);
    data.isPacked = true;
    backend.uploadToGPU(target.dataId);
    if (data.texShape?.[0] !== 2 * rows || data.texShape?.[1] !== 2 * columns) {  // folded (WEBGL_MAX_TEXTURE_SIZE)
      for (const made of targets) backend.disposeIntermediateTensorInfo(made);
      return null;
    }
  }
  return targets;
}

/**
 * The parts of tfjs's webgl backend runWebGLProgram uses to time a program for tf.time /
 * tf.profile (private in its typings, stable across 4.x).
 */
interface ProgramTimers {
  activeTimers?: Array<{name: string; query: unknown}> | null;
  startTimer(): unknown;
  endTimer(query: unknown): unknown;
  getQueryTime(query: unknown): Promise<number>;
}

/**
 * Draws `program` over the targets' texels, reading `inputs` — as runWebGLProgram runs a
 * program: timed under tf.time / tf.profile (by the program's name), and compiled but not drawn
 * under ENGINE_COMPILE_ONLY (tfjs's warm-up mode that only compiles shaders).
 */
export function runMultiTarget(
    backend: MathBackendWebGL, program: MultiTargetProgram, inputs: readonly TensorInfo[],
    targets: readonly TensorInfo[]): void {
  const gpgpu = backend.gpgpu;
  const gl = gpgpu.gl as WebGL2RenderingContext;
  const {program: linked, locations} = compile(gpgpu, program);
  if (env().getBool('ENGINE_COMPILE_ONLY')) return;
  const timers = backend as unknown as ProgramTimers;
  const timed = timers.activeTimers != null;
  const query = timed ? timers.startTimer() : null;
  const [rows, columns] = targets[0].shape;
  gpgpu.setOutputPackedMatrixTexture(textureOf(backend, targets[0]), rows, columns);
  const attachments = targets.map((_, i) => gl.COLOR_ATTACHMENT0 + i);
  targets.forEach((target, i) => {
    if (i > 0) gl.framebufferTexture2D(gl.FRAMEBUFFER, attachments[i], gl.TEXTURE_2D, textureOf(backend, target), 0);
  });
  gl.drawBuffers(attachments);
  try {
    gpgpu.setProgram(linked);
    gpgpu.bindVertexArray(linked.vao);
    inputs.forEach((input, unit) => {
      const location = locations.get(program.inputNames[unit]);
      if (location != null) gpgpu.setInputMatrixTexture(textureOf(backend, input), location, unit);
    });
    for (const {name, type, values} of program.uniforms) {
      const location = locations.get(name) ?? null;
      if (location === null) continue;  // the compiler dropped an unused uniform
      if (type === 'int') gl.uniform1iv(location, values);
      else if (type === 'ivec2') gl.uniform2iv(location, values);
      else if (type === 'ivec3') gl.uniform3iv(location, values);
      else if (type === 'ivec4') gl.uniform4iv(location, values);
      else gl.uniform2fv(location, values);
    }
    gl.drawArrays(gl.TRIANGLES, 0, 3);
  } finally {
    for (let i = 1; i < targets.length; i++) gl.framebufferTexture2D(gl.FRAMEBUFFER, attachments[i], gl.TEXTURE_2D, null, 0);
    gl.drawBuffers([gl.COLOR_ATTACHMENT0]);
  }
  if (timed) timers.activeTimers!.push({name: program.name, query: timers.getQueryTime(timers.endTimer(query))});
}

// Direct reads of packed 2-D views [positions, channels] for the multi-target programs: the
// shader reads the texel holding an element itself, with the texture's size as a uniform, so
// no shape is baked into the text.

import {declareUniforms, Uniform, UniformValue, uniformValues} from './builder';

/** A packed 2-D view's texture: its shape as tfjs records it (in elements) and whether it is folded. */
export interface PackedTexture {
  readonly texShape: readonly number[];
  /** The view's columns (elements per position). */
  readonly columns: number;
  /** Texels in order but wrapped at the texture's width (see textureLayout in input_views.ts). */
  readonly folded: boolean;
  /**
   * 0 when the view's rows are the tensor's positions in order. Odd: tfjs packed the texture
   * for blocks of this many positions (e.g. [N, H, W, C] with W odd), each block's last texel
   * row half empty; the programs read it in place as a view whose blocks are padded to
   * blockRows + 1 rows (the row strides of the axes that step whole blocks say so), never
   * using a value from a pad row.
   */
  readonly blockRows: number;
}

/**
 * GLSL reading the texel that holds element (row, col) of a packed view: at (row/2, col/2) for
 * a row-major texture (one multiply-add for uv, in elements); a folded one wraps the texel
 * index (row/2) · ⌈columns/2⌉ + col/2 at the texture's width (`${name}TexelOf`, as tfjs's
 * packedUVfrom2D does), a division per read. Follows cursorFunctions in the shader.
 */
function readFunction(name: 'src' | 'diffDst', texture: Pick<PackedTexture, 'folded'>): string {
  const Name = name[0].toUpperCase() + name.slice(1);
  return texture.folded ? `vec4 read${Name}(int row, int col) {
        return read${Name}At(${name}TexelOf(row, col));
      }` : `vec4 read${Name}(int row, int col) {
        return texture(${name}, (vec2(col, row) + 0.5) * ${name}TexelScale);
      }`;
}

/**
 * GLSL for reading a packed view along its rows with a cursor: `${name}TexelOf(row, col)` is
 * the texel (x, y) holding element (row, col) — for a folded texture y · width + x is the texel
 * index, x negative or y truncated toward zero for indices below 0 (reads there are clamped and
 * discarded), which stepping keeps; `${name}Advance(texel, step)` is the texel a step further
 * — for a folded texture an add and a compare, where readFunction divides on every read — with
 * `${name}RowsStep(rows)` the step of that many view texel rows (two view rows each) and
 * `${name}NextRow(texel)` one row further; `read${Name}At(texel)` reads one.
 */
function cursorFunctions(name: 'src' | 'diffDst', texture: Pick<PackedTexture, 'folded'>): string {
  const Name = name[0].toUpperCase() + name.slice(1);
  return `
      ivec2 ${name}TexelOf(int row, int col) {${texture.folded ? `
        int texel = (row / 2) * ${name}Folding.x + col / 2;
        int texelRow = texel / ${name}Folding.y;
        return ivec2(texel - texelRow * ${name}Folding.y, texelRow);` : `
        return ivec2(col / 2, row / 2);`}
      }
      ivec2 ${name}RowsStep(int rows) {${texture.folded ? `
        int texels = rows * ${name}Folding.x;
        int y = texels / ${name}Folding.y;
        return ivec2(texels - y * ${name}Folding.y, y);` : `
        return ivec2(0, rows);`}
      }
      ivec2 ${name}Advance(ivec2 texel, ivec2 step) {${texture.folded ? `
        texel += step;
        // An if, not two selects on a bool: SwiftShader took 72 s to compile a depthwise
        // shader with the selects (165 ms with the if), which also runs 8% faster.
        if (texel.x >= ${name}Folding.y) {
          texel += ivec2(-${name}Folding.y, 1);
        }
        return texel;` : `
        return texel + step;`}
      }
      ivec2 ${name}NextRow(ivec2 texel) {
        return ${name}Advance(texel, ${name}TexelRowStep);
      }
      vec4 read${Name}At(ivec2 texel) {
        return texture(${name}, (vec2(texel) + 0.5) * ${name}TexelSize);
      }`;
}

/**
 * The uniforms readFunction's and cursorFunctions' code uses, for both inputs: the reciprocal
 * texture size in elements (row-major reads) and in texels, the folding, and one view texel row
 * as a texel step; each one's values from the input's texture.
 */
const TEXTURE_UNIFORMS: ReadonlyArray<{suffix: string; type: 'vec2' | 'ivec2'; values: (texture: PackedTexture) => number[]}> = [
  {suffix: 'TexelScale', type: 'vec2', values: ({texShape: [height, width]}) => [1 / width, 1 / height]},
  {suffix: 'Folding', type: 'ivec2', values: ({texShape: [, width], columns}) => [Math.ceil(columns / 2), Math.ceil(width / 2)]},
  {suffix: 'TexelSize', type: 'vec2', values: ({texShape: [height, width]}) => [1 / Math.ceil(width / 2), 1 / Math.ceil(height / 2)]},
  // One texel row of the view, as (x, y) texels of a folded texture (see cursorFunctions).
  {suffix: 'TexelRowStep', type: 'ivec2', values: ({texShape: [, width], columns}) => {
    const texelWidth = Math.ceil(width / 2);
    const rowStep = Math.ceil(columns / 2);
    return [rowStep % texelWidth, Math.floor(rowStep / texelWidth)];
  }},
];

/** TEXTURE_UNIFORMS for src and diffDst, with their values where the textures are given. */
function textureUniforms(textures?: Inputs): Uniform[] {
  return TEXTURE_UNIFORMS.flatMap(({suffix, type, values}) => (['src', 'diffDst'] as const).map(
      (name): Uniform => [`${name}${suffix}`, type, textures === undefined ? [] : values(textures[name])]));
}

type Inputs = {readonly src: PackedTexture; readonly diffDst: PackedTexture};
/** What of the inputs' textures packedReadsHeader's text depends on. */
export type InputFolding = {readonly src: Pick<PackedTexture, 'folded'>; readonly diffDst: Pick<PackedTexture, 'folded'>};

/** The inputs' InputFolding, for a pass's text key (see textPerKey in kernels/text_per_key.ts). */
export function inputFolding(textures: Inputs): InputFolding {
  return {src: {folded: textures.src.folded}, diffDst: {folded: textures.diffDst.folded}};
}

/**
 * The start of a multi-target fragment shader reading src and diffDst: version, precisions,
 * samplers and their uniforms, readSrc / readDiffDst (row, col) → the texel holding that
 * element, the cursor functions (srcTexelOf, srcNextRow, readSrcAt and diffDst's), and isOdd.
 */
export function packedReadsHeader(textures: InputFolding): string {
  return `#version 300 es
      precision highp float;
      precision highp int;
      precision highp sampler2D;
      uniform sampler2D src;
      uniform sampler2D diffDst;
      ${declareUniforms(textureUniforms())}
      // The texel of 2 × 2 holding element (row, col) of a packed 2-D view.${
      (['src', 'diffDst'] as const).map(name => `
      ${cursorFunctions(name, textures[name])}
      ${readFunction(name, textures[name])}`).join('')}
      bool isOdd(int i) {
        return i - 2 * (i / 2) != 0;
      }`;
}

/** The values of packedReadsHeader's uniforms. */
export function packedReadsUniforms(textures: Inputs): UniformValue[] {
  return uniformValues(textureUniforms(textures));
}

/**
 * The view rows from one image row of `width` positions to the next, where every image row
 * starts at a texel (two positions): `width` when even; width + 1 when odd and tfjs packed the
 * texture in blocks of one image row each padded to an even length (PackedTexture.blockRows);
 * null otherwise (an odd row starting mid-texel).
 */
export function rowPitch(width: number, blockRows: number): number | null {
  if (blockRows === 0) return width % 2 === 0 ? width : null;
  return blockRows === width ? width + 1 : null;
}

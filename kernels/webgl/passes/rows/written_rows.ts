import {FilterGradientGeometry, SpatialAxis, spatialAxesAs3d} from '../../../../src/geometry';
import {declareUniforms, lines, Uniform} from '../../glsl/builder';
import {InputFolding, inputFolding, PackedTexture, rowPitch} from '../../glsl/packed_reads';
import {DEFAULT_WEBGL_PROFILE} from '../../plan/device';

/**
 * What dense rows, depthwise rows and one-channel rows (dense.ts, depthwise.ts,
 * one_channel.ts) share: each writes a diffDst row's products out in the shader, so they settle
 * along the row, when the text is made, which tap meets which position and which src texels a
 * row's products read.
 */

/** The widest diffDst rows dense rows take under the default profile (WebglProfile.denseRows.maxWidth). */
export const WRITTEN_ROWS_MAX_WIDTH = DEFAULT_WEBGL_PROFILE.denseRows.maxWidth;

/**
 * The view rows from one image row to the next in src and diffDst (see rowPitch in
 * glsl/packed_reads.ts; `blockRows`: each input's PackedTexture.blockRows) where both tensors hold
 * their positions in order (rowsInOrder) and every image row starts at a texel of both
 * textures; null otherwise.
 */
export function rowLayout(geometry: FilterGradientGeometry, blockRows: {readonly src: number; readonly diffDst: number}):
    {srcPitch: number; diffDstPitch: number} | null {
  const [, , w] = spatialAxesAs3d(geometry.axes);
  const srcPitch = rowPitch(w.srcSize, blockRows.src);
  const diffDstPitch = rowPitch(w.diffDstSize, blockRows.diffDst);
  return srcPitch === null || diffDstPitch === null || !rowsInOrder(geometry) ? null : {srcPitch, diffDstPitch};
}

/**
 * Whether both tensors of a channels-last 1-D or 2-D problem hold their positions in order,
 * row (n · height + y) · width + x of the view [positions, channels] — the layout the passes
 * step through a row at a time.
 */
export function rowsInOrder(geometry: FilterGradientGeometry): boolean {
  const [, h, w] = spatialAxesAs3d(geometry.axes);
  const inOrder = (tensor: 'src' | 'diffDst') => {
    const {channels, batchStride} = geometry[tensor];
    const stride = (axis: SpatialAxis) => tensor === 'src' ? axis.srcStride : axis.diffDstStride;
    const size = (axis: SpatialAxis) => tensor === 'src' ? axis.srcSize : axis.diffDstSize;
    return stride(w) === channels && (geometry.spatialRank === 1 || stride(h) === size(w) * channels) &&
        batchStride === size(h) * size(w) * channels;
  };
  return geometry.spatialRank <= 2 && inOrder('src') && inOrder('diffDst');
}

/** What of the row's axis (the innermost) a written-rows shader's text depends on. */
export type RowAxis = Pick<SpatialAxis, 'kernelSize' | 'diffDstSize' | 'srcSize' | 'stride' | 'dilation' | 'padBegin'>;

/** The RowAxis fields of `w` alone, for a pass's text key (see textPerKey in kernels/text_per_key.ts). */
function rowAxisOf(w: SpatialAxis): RowAxis {
  const {kernelSize, diffDstSize, srcSize, stride, dilation, padBegin} = w;
  return {kernelSize, diffDstSize, srcSize, stride, dilation, padBegin};
}

/**
 * The part of a written-rows pass's text key (see textPerKey in kernels/text_per_key.ts) every such pass
 * has; each pass's key adds its own fields.
 */
export interface WrittenRowsText {
  /** The row's width, the kernel width, the stride, dilation and begin pad along the row. */
  readonly row: RowAxis;
  readonly diffDstPitch: number;
  /**
   * Whether every kernel row a fragment adds lies in the kernel and meets no pad
   * (kernelRowsAlwaysInside): no select on each row's products.
   */
  readonly kernelRowsAlwaysInside: boolean;
  readonly inputs: InputFolding;
  /** The integer uniforms' declarations. */
  readonly intUniforms: string;
}

/**
 * A pass's WrittenRowsText, from the geometry (the row's axis, the innermost), the pass's pitch,
 * the inputs' textures and the pass's integer uniforms; every kernel row a fragment adds lies
 * inside where `alwaysInside` (default: kernelRowsAlwaysInside of the height axis).
 */
export function writtenRowsText(geometry: FilterGradientGeometry, diffDstPitch: number,
                                textures: {readonly src: PackedTexture; readonly diffDst: PackedTexture}, ints: readonly Uniform[],
                                alwaysInside = kernelRowsAlwaysInside(spatialAxesAs3d(geometry.axes)[1])): WrittenRowsText {
  return {row: rowAxisOf(spatialAxesAs3d(geometry.axes)[2]), diffDstPitch, kernelRowsAlwaysInside: alwaysInside,
          inputs: inputFolding(textures), intUniforms: declareUniforms(ints)};
}

/**
 * Where a row's products for the sum `sum` (a name beginning `sum`) go: to the row sum
 * `row…`, added to the sum where the kernel row lies inside src; or straight to the sum where
 * it always does.
 */
export function rowSumOf(sum: string, kernelRowsAlwaysInside: boolean): string {
  return kernelRowsAlwaysInside ? sum : sum.replace(/^sum/, 'row');
}

/** GLSL declaring the row sums of `sums` (see rowSumOf), of `type`; none where kernel rows are always inside. */
export function declareRowSums(sums: readonly string[], type: 'vec2' | 'vec4', kernelRowsAlwaysInside: boolean): string {
  return kernelRowsAlwaysInside ? '' : `
          ${lines(sums.map(sum => `${type} ${rowSumOf(sum, false)} = ${type}(0.0);`), 10)}`;
}

/**
 * The src row in the image that the GLSL int `srcY` names: clamped into the image (rowSplit.w
 * rows, writtenRowsLoop's uniform), where a row outside is read and its products selected away;
 * as it is where kernel rows are always inside.
 */
export function srcRowInImage(srcY: string, kernelRowsAlwaysInside: boolean): string {
  return kernelRowsAlwaysInside ? srcY : `clamp(${srcY}, 0, rowSplit.w - 1)`;
}

/**
 * Whether every kernel row meets a src row inside src from every diffDst row along the height
 * `h` (no pad above, none reached below): a pass then adds each row's products without a
 * select.
 */
export function kernelRowsAlwaysInside(h: SpatialAxis): boolean {
  return h.padBegin === 0 && (h.diffDstSize - 1) * h.stride + (h.kernelSize - 1) * h.dilation < h.srcSize;
}

/** A tap along the row meeting one position: the diffDst position x and the src column it reads. */
export interface Meeting {
  readonly x: number;
  readonly column: number;
}

/**
 * Along a row (the innermost axis `w`), per tap kx and diffDst texel j (positions 2j, 2j + 1):
 * those of the texel's positions whose src column lies inside src, with that column —
 * `meetings[kx][j]`.
 */
export function rowMeetings(w: RowAxis): Meeting[][][] {
  const texels = [...Array(Math.ceil(w.diffDstSize / 2)).keys()];
  return [...Array(w.kernelSize).keys()].map(kx => texels.map(j => [2 * j, 2 * j + 1]
      .filter(x => x < w.diffDstSize)
      .map(x => ({x, column: x * w.stride + kx * w.dilation - w.padBegin}))
      .filter(({column}) => column >= 0 && column < w.srcSize)));
}

/**
 * The src texels (`positionsPerTexel` columns each) the products at diffDst texel j of a row
 * read, in increasing order (`meetings` from rowMeetings).
 */
export function srcTexelsAt(meetings: readonly Meeting[][][], positionsPerTexel: number): (j: number) => number[] {
  const texels = meetings.length === 0 ? [] : meetings[0].map((_, j) =>
      [...new Set(meetings.flatMap(tap => tap[j]).map(({column}) => Math.floor(column / positionsPerTexel)))].sort((a, b) => a - b));
  return j => texels[j];
}

/** How many src texels (`positionsPerTexel` columns each) the products along a row of `w` read. */
export function srcTexelsAlongRow(w: RowAxis, positionsPerTexel: number): number {
  const needed = srcTexelsAt(rowMeetings(w), positionsPerTexel);
  return new Set([...Array(Math.ceil(w.diffDstSize / 2)).keys()].flatMap(j => needed(j))).size;
}

/** A src row a pass reads along a diffDst row (see interleavedRowSteps). */
export interface SrcRowStream {
  /** The cursor variable, set at the row's first texel. */
  readonly cursor: string;
  /** The variable holding src texel t of the row. */
  readonly texel: (t: number) => string;
  /** The src texels the products at diffDst texel j read, in increasing order. */
  readonly needed: (j: number) => readonly number[];
}

/**
 * GLSL for one diffDst row of `texels` texels, step by step: at texel j, `readDiffDst(j)` (the
 * pass's reads of its diffDst texels there), then the src texels of each stream the products
 * at j read first (through the stream's cursor, which steps over texels no product reads), then
 * `products(j)`. Reading each value just before its products keeps a few texels live, where
 * reading the whole row first keeps them all (SwiftShader spills them to memory and reads them
 * back).
 */
export function interleavedRowSteps(texels: number, readDiffDst: (j: number) => string, streams: readonly SrcRowStream[],
                                    products: (j: number) => string, indent: string): string {
  const steps = [...Array(texels).keys()];
  // The cursors only move forward: a texel some step reads is read when the cursor passes it.
  const used = streams.map(stream => new Set(steps.flatMap(j => stream.needed(j))));
  const cursorAt = streams.map(() => 0);
  const passed = streams.map(() => 0);
  let code = '';
  for (const j of steps) {
    code += readDiffDst(j);
    streams.forEach((stream, i) => {
      const last = Math.max(-1, ...stream.needed(j));
      for (; passed[i] <= last; passed[i]++) {
        const t = passed[i];
        if (!used[i].has(t)) continue;
        for (; cursorAt[i] < t; cursorAt[i]++) code += `\n${indent}${stream.cursor} = srcNextRow(${stream.cursor});`;
        code += `\n${indent}vec4 ${stream.texel(t)} = readSrcAt(${stream.cursor});`;
      }
    });
    code += products(j);
  }
  return code;
}

/**
 * GLSL reading diffDst texel j of a row through the cursor `cursor` (set at the row's first
 * texel) into `name`: the cursor steps one texel row first, except at j = 0.
 */
export function readDiffDstTexel(cursor: string, j: number, name: string, indent: string): string {
  return `${j > 0 ? `\n${indent}${cursor} = diffDstNextRow(${cursor});` : ''}\n${indent}vec4 ${name} = readDiffDstAt(${cursor});`;
}

/**
 * The uniform writtenRowsLoop and srcRowInImage read: (rows a split, rows, diffDst height, src
 * height) along the rows' axis `height`.
 */
export function rowSplitUniform(plan: {readonly rowsPerSplit: number; readonly rows: number}, height: SpatialAxis): Uniform {
  return ['rowSplit', 'ivec4', [plan.rowsPerSplit, plan.rows, height.diffDstSize, height.srcSize]];
}

/**
 * GLSL running `body` for each diffDst row `row` of the fragment's split (`int split`; uniform
 * ivec4 rowSplit, rowSplitUniform: rows a split, rows, diffDst height), with `int n` and `int y`
 * the row's image and its row in the image: the loop every pass that writes rows out runs.
 */
export function writtenRowsLoop(body: string): string {
  return `        int rowBegin = split * rowSplit.x;
        int rowEnd = min(rowBegin + rowSplit.x, rowSplit.y);
        for (int row = rowBegin; row < rowEnd; row++) {
          int n = row / rowSplit.z;
          int y = row - n * rowSplit.z;${body}
        }`;
}

import {FilterGradientGeometry, SpatialAxis, spatialAxesAs3d} from '../../src/geometry';
import {rowPitch} from './packed_reads';

/**
 * What dense rows, depthwise rows and thin rows (dense_rows.ts, depthwise_rows.ts,
 * thin_rows.ts) share: each writes a diffDst row's products out in the shader, so they settle
 * along the row, when the text is made, which tap meets which position and which src texels a
 * row's products read.
 */

/** The widest diffDst rows each of these passes takes by default (its width flag's default). */
export const WRITTEN_ROWS_MAX_WIDTH = 128;
/**
 * The most products a row may write out (depthwise: kernel height × width × row width vec2
 * multiply-adds; dense: kernel width × B × row width vec4 ones), which bounds the shader's
 * length: 1,008 at 3 × 3 over 112 positions, 784 at 7 wide over 112 (ResNet-50's first layer),
 * each compiled by SwiftShader in under a second. Larger rows take the passes that loop.
 */
export const MAX_WRITTEN_ROW_PRODUCTS = 1024;

/**
 * The view rows from one image row to the next in src and diffDst (see rowPitch in
 * packed_reads.ts; `blockRows`: each input's PackedTexture.blockRows) where both tensors hold
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

/** A tap along the row meeting one position: the diffDst position x and the src column it reads. */
export interface Meeting {
  readonly x: number;
  readonly column: number;
}

/**
 * Along a row (the innermost axis `w`), per tap kx: the diffDst positions whose src column lies
 * inside src, with that column; and the src texels (two columns each) some tap reads, the
 * last of them.
 */
export function rowMeetings(w: SpatialAxis): {meetings: Meeting[][]; srcTexels: number[]; lastTexel: number} {
  const meetings = [...Array(w.kernelSize).keys()].map(kx => [...Array(w.diffDstSize).keys()]
      .map(x => ({x, column: x * w.stride + kx * w.dilation - w.padBegin}))
      .filter(({column}) => column >= 0 && column < w.srcSize));
  const srcTexels = [...new Set(meetings.flat().map(({column}) => column >> 1))];
  return {meetings, srcTexels, lastTexel: Math.max(-1, ...srcTexels)};
}

/**
 * GLSL reading, from the src texel cursor set at `rowStart` (a view row) and `col`, the texels
 * `srcTexels` into s0, s1, … (texel j as s<j>), stepping the cursor over the ones no tap reads.
 */
export function readSrcRow(rowStart: string, col: string, srcTexels: readonly number[], lastTexel: number, indent: string): string {
  return `${indent}ivec2 srcAt = srcTexelOf(${rowStart}, ${col});${[...Array(lastTexel + 1).keys()].map(j => `${j > 0 ? `
${indent}srcAt = srcNextRow(srcAt);` : ''}${srcTexels.includes(j) ? `
${indent}vec4 s${j} = readSrcAt(srcAt);` : ''}`).join('')}`;
}

/** GLSL reading `count` texels of a diffDst row from the cursor set at `rowStart` and `col` into `<name>0`, `<name>1`, …. */
export function readDiffDstRow(rowStart: string, col: string, count: number, name: string, indent: string): string {
  return `${indent}diffDstAt = diffDstTexelOf(${rowStart}, ${col});${[...Array(count).keys()].map(j => `${j > 0 ? `
${indent}diffDstAt = diffDstNextRow(diffDstAt);` : ''}
${indent}vec4 ${name}${j} = readDiffDstAt(diffDstAt);`).join('')}`;
}

/**
 * GLSL running `body` for each diffDst row `row` of the fragment's split (`int split`; uniform
 * ivec4 rowSplit: rows a split, rows, diffDst height), with `int n` and `int y` the row's image
 * and its row in the image: the loop every pass that writes rows out runs.
 */
export function writtenRowsLoop(body: string): string {
  return `        int rowBegin = split * rowSplit.x;
        int rowEnd = min(rowBegin + rowSplit.x, rowSplit.y);
        for (int row = rowBegin; row < rowEnd; row++) {
          int n = row / rowSplit.z;
          int y = row - n * rowSplit.z;${body}
        }`;
}

import type {FilterGradientGeometry} from '../../src/geometry';

/**
 * How the webgpu kernel lays the canonical computation out over invocations.
 *
 * Per group the filter gradient is a matrix product: rows are the group's diffDst channels
 * (DC), columns its (src channel, kernel offset) pairs (SC · Kvol), and the reduction runs over
 * R = batch × diffDst positions. 'blocks' gives each invocation a BM × 4 block of that matrix
 * (BM = 8 diffDst channels, 4 when DC < 8) and walks the reduction one row at a time, reading
 * BM + 4 values for 4 · BM products. When a group has fewer than 4 rows (depthwise: 1 × Kvol)
 * a block would mostly compute padding, and 'taps' runs one invocation per T neighbouring taps
 * of one filter row instead (T ≤ 4 along the innermost kernel axis, as even as the width
 * allows), sweeping whole rows of positions with each diffDst value read once for its T taps
 * and the bounds solved once per invocation. Either way,
 * when the filter gives too few invocations for the reduction's length, the reduction is split
 * (partial sums, then a pass that adds them).
 */
export interface WebgpuReductionPlan {
  readonly mode: 'blocks' | 'taps';
  /** 'taps': neighbouring taps of the innermost kernel axis per invocation (T, 1-4). */
  readonly taps: number;
  /** 'blocks': diffDst channels per block (BM); the block has BLOCK_COLUMNS columns. */
  readonly blockRows: number;
  /** Invocations of one split: 'blocks' G · ⌈DC / BM⌉ · ⌈SC · Kvol / 4⌉; 'taps' filter size / T, rounded up per filter row. */
  readonly blocksPerSplit: number;
  /** Reduction units: 'blocks' all of R; 'taps' rows of positions (R / innermost size). */
  readonly reductionRows: number;
  readonly splits: number;
  readonly rowsPerSplit: number;
  /** Workgroups of one split (invocations of a split / 64, rounded up). */
  readonly workgroupsPerSplit: number;
}

export const WORKGROUP_INVOCATIONS = 64;
export const BLOCK_COLUMNS = 4;
/** Rows of a group below which 'taps' computes less padding than 4-row blocks. */
const MIN_BLOCK_ROWS = 4;
/**
 * Invocations to aim for before the reduction is split further: every split adds its partial
 * filter to the second pass, and on SwiftShader (a few CPU threads running 4-lane invocation
 * groups) 2K invocations keep every thread busy while more splits cost more than they spread.
 * A discrete GPU wants more in flight; this is the one constant to raise there.
 */
const TARGET_INVOCATIONS = 2048;
/** A split sums at least this many products per output, so the second pass stays small. */
const MIN_PRODUCTS_PER_SPLIT = 256;
const MAX_SPLITS = 256;
/** Taps per 'taps' invocation at most: T + 1 reads for T products, T sums in registers. */
const MAX_TAPS = 4;

export function planWebgpuReduction(geometry: FilterGradientGeometry): WebgpuReductionPlan {
  const rows = geometry.diffDst.channelsPerGroup;
  const kernelVolume = geometry.axes.reduce((volume, axis) => volume * axis.kernelSize, 1);
  const columns = geometry.src.channelsPerGroup * kernelVolume;
  const positions = geometry.axes.reduce((volume, axis) => volume * axis.diffDstSize, 1);
  const reduction = geometry.batch * positions;

  if (rows >= MIN_BLOCK_ROWS) {
    const blockRows = rows >= 8 ? 8 : 4;
    const blocksPerSplit = geometry.groups * Math.ceil(rows / blockRows) * Math.ceil(columns / BLOCK_COLUMNS);
    const {splits, rowsPerSplit} = split(reduction, Math.ceil(TARGET_INVOCATIONS / blocksPerSplit), MIN_PRODUCTS_PER_SPLIT);
    return {mode: 'blocks', taps: 1, blockRows, blocksPerSplit, reductionRows: reduction, splits, rowsPerSplit,
            workgroupsPerSplit: Math.ceil(blocksPerSplit / WORKGROUP_INVOCATIONS)};
  }
  const rowLength = geometry.axes[geometry.axes.length - 1].diffDstSize;
  const reductionRows = reduction / rowLength;
  const kernelWidth = geometry.axes[geometry.axes.length - 1].kernelSize;
  const taps = Math.ceil(kernelWidth / Math.ceil(kernelWidth / MAX_TAPS));
  const blocksPerSplit = geometry.filterSize / kernelWidth * Math.ceil(kernelWidth / taps);
  const {splits, rowsPerSplit} = split(reductionRows, Math.ceil(TARGET_INVOCATIONS / blocksPerSplit), Math.ceil(MIN_PRODUCTS_PER_SPLIT / rowLength));
  return {mode: 'taps', taps, blockRows: 1, blocksPerSplit, reductionRows, splits, rowsPerSplit,
          workgroupsPerSplit: Math.ceil(blocksPerSplit / WORKGROUP_INVOCATIONS)};
}

function split(rows: number, wanted: number, minRowsPerSplit: number) {
  const splits = Math.max(1, Math.min(wanted, Math.ceil(rows / Math.max(1, minRowsPerSplit)), MAX_SPLITS));
  const rowsPerSplit = Math.ceil(rows / splits);
  return {splits: Math.ceil(rows / rowsPerSplit), rowsPerSplit};
}

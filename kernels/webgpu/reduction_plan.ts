import type {FilterGradientGeometry} from '../../src/geometry';

/**
 * How the webgpu kernel lays the canonical computation out over workgroups.
 *
 * Per group the filter gradient is a matrix product: rows are the group's diffDst channels
 * (DC), columns its (src channel, kernel offset) pairs (SC · Kvol), and the reduction runs over
 * R = batch × diffDst positions. 'tiles' gives each workgroup a TM × TN tile of that matrix
 * (64 invocations, 4 × 4 outputs each) and steps through the reduction TR rows at a time, both
 * operands staged in workgroup memory so each element read from the tensors serves TM or TN
 * products. When a group's matrix is too small to fill tiles (depthwise: 1 × Kvol) 'elements'
 * runs one invocation per filter element instead, sweeping whole rows of positions with the
 * bounds solved once per row. Either way, when the filter gives too few workgroups for the
 * reduction's length, the reduction is split across workgroups (partial sums, then a pass that
 * adds them).
 */
export interface WebgpuReductionPlan {
  readonly mode: 'tiles' | 'elements';
  /** 'tiles': the tile's diffDst channels and columns (TM/4 · TN/4 = 64 invocations). */
  readonly tileRows: number;
  readonly tileColumns: number;
  /** Reduction rows staged per step ('tiles'). */
  readonly stepRows: number;
  /** Reduction units: 'tiles' all of R; 'elements' rows of positions (R / innermost size). */
  readonly reductionRows: number;
  readonly splits: number;
  readonly rowsPerSplit: number;
  /** Workgroups of one split ('tiles': G × row tiles × column tiles; 'elements': filter / 64). */
  readonly workgroupsPerSplit: number;
}

export const WORKGROUP_INVOCATIONS = 64;
export const STEP_ROWS = 32;
/** Tile shapes of 64 invocations × 4 × 4 outputs, balanced first. */
const TILE_SHAPES: ReadonlyArray<readonly [number, number]> = [[32, 32], [16, 64], [64, 16], [8, 128], [128, 8]];
/** Below this share of useful products per tile, one invocation per element is cheaper. */
const MIN_TILE_USE = 0.25;
/** Enough invocations for a large GPU (16K) before the reduction is split further. */
const TARGET_INVOCATIONS = 16384;
/** A split sums at least this many products per output, so the second pass stays small. */
const MIN_PRODUCTS_PER_SPLIT = 256;
const MAX_SPLITS = 256;

export function planWebgpuReduction(geometry: FilterGradientGeometry): WebgpuReductionPlan {
  const rows = geometry.diffDst.channelsPerGroup;
  const kernelVolume = geometry.axes.reduce((volume, axis) => volume * axis.kernelSize, 1);
  const columns = geometry.src.channelsPerGroup * kernelVolume;
  const positions = geometry.axes.reduce((volume, axis) => volume * axis.diffDstSize, 1);
  const reduction = geometry.batch * positions;

  const padded = (size: number, tile: number) => Math.ceil(size / tile) * tile;
  const [tileRows, tileColumns] = TILE_SHAPES.reduce((best, shape) =>
      padded(rows, shape[0]) * padded(columns, shape[1]) < padded(rows, best[0]) * padded(columns, best[1]) ? shape : best);
  const use = rows * columns / (padded(rows, tileRows) * padded(columns, tileColumns));
  if (use >= MIN_TILE_USE) {
    const workgroupsPerSplit = geometry.groups * Math.ceil(rows / tileRows) * Math.ceil(columns / tileColumns);
    const wanted = Math.ceil(TARGET_INVOCATIONS / (workgroupsPerSplit * WORKGROUP_INVOCATIONS));
    const {splits, rowsPerSplit} = split(reduction, wanted, MIN_PRODUCTS_PER_SPLIT);
    return {mode: 'tiles', tileRows, tileColumns, stepRows: STEP_ROWS, reductionRows: reduction, splits, rowsPerSplit,
            workgroupsPerSplit};
  }
  const rowLength = geometry.axes[geometry.axes.length - 1].diffDstSize;
  const reductionRows = reduction / rowLength;
  const wanted = Math.ceil(TARGET_INVOCATIONS / geometry.filterSize);
  const {splits, rowsPerSplit} = split(reductionRows, wanted, Math.ceil(MIN_PRODUCTS_PER_SPLIT / rowLength));
  return {mode: 'elements', tileRows: 1, tileColumns: 1, stepRows: 1, reductionRows, splits, rowsPerSplit,
          workgroupsPerSplit: Math.ceil(geometry.filterSize / WORKGROUP_INVOCATIONS)};
}

function split(rows: number, wanted: number, minRowsPerSplit: number) {
  const splits = Math.max(1, Math.min(wanted, Math.ceil(rows / Math.max(1, minRowsPerSplit)), MAX_SPLITS));
  const rowsPerSplit = Math.ceil(rows / splits);
  return {splits: Math.ceil(rows / rowsPerSplit), rowsPerSplit};
}

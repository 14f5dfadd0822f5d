import {FilterGradientGeometry, SpatialAxis, spatialAxesAs3d} from '../../src/geometry';
import {tuningFlag} from '../../src/tuning_flags';

/**
 * How the webgpu kernel lays the canonical computation out over invocations.
 *
 * Per group the filter gradient is a matrix product: rows are the group's diffDst channels
 * (DC), columns its (src channel, kernel offset) pairs (SC · Kvol), and the reduction runs over
 * R = batch × diffDst positions. 'blocks' gives each invocation a BM × 4 block of that matrix
 * (BM = 8 diffDst channels, 4 when DC < 8), reading BM + 4 values for 4 · BM products per
 * position; it sweeps whole rows of positions (the innermost axis, pointwise axes merged: see
 * sweptAxes) with the column tests solved once per row, or walks the positions one at a time
 * when rows are short. 'taps' runs one invocation per R kernel rows × T taps of one filter
 * plane instead, its src values in a window of registers sliding along each row and shared by
 * P neighbouring rows of positions. Where diffDst channels are innermost and a group has a
 * multiple of 4 of them, a 'taps' invocation takes L = 4 neighbouring diffDst channels, so one
 * src window serves 4 filter planes: a 3 × 3, stride-1 step over 2 rows then reads 4 src and
 * 2 × 4 diffDst values for 72 products, where a block reads 12 for 32. That is the plan for
 * every layer with a kernel window of at least MIN_WINDOW_TAPS taps in its two innermost axes;
 * 'blocks' keeps pointwise (1 × 1) layers, layouts with channels outermost (NCX) and channel
 * counts not a multiple of 4; and groups with fewer than 4 rows (depthwise: 1 × Kvol), where a
 * block would mostly compute padding, take 'taps' with L = 1. Either way, when the filter gives
 * too few invocations for the reduction's length, the reduction is split (partial sums, then a
 * pass that adds them).
 */
export interface WebgpuReductionPlan {
  readonly mode: 'blocks' | 'taps';
  /** 'taps': neighbouring taps of the innermost kernel axis per invocation (T, 1-4). */
  readonly taps: number;
  /** 'taps': neighbouring rows of the second-innermost kernel axis per invocation (R: R · T ≤ MAX_TAP_SUMS). */
  readonly tapRows: number;
  /**
   * 'taps': how many taps the window moves from one position to the next (m = stride ÷ dilation
   * along the innermost axis when that divides and is below T; else T, every value read anew).
   */
  readonly tapShift: number;
  /**
   * 'taps': neighbouring rows of positions (along the second-innermost diffDst axis) per reduction
   * unit, P: TAP_OUTPUT_ROWS, LANE_TAP_OUTPUT_ROWS when L > 1 (at most the height) where stride and dilation along that axis are
   * at most MAX_SHARED_ROW_STEP (1 when L > 1) and R covers the kernel's rows, so their src rows overlap (output
   * row p's kernel row r reads src row p · stride + r · dilation: P + R − 1 window rows for P · R
   * rows of products at stride and dilation 1, 2P + R − 2 at stride 2); else 1.
   */
  readonly outputRows: number;
  /** 'taps' with P > 1: the stride and the dilation along the rows' axis, baked into the shader. */
  readonly rowStride: number;
  readonly rowDilation: number;
  /**
   * 'taps': neighbouring diffDst channels per invocation (L: TAP_LANES where diffDst channels
   * are innermost and a group's divide by it, else 1); its diffDst values, products and
   * sums are vecL, its src window scalars.
   */
  readonly tapLanes: number;
  /**
   * 'taps': how many neighbouring f32 one diffDst read takes: L (4, diffDst bound as vec4s) when
   * L > 1, else 1. Every such read starts at a multiple of 4: L > 1 needs diffDst channels
   * innermost and a multiple of 4 a group, so a position's channels start at a multiple of 4, as
   * do an invocation's (g · DC + dc, dc a multiple of 4). On SwiftShader a read pays its address
   * and bounds arithmetic once, whatever its width.
   */
  readonly diffDstComponents: 1 | 4;
  /**
   * 'taps': the products run unmasked first (a value outside src or past the last row set to
   * 0, every product added) and the split runs again with every product masked only when a sum
   * came out non-finite (see FilterGradientTapsProgram). Where the window slides by one tap
   * (m = 1) or L > 1, a position reads few window values for its products and dropping the
   * products' masks saves more than the reads' value masks and the check cost; at m ≥ 2 with
   * one channel it does not.
   */
  readonly unmaskedFirst: boolean;
  /**
   * 'taps': units of src rows (see srcRowUnitRows): a unit's P diffDst rows take the src rows
   * [stride · P · u, stride · P · (u + 1)) and a position the stride's src columns from
   * stride · px, each src value read once and none in a pad; a src value's taps that belong to a
   * neighbouring diffDst row or position take that one's diffDst value.
   */
  readonly srcRowUnits: boolean;
  /** 'taps' with srcRowUnits: the strides along the rows' and the positions' axes (baked into the shader). */
  readonly unitStrides: readonly [number, number];
  /** 'taps' with srcRowUnits: the begin pads along the rows' and the positions' axes (baked into the shader). */
  readonly unitBeginPads: readonly [number, number];
  /**
   * 'taps' with srcRowUnits: the diffDst rows besides the unit's own whose kernel rows reach into
   * the unit's src rows (neighboursOf): the row before (at stride 2, no begin pad), the row after
   * (a begin pad), both, or none (the unit is the whole image, or a kernel row meets one diffDst
   * row).
   */
  readonly unitNeighbourRows: Neighbours;
  /**
   * 'taps' with srcRowUnits: likewise the positions besides its own whose taps reach into a
   * position's src columns; none where rows are one position wide, so that with neighbours a
   * row's first position is never also its last.
   */
  readonly neighbourPositions: Neighbours;
  /** 'blocks': diffDst channels per block (BM). */
  readonly blockRows: number;
  /** 'blocks': whether the block sweeps rows of positions (reduction units are rows) or walks single positions. */
  readonly rowSweep: boolean;
  /** Invocations of one split: 'blocks' G · ⌈DC / BM⌉ · ⌈SC · Kvol / 4⌉; 'taps' filter planes / L · ⌈Kh / R⌉ · ⌈Kw / T⌉. */
  readonly blocksPerSplit: number;
  /** Reduction units: rows of positions (R / swept row length), or all of R when 'blocks' walks positions. */
  readonly reductionRows: number;
  readonly splits: number;
  readonly rowsPerSplit: number;
  /** Workgroups of pass 1 (see workgroupsOf). */
  readonly workgroups: number;
  /** Invocations of pass 1 that each workgroup runs (a multiple of 4, at most WORKGROUP_INVOCATIONS; the rest return). */
  readonly invocationsPerWorkgroup: number;
}

/** Which neighbours of a diffDst position (or row) along an axis also take a src value's taps (see neighboursOf). */
export type Neighbours = 'none' | 'before' | 'after' | 'both';

export const WORKGROUP_INVOCATIONS = 64;
/**
 * Workgroups pass 1 spreads its invocations over at least (when it has 4 for each): a CPU
 * adapter runs a workgroup on one thread, so 64 invocations in one workgroup run on one core.
 * Two keep this machine's two SwiftShader threads busy, and more, smaller workgroups cost more
 * here than they spread (docs/webgpu.md); a CPU adapter with more threads wants as many.
 */
const MIN_WORKGROUPS = 2;
/** Invocations a workgroup takes at least, and their multiple: SwiftShader runs invocations in groups of 4 lanes. */
const MIN_WORKGROUP_SHARE = 4;
/**
 * Columns of a block. 8 × 8 blocks (16 loads for 64 products) never finished compiling on
 * SwiftShader (its shader compiler ran past Chromium's GPU watchdog and the device was lost).
 */
export const BLOCK_COLUMNS = 4;
/** Tuning flag: the shortest row of positions 'blocks' sweeps (default MIN_SWEPT_ROW; 0: always, a huge value: never). */
export const CONV_BACKPROP_FILTERS_WEBGPU_MIN_SWEPT_ROW = 'CONV_BACKPROP_FILTERS_WEBGPU_MIN_SWEPT_ROW';
/**
 * 'blocks' sweeps rows of at least this many positions (after sweptAxes merges pointwise axes)
 * and walks the positions one by one below it: a swept row pays its set-up (row coordinates,
 * per-column row tests, three stretches) once, which short rows (MNIST's 8 to 11 positions at
 * 5×5 and 3×3) do not win back.
 */
const MIN_SWEPT_ROW = 12;
/**
 * Tuning flag: rows of positions a 'taps' reduction unit takes at most (default 0: the plan's
 * TAP_OUTPUT_ROWS or LANE_TAP_OUTPUT_ROWS; 1 turns the shared rows off).
 */
export const CONV_BACKPROP_FILTERS_WEBGPU_TAP_OUTPUT_ROWS = 'CONV_BACKPROP_FILTERS_WEBGPU_TAP_OUTPUT_ROWS';
/**
 * Rows of positions a 'taps' unit over one diffDst channel takes (see outputRows): 4 rows
 * of a 3 × 3 kernel share a window of 6 src rows, 6 src and 4 diffDst reads a position for 36
 * products; on SwiftShader more rows are no faster.
 */
const TAP_OUTPUT_ROWS = 4;
/** Rows of positions a 'taps' unit over 4 diffDst channels takes (more spill its 4-wide sums). */
const LANE_TAP_OUTPUT_ROWS = 2;
/**
 * The largest stride or dilation along the rows' axis for which a 'taps' unit with L = 1 takes
 * P rows (with L = 4, 1: the 9 window rows of a stride-2 unit with 4 sums per tap spill on
 * SwiftShader, and one row a unit is faster).
 */
const MAX_SHARED_ROW_STEP = 2;
/** Tuning flag: 1 (the default) runs the 'taps' layers srcRowUnitRows takes in units of src rows; 0 never. */
export const CONV_BACKPROP_FILTERS_WEBGPU_SRC_ROW_UNITS = 'CONV_BACKPROP_FILTERS_WEBGPU_SRC_ROW_UNITS';
/** Rows of positions a unit of src rows takes at most: an image up to this height is one unit. */
const MAX_SRC_ROW_UNIT_ROWS = 8;
/**
 * Rows of positions a unit of src rows takes in taller images, where they divide the height: on
 * SwiftShader 4 rows and their neighbouring one run faster than 8 and theirs, and 2 no faster
 * than 8 (docs/webgpu.md).
 */
const MID_IMAGE_UNIT_ROWS = 4;
/** Tuning flag: the invocations a split aims at (default TARGET_INVOCATIONS). */
export const CONV_BACKPROP_FILTERS_WEBGPU_TARGET_INVOCATIONS = 'CONV_BACKPROP_FILTERS_WEBGPU_TARGET_INVOCATIONS';
/** Tuning flag: 1 (the default) lets 'taps' run its products unmasked first where the plan chooses to (unmaskedFirst); 0 never does. */
export const CONV_BACKPROP_FILTERS_WEBGPU_UNMASKED_FIRST = 'CONV_BACKPROP_FILTERS_WEBGPU_UNMASKED_FIRST';
/** Tuning flag: 1 (the default) reads an invocation's 4 diffDst channels at once where 'taps' takes 4 (diffDstComponents); 0 as 4 f32s. */
export const CONV_BACKPROP_FILTERS_WEBGPU_VEC4_READS = 'CONV_BACKPROP_FILTERS_WEBGPU_VEC4_READS';
/** Tuning flag: 1 (the default) runs layers with a kernel window as 'taps' over 4 diffDst channels; 0 keeps them in 'blocks'. */
export const CONV_BACKPROP_FILTERS_WEBGPU_LANE_TAPS = 'CONV_BACKPROP_FILTERS_WEBGPU_LANE_TAPS';
/**
 * The fewest taps (kernel height × width, innermost two axes) for which 'taps' over 4 diffDst
 * channels replaces 'blocks': per product it reads (P · 4 + window rows · m) / (P · R · T · 4)
 * values (0.17 at 3 × 3, stride 1, P = 2), a block (BM + 4) / (4 · BM) (0.375); at 1 × 1 the window
 * has nothing to share and reads more than the block.
 */
const MIN_WINDOW_TAPS = 4;
/** diffDst channels per 'taps' invocation where they can share a window (L). */
const TAP_LANES = 4;
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
/** Taps per 'taps' invocation at most along the innermost kernel axis. */
const MAX_TAPS = 4;
/**
 * Sums per 'taps' invocation at most (R rows × T taps), each with its window value in registers:
 * 16 keeps a 5 × 5 kernel in blocks of 5 rows × 3 + 2 taps (all its rows, so a unit's output
 * rows share the window) and a 7 × 7 one in 4 + 3 rows × 4 + 3 taps.
 */
const MAX_TAP_SUMS = 16;

/**
 * The spatial axes the programs walk: the geometry's, with neighbouring axes on which the
 * filter is a pointwise map (kernel 1, stride 1, no pads, src and diffDst the same size) and
 * which are contiguous in both tensors merged into one, so a 1×1 layer on an 8×8 image sweeps
 * rows of 64 positions, not 8 rows of 8. The filter has one offset (0) along merged axes, so
 * nothing else changes.
 */
export function sweptAxes(geometry: FilterGradientGeometry): SpatialAxis[] {
  const pointwise = (axis: SpatialAxis) => axis.kernelSize === 1 && axis.stride === 1 && axis.padBegin === 0 &&
      axis.padEnd === 0 && axis.srcSize === axis.diffDstSize;
  const axes: SpatialAxis[] = [];
  for (const axis of geometry.axes) {
    const outer = axes[axes.length - 1];
    if (outer !== undefined && pointwise(outer) && pointwise(axis) && outer.srcStride === axis.srcStride * axis.srcSize &&
        outer.diffDstStride === axis.diffDstStride * axis.diffDstSize) {
      axes[axes.length - 1] = {...axis, srcSize: outer.srcSize * axis.srcSize, diffDstSize: outer.diffDstSize * axis.diffDstSize};
    } else {
      axes.push(axis);
    }
  }
  return axes;
}

export function planWebgpuReduction(geometry: FilterGradientGeometry): WebgpuReductionPlan {
  const rows = geometry.diffDst.channelsPerGroup;
  const kernelVolume = geometry.axes.reduce((volume, axis) => volume * axis.kernelSize, 1);
  const columns = geometry.src.channelsPerGroup * kernelVolume;
  const positions = geometry.axes.reduce((volume, axis) => volume * axis.diffDstSize, 1);
  const reduction = geometry.batch * positions;

  const swept = sweptAxes(geometry);
  const rowLength = swept[swept.length - 1].diffDstSize;
  const [, height, width] = spatialAxesAs3d(swept);
  const targetInvocations = tuningFlag(CONV_BACKPROP_FILTERS_WEBGPU_TARGET_INVOCATIONS, TARGET_INVOCATIONS);
  const laneTaps = tuningFlag(CONV_BACKPROP_FILTERS_WEBGPU_LANE_TAPS, 1) !== 0 && geometry.diffDst.channelStride === 1 &&
      rows % TAP_LANES === 0 && height.kernelSize * width.kernelSize >= MIN_WINDOW_TAPS;
  if (rows >= MIN_BLOCK_ROWS && !laneTaps) {
    const blockRows = rows >= 8 ? 8 : 4;
    const rowSweep = rowLength >= tuningFlag(CONV_BACKPROP_FILTERS_WEBGPU_MIN_SWEPT_ROW, MIN_SWEPT_ROW);
    const blocksPerSplit = geometry.groups * Math.ceil(rows / blockRows) * Math.ceil(columns / BLOCK_COLUMNS);
    const reductionRows = rowSweep ? reduction / rowLength : reduction;
    const {splits, rowsPerSplit} = split(reductionRows, Math.ceil(targetInvocations / blocksPerSplit),
                                         Math.ceil(MIN_PRODUCTS_PER_SPLIT / (rowSweep ? rowLength : 1)));
    return {mode: 'blocks', taps: 1, tapRows: 1, tapShift: 1, outputRows: 1, rowStride: 1, rowDilation: 1, tapLanes: 1, diffDstComponents: 1, unmaskedFirst: false, srcRowUnits: false, unitStrides: [1, 1], unitBeginPads: [0, 0], unitNeighbourRows: 'none', neighbourPositions: 'none', blockRows, rowSweep, blocksPerSplit, reductionRows, splits, rowsPerSplit,
            ...workgroupsOf(blocksPerSplit, splits)};
  }
  const taps = evenBlock(width.kernelSize, MAX_TAPS);
  const tapRows = evenBlock(height.kernelSize, Math.floor(MAX_TAP_SUMS / taps));
  const tapShift = width.stride % width.dilation === 0 ? Math.min(taps, width.stride / width.dilation) : taps;
  const tapLanes = laneTaps ? TAP_LANES : 1;
  const blocksPerSplit = geometry.filterSize / (width.kernelSize * height.kernelSize) / tapLanes *
      Math.ceil(width.kernelSize / taps) * Math.ceil(height.kernelSize / tapRows);
  const maxRowStep = tapLanes === 1 ? MAX_SHARED_ROW_STEP : 1;
  const pairable = height.stride <= maxRowStep && height.dilation <= maxRowStep && tapRows === height.kernelSize;
  const wantedRows = tuningFlag(CONV_BACKPROP_FILTERS_WEBGPU_TAP_OUTPUT_ROWS, 0) || (tapLanes > 1 ? LANE_TAP_OUTPUT_ROWS : TAP_OUTPUT_ROWS);
  const srcRowRows = tapLanes === 1 && tapRows === height.kernelSize && taps === width.kernelSize ?
      srcRowUnitRows(height, width) : 0;
  const unitNeighbourRows = srcRowRows > 0 && srcRowRows < height.diffDstSize ? neighboursOf(height) ?? 'none' : 'none';
  const outputRows = srcRowRows || (pairable ? Math.max(1, Math.min(wantedRows, height.diffDstSize)) : 1);
  const reductionRows = reduction / rowLength / height.diffDstSize * Math.ceil(height.diffDstSize / outputRows);
  const {splits, rowsPerSplit} = split(reductionRows, Math.ceil(targetInvocations / blocksPerSplit),
                                       Math.ceil(MIN_PRODUCTS_PER_SPLIT / (rowLength * outputRows)));
  return {mode: 'taps', taps, tapRows, tapShift, outputRows, rowStride: outputRows > 1 ? height.stride : 1,
          rowDilation: outputRows > 1 ? height.dilation : 1, tapLanes,
          diffDstComponents: tapLanes > 1 && tuningFlag(CONV_BACKPROP_FILTERS_WEBGPU_VEC4_READS, 1) !== 0 ? 4 : 1,
          unmaskedFirst: tuningFlag(CONV_BACKPROP_FILTERS_WEBGPU_UNMASKED_FIRST, 1) !== 0 && (tapLanes > 1 || tapShift === 1) && !srcRowRows,
          srcRowUnits: srcRowRows > 0, unitStrides: srcRowRows > 0 ? [height.stride, width.stride] : [1, 1], unitBeginPads: srcRowRows > 0 ? [height.padBegin, width.padBegin] : [0, 0], unitNeighbourRows,
          neighbourPositions: srcRowRows > 0 && width.diffDstSize > 1 ? neighboursOf(width) ?? 'none' : 'none', blockRows: 1, rowSweep: true, blocksPerSplit, reductionRows, splits, rowsPerSplit,
          ...workgroupsOf(blocksPerSplit, splits)};
}

/**
 * Which diffDst positions besides i along an axis take taps of the src values at stride · i …
 * stride · i + stride − 1: src index stride · i + u is tap u + padBegin − stride · k of position
 * i + k, so k runs over [⌈(padBegin − kernel + 1) / stride⌉, ⌊(stride − 1 + padBegin) / stride⌋];
 * 'before' where that reaches −1, 'after' where it reaches +1, null where it reaches further.
 */
function neighboursOf(axis: SpatialAxis): Neighbours | null {
  const first = Math.ceil((axis.padBegin - axis.kernelSize + 1) / axis.stride);
  const last = Math.floor((axis.stride - 1 + axis.padBegin) / axis.stride);
  if (first < -1 || first > 0 || last < 0 || last > 1) {
    return null;
  }
  return first < 0 ? (last > 0 ? 'both' : 'before') : (last > 0 ? 'after' : 'none');
}

/**
 * Rows of positions P of a unit of src rows (WebgpuReductionPlan.srcRowUnits), or 0 where the
 * layer does not take them. A one-channel 'taps' invocation covering the whole kernel plane
 * slides a window over each unit's src rows, pads and the rows shared with the next unit
 * included: at stride 2 over an 8 × 8 image into 4 × 4 with the pad at the end (TF's 'same'), 81
 * src reads for 64 values; at stride 1 over 4 × 4 with pads of 1, 36 for 16. Where src tiles
 * exactly into strides of diffDst along both axes (src = stride × diffDst, no dilation) and a src
 * value's taps belong to its own position and at most one neighbour on either side
 * (neighboursOf: a 3 × 3 kernel at stride 2 with a begin pad of 0, TF's 'same', or 1, PyTorch's;
 * at stride 1 with pads of 1), units of src rows read each src value once and each diffDst
 * value once, plus the neighbouring rows' where a unit is not the whole image: a stride-2 3 × 3
 * unit of 4 rows reads 16 src and 4 diffDst values a position for 33 products. P is the image's
 * height up to MAX_SRC_ROW_UNIT_ROWS (no neighbouring rows), else MID_IMAGE_UNIT_ROWS or the
 * largest divisor of the height up to MAX_SRC_ROW_UNIT_ROWS (a unit never runs past its image;
 * fewer rows would read the neighbouring rows for too few of their own). At stride 1 along the
 * rows, the neighbouring rows would read as many values as the window does, so only images up to
 * MAX_SRC_ROW_UNIT_ROWS high, one unit each, take units of src rows.
 */
function srcRowUnitRows(height: SpatialAxis, width: SpatialAxis): number {
  const tiles = (axis: SpatialAxis) => axis.dilation === 1 && axis.srcSize === axis.stride * axis.diffDstSize && neighboursOf(axis) !== null;
  if (tuningFlag(CONV_BACKPROP_FILTERS_WEBGPU_SRC_ROW_UNITS, 1) === 0 || !tiles(height) || !tiles(width) ||
      (height.stride === 1 && height.diffDstSize > MAX_SRC_ROW_UNIT_ROWS)) {
    return 0;
  }
  const unitRows = [MID_IMAGE_UNIT_ROWS, ...Array.from({length: MAX_SRC_ROW_UNIT_ROWS - MID_IMAGE_UNIT_ROWS}, (_, i) => MAX_SRC_ROW_UNIT_ROWS - i)];
  return height.diffDstSize <= MAX_SRC_ROW_UNIT_ROWS ? height.diffDstSize :
                                                       unitRows.find(rows => height.diffDstSize % rows === 0) ?? 0;
}

/** The block size for `size` elements in blocks of at most `max`, as even as the blocks allow (5 in 3 + 2). */
function evenBlock(size: number, max: number): number {
  return Math.ceil(size / Math.ceil(size / max));
}

/**
 * Pass 1's workgroups: the splits' invocations one after another, split after split, spread
 * evenly over the workgroups, as many a workgroup as fit (WORKGROUP_INVOCATIONS) but over at
 * least MIN_WORKGROUPS workgroups where there are enough invocations for 4 each. Packed, a split
 * of 8 filter planes does not leave 56 invocations of its own workgroup idle (SwiftShader pays
 * for each workgroup it starts, busy or not); spread, 64 invocations do not all land in one
 * workgroup, which one thread runs alone.
 */
function workgroupsOf(blocksPerSplit: number, splits: number) {
  const invocations = blocksPerSplit * splits;
  const workgroups = Math.max(Math.ceil(invocations / WORKGROUP_INVOCATIONS),
                              Math.min(MIN_WORKGROUPS, Math.ceil(invocations / MIN_WORKGROUP_SHARE)));
  const invocationsPerWorkgroup = Math.ceil(invocations / workgroups / MIN_WORKGROUP_SHARE) * MIN_WORKGROUP_SHARE;
  return {workgroups: Math.ceil(invocations / invocationsPerWorkgroup), invocationsPerWorkgroup};
}

function split(rows: number, wanted: number, minRowsPerSplit: number) {
  const splits = Math.max(1, Math.min(wanted, Math.ceil(rows / Math.max(1, minRowsPerSplit)), MAX_SPLITS));
  const rowsPerSplit = Math.ceil(rows / splits);
  return {splits: Math.ceil(rows / rowsPerSplit), rowsPerSplit};
}

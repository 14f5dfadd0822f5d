import {FilterGradientGeometry, SpatialAxis, spatialAxesAs3d} from '../../src/geometry';
import {tunedProfile, tuningFlag} from '../../src/tuning_flags';


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
 * every layer with a kernel window of at least the profile's minWindowTaps taps in its two innermost axes;
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
  /** 'taps': neighbouring rows of the second-innermost kernel axis per invocation (R: R · T ≤ maxTapSums). */
  readonly tapRows: number;
  /**
   * 'taps': how many taps the window moves from one position to the next (m = stride ÷ dilation
   * along the innermost axis when that divides and is below T; else T, every value read anew).
   */
  readonly tapShift: number;
  /**
   * 'taps': neighbouring rows of positions (along the second-innermost diffDst axis) per reduction
   * unit, P: the profile's tapOutputRows, laneTapOutputRows when L > 1 (at most the height) where stride and dilation along that axis are
   * at most the profile's maxSharedRowStep (1 when L > 1) and R covers the kernel's rows, so their src rows overlap (output
   * row p's kernel row r reads src row p · stride + r · dilation: P + R − 1 window rows for P · R
   * rows of products at stride and dilation 1, 2P + R − 2 at stride 2); else 1.
   */
  readonly outputRows: number;
  /** 'taps' with P > 1: the stride and the dilation along the rows' axis, baked into the shader. */
  readonly rowStride: number;
  readonly rowDilation: number;
  /**
   * 'taps': neighbouring diffDst channels per invocation (L: the profile's tapLanes where diffDst channels
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
/** Columns of a block (baked into the blocks program). */
export const BLOCK_COLUMNS = 4;

/**
 * The thresholds the webgpu planner reads. DEFAULT_WEBGPU_PROFILE holds the values tuned on
 * SwiftShader's Vulkan (a CPU adapter: invocations run as 4-lane groups on a few threads;
 * docs/webgpu.md gives the figures); a device with other costs gets its own profile.
 */
export interface WebgpuProfile {
  /**
   * Workgroups pass 1 spreads its invocations over at least (when it has minWorkgroupShare for
   * each): a CPU adapter runs a workgroup on one thread, so 64 invocations in one workgroup run
   * on one core; the adapter's thread count is the value (2 on this machine's SwiftShader).
   */
  readonly minWorkgroups: number;
  /** Invocations a workgroup takes at least, and their multiple: the adapter's lane group (4 on SwiftShader). */
  readonly minWorkgroupShare: number;
  /**
   * 'blocks' sweeps rows of at least this many positions (after sweptAxes merges pointwise axes)
   * and walks shorter rows position by position: a swept row pays its set-up (row coordinates,
   * per-column row tests, three stretches) once, which short rows do not win back.
   */
  readonly minSweptRow: number;
  /**
   * Rows of positions a 'taps' unit over one diffDst channel takes (P): 4 rows of a 3 × 3 kernel
   * share a window of 6 src rows, 6 src and 4 diffDst reads a position for 36 products.
   */
  readonly tapOutputRows: number;
  /** Rows of positions a 'taps' unit over 4 diffDst channels takes (more spill its 4-wide sums). */
  readonly laneTapOutputRows: number;
  /**
   * The largest stride or dilation along the rows' axis for which a one-channel 'taps' unit takes
   * P rows (over 4 channels, 1: a stride-2 unit's window rows with 4 sums a tap spill).
   */
  readonly maxSharedRowStep: number;
  /** Whether layers whose src tiles into strides of diffDst run in units of src rows (srcRowUnitRows). */
  readonly srcRowUnits: boolean;
  /** Rows of positions a unit of src rows takes at most: an image up to this height is one unit. */
  readonly maxSrcRowUnitRows: number;
  /** Rows of positions a unit of src rows takes in taller images, where they divide the height. */
  readonly midImageUnitRows: number;
  /** Whether layers with a kernel window run as 'taps' over tapLanes diffDst channels. */
  readonly laneTaps: boolean;
  /**
   * The fewest taps (kernel height × width, innermost two axes) for which 'taps' over 4 diffDst
   * channels replaces 'blocks': per product it reads (P · 4 + window rows · m) / (P · R · T · 4)
   * values (0.17 at 3 × 3, stride 1, P = 2), a block (BM + 4) / (4 · BM) (0.375); at 1 × 1 the
   * window has nothing to share and reads more than the block.
   */
  readonly minWindowTaps: number;
  /** diffDst channels per 'taps' invocation where they share a window (L; the programs' vec4). */
  readonly tapLanes: number;
  /** Whether an invocation's tapLanes diffDst channels are read as one vec4. */
  readonly vec4Reads: boolean;
  /** Whether 'taps' may run its products unmasked first where the plan chooses to (unmaskedFirst). */
  readonly unmaskedFirst: boolean;
  /** Rows of a group below which 'taps' computes less padding than 4-row blocks. */
  readonly minBlockRows: number;
  /**
   * Invocations a split aims at before the reduction is split further: every split adds its
   * partial filter to the second pass. A CPU adapter wants enough to keep its threads busy; a
   * discrete GPU wants more in flight: this is the value to raise there.
   */
  readonly targetInvocations: number;
  /** A split sums at least this many products per output, so the second pass stays small. */
  readonly minProductsPerSplit: number;
  readonly maxSplits: number;
  /** Taps per 'taps' invocation at most along the innermost kernel axis. */
  readonly maxTaps: number;
  /**
   * Sums per 'taps' invocation at most (R rows × T taps), each with its window value in registers:
   * 16 keeps a 5 × 5 kernel in blocks of 5 rows × 3 + 2 taps (all its rows, so a unit's output
   * rows share the window) and a 7 × 7 one in 4 + 3 rows × 4 + 3 taps.
   */
  readonly maxTapSums: number;
}

/** Today's thresholds, tuned on SwiftShader's Vulkan in Chromium. */
export const DEFAULT_WEBGPU_PROFILE: WebgpuProfile = Object.freeze({
  minWorkgroups: 2, minWorkgroupShare: 4, minSweptRow: 12, tapOutputRows: 4, laneTapOutputRows: 2, maxSharedRowStep: 2,
  srcRowUnits: true, maxSrcRowUnitRows: 8, midImageUnitRows: 4, laneTaps: true, minWindowTaps: 4, tapLanes: 4,
  vec4Reads: true, unmaskedFirst: true, minBlockRows: 4, targetInvocations: 2048, minProductsPerSplit: 256, maxSplits: 256,
  maxTaps: 4, maxTapSums: 16,
});

/**
 * The tuning flags (tfjs flags the benches set with `--variant FLAG=VALUE`) and the profile field
 * each sets (tunedWebgpuProfile; a boolean field takes 1 or 0). Besides these,
 * CONV_BACKPROP_FILTERS_WEBGPU_TAP_OUTPUT_ROWS, when not 0, sets both tapOutputRows and
 * laneTapOutputRows (1 turns the shared rows off).
 */
export const WEBGPU_TUNING_FLAGS = Object.freeze({
  minSweptRow: 'CONV_BACKPROP_FILTERS_WEBGPU_MIN_SWEPT_ROW',
  srcRowUnits: 'CONV_BACKPROP_FILTERS_WEBGPU_SRC_ROW_UNITS',
  targetInvocations: 'CONV_BACKPROP_FILTERS_WEBGPU_TARGET_INVOCATIONS',
  unmaskedFirst: 'CONV_BACKPROP_FILTERS_WEBGPU_UNMASKED_FIRST',
  vec4Reads: 'CONV_BACKPROP_FILTERS_WEBGPU_VEC4_READS',
  laneTaps: 'CONV_BACKPROP_FILTERS_WEBGPU_LANE_TAPS',
});
export const CONV_BACKPROP_FILTERS_WEBGPU_UNMASKED_FIRST = WEBGPU_TUNING_FLAGS.unmaskedFirst;
export const CONV_BACKPROP_FILTERS_WEBGPU_VEC4_READS = WEBGPU_TUNING_FLAGS.vec4Reads;
export const CONV_BACKPROP_FILTERS_WEBGPU_TAP_OUTPUT_ROWS = 'CONV_BACKPROP_FILTERS_WEBGPU_TAP_OUTPUT_ROWS';

/** `base` with the tuning flags applied (each registered with the base's value). */
export function tunedWebgpuProfile(base: WebgpuProfile = DEFAULT_WEBGPU_PROFILE): WebgpuProfile {
  const tuned = tunedProfile(base, WEBGPU_TUNING_FLAGS);
  const outputRows = tuningFlag(CONV_BACKPROP_FILTERS_WEBGPU_TAP_OUTPUT_ROWS, 0);
  return outputRows === 0 ? tuned : Object.freeze({...tuned, tapOutputRows: outputRows, laneTapOutputRows: outputRows});
}

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

export function planWebgpuReduction(geometry: FilterGradientGeometry, profile: WebgpuProfile = tunedWebgpuProfile()): WebgpuReductionPlan {
  const rows = geometry.diffDst.channelsPerGroup;
  const kernelVolume = geometry.axes.reduce((volume, axis) => volume * axis.kernelSize, 1);
  const columns = geometry.src.channelsPerGroup * kernelVolume;
  const positions = geometry.axes.reduce((volume, axis) => volume * axis.diffDstSize, 1);
  const reduction = geometry.batch * positions;

  const swept = sweptAxes(geometry);
  const rowLength = swept[swept.length - 1].diffDstSize;
  const [, height, width] = spatialAxesAs3d(swept);
  const targetInvocations = profile.targetInvocations;
  const laneTaps = profile.laneTaps && geometry.diffDst.channelStride === 1 &&
      rows % profile.tapLanes === 0 && height.kernelSize * width.kernelSize >= profile.minWindowTaps;
  if (rows >= profile.minBlockRows && !laneTaps) {
    const blockRows = rows >= 8 ? 8 : 4;
    const rowSweep = rowLength >= profile.minSweptRow;
    const blocksPerSplit = geometry.groups * Math.ceil(rows / blockRows) * Math.ceil(columns / BLOCK_COLUMNS);
    const reductionRows = rowSweep ? reduction / rowLength : reduction;
    const {splits, rowsPerSplit} = split(reductionRows, Math.ceil(targetInvocations / blocksPerSplit),
                                         Math.ceil(profile.minProductsPerSplit / (rowSweep ? rowLength : 1)), profile.maxSplits);
    return {mode: 'blocks', taps: 1, tapRows: 1, tapShift: 1, outputRows: 1, rowStride: 1, rowDilation: 1, tapLanes: 1, diffDstComponents: 1, unmaskedFirst: false, srcRowUnits: false, unitStrides: [1, 1], unitBeginPads: [0, 0], unitNeighbourRows: 'none', neighbourPositions: 'none', blockRows, rowSweep, blocksPerSplit, reductionRows, splits, rowsPerSplit,
            ...workgroupsOf(blocksPerSplit, splits, profile)};
  }
  const taps = evenBlock(width.kernelSize, profile.maxTaps);
  const tapRows = evenBlock(height.kernelSize, Math.floor(profile.maxTapSums / taps));
  const tapShift = width.stride % width.dilation === 0 ? Math.min(taps, width.stride / width.dilation) : taps;
  const tapLanes = laneTaps ? profile.tapLanes : 1;
  const blocksPerSplit = geometry.filterSize / (width.kernelSize * height.kernelSize) / tapLanes *
      Math.ceil(width.kernelSize / taps) * Math.ceil(height.kernelSize / tapRows);
  const maxRowStep = tapLanes === 1 ? profile.maxSharedRowStep : 1;
  const pairable = height.stride <= maxRowStep && height.dilation <= maxRowStep && tapRows === height.kernelSize;
  const wantedRows = tapLanes > 1 ? profile.laneTapOutputRows : profile.tapOutputRows;
  const srcRowRows = tapLanes === 1 && tapRows === height.kernelSize && taps === width.kernelSize ?
      srcRowUnitRows(height, width, profile) : 0;
  const unitNeighbourRows = srcRowRows > 0 && srcRowRows < height.diffDstSize ? neighboursOf(height) ?? 'none' : 'none';
  const outputRows = srcRowRows || (pairable ? Math.max(1, Math.min(wantedRows, height.diffDstSize)) : 1);
  const reductionRows = reduction / rowLength / height.diffDstSize * Math.ceil(height.diffDstSize / outputRows);
  const {splits, rowsPerSplit} = split(reductionRows, Math.ceil(targetInvocations / blocksPerSplit),
                                       Math.ceil(profile.minProductsPerSplit / (rowLength * outputRows)), profile.maxSplits);
  return {mode: 'taps', taps, tapRows, tapShift, outputRows, rowStride: outputRows > 1 ? height.stride : 1,
          rowDilation: outputRows > 1 ? height.dilation : 1, tapLanes,
          diffDstComponents: tapLanes > 1 && profile.vec4Reads ? 4 : 1,
          unmaskedFirst: profile.unmaskedFirst && (tapLanes > 1 || tapShift === 1) && !srcRowRows,
          srcRowUnits: srcRowRows > 0, unitStrides: srcRowRows > 0 ? [height.stride, width.stride] : [1, 1], unitBeginPads: srcRowRows > 0 ? [height.padBegin, width.padBegin] : [0, 0], unitNeighbourRows,
          neighbourPositions: srcRowRows > 0 && width.diffDstSize > 1 ? neighboursOf(width) ?? 'none' : 'none', blockRows: 1, rowSweep: true, blocksPerSplit, reductionRows, splits, rowsPerSplit,
          ...workgroupsOf(blocksPerSplit, splits, profile)};
}

/** The plan as the verbose line prints it: the mode, units of src rows where it takes them, the splits. */
export function webgpuPlanSummary(plan: WebgpuReductionPlan): string {
  return `${plan.mode}${plan.srcRowUnits ? ' src-row-units' : ''} splits=${plan.splits}`;
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
 * height up to maxSrcRowUnitRows (no neighbouring rows), else midImageUnitRows or the
 * largest divisor of the height up to maxSrcRowUnitRows (a unit never runs past its image;
 * fewer rows would read the neighbouring rows for too few of their own). At stride 1 along the
 * rows, the neighbouring rows would read as many values as the window does, so only images up to
 * maxSrcRowUnitRows high, one unit each, take units of src rows.
 */
function srcRowUnitRows(height: SpatialAxis, width: SpatialAxis, profile: WebgpuProfile): number {
  const tiles = (axis: SpatialAxis) => axis.dilation === 1 && axis.srcSize === axis.stride * axis.diffDstSize && neighboursOf(axis) !== null;
  const {maxSrcRowUnitRows, midImageUnitRows} = profile;
  if (!profile.srcRowUnits || !tiles(height) || !tiles(width) || (height.stride === 1 && height.diffDstSize > maxSrcRowUnitRows)) {
    return 0;
  }
  const unitRows = [midImageUnitRows, ...Array.from({length: maxSrcRowUnitRows - midImageUnitRows}, (_, i) => maxSrcRowUnitRows - i)];
  return height.diffDstSize <= maxSrcRowUnitRows ? height.diffDstSize :
                                                       unitRows.find(rows => height.diffDstSize % rows === 0) ?? 0;
}

/** The block size for `size` elements in blocks of at most `max`, as even as the blocks allow (5 in 3 + 2). */
function evenBlock(size: number, max: number): number {
  return Math.ceil(size / Math.ceil(size / max));
}

/**
 * Pass 1's workgroups: the splits' invocations one after another, split after split, spread
 * evenly over the workgroups, as many a workgroup as fit (WORKGROUP_INVOCATIONS) but over at
 * least the profile's minWorkgroups workgroups where there are enough invocations for minWorkgroupShare each. Packed, a split
 * of 8 filter planes does not leave 56 invocations of its own workgroup idle (SwiftShader pays
 * for each workgroup it starts, busy or not); spread, 64 invocations do not all land in one
 * workgroup, which one thread runs alone.
 */
function workgroupsOf(blocksPerSplit: number, splits: number, profile: WebgpuProfile) {
  const invocations = blocksPerSplit * splits;
  const share = profile.minWorkgroupShare;
  const workgroups = Math.max(Math.ceil(invocations / WORKGROUP_INVOCATIONS), Math.min(profile.minWorkgroups, Math.ceil(invocations / share)));
  const invocationsPerWorkgroup = Math.ceil(invocations / workgroups / share) * share;
  return {workgroups: Math.ceil(invocations / invocationsPerWorkgroup), invocationsPerWorkgroup};
}

function split(rows: number, wanted: number, minRowsPerSplit: number, maxSplits: number) {
  const splits = Math.max(1, Math.min(wanted, Math.ceil(rows / Math.max(1, minRowsPerSplit)), maxSplits));
  const rowsPerSplit = Math.ceil(rows / splits);
  return {splits: Math.ceil(rows / rowsPerSplit), rowsPerSplit};
}

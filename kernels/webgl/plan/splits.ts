import type {FilterGradientGeometry} from '../../../src/geometry';
import {tunedWebglProfile, WebglProfile} from './device';

/**
 * How the webgl kernel splits the reduction over batch × diffDst positions. One fragment per
 * (filter element, split) sums `rowsPerSplit` rows (a row = all positions along the innermost
 * spatial axis, for one batch index and outer position); a second pass adds the splits.
 *
 * tfjs's own filter-gradient shader runs the whole reduction in one fragment per filter
 * element: with few filter elements (depthwise, 1×1) and a long reduction that leaves most of
 * the GPU idle. Splitting until there are about the profile's targetFragments fragments, but
 * never below its minProducts multiply-adds per fragment, keeps every unit busy without
 * drowning short reductions in a second pass.
 *
 * The second pass reads every filter element once per split, while pass 1 reads each position
 * about once per fragment, and a fragment writes many elements (32 for dense loops): with many
 * elements and few positions (1×1 layers on 4×4–16×16 images, 3×3 on 3×3 outputs) pass 2 would
 * read more than pass 1. So a split also sums at least MIN_SPLIT_POSITIONS_PER_OUTPUT positions
 * per element its fragment writes (minPositionsPerOutput), which bounds pass 2's reads to about a fraction of pass 1's
 * whatever the shape, and leaves long reductions (whose splits are long already) as they were.
 */
export interface ReductionPlan {
  /**
   * What one fragment sums (see FilterGradientProgram): a 2×2 tile of (src channel, diffDst
   * channel) when each group has at least two of both; else 4 neighbouring taps of the
   * innermost kernel axis when it has at least two; else one filter element.
   */
  readonly mode: 'packedTiles' | 'channelTiles' | 'kernelTaps' | 'single';
  /**
   * 'kernelTaps': how many taps the window moves from one position to the next (stride ÷
   * dilation along the innermost axis when that divides, else 4: all taps read anew).
   */
  readonly tapShift: number;
  /** Rows of the reduction: batch × diffDst spatial sizes except the innermost. */
  readonly rows: number;
  /** Positions per row (the innermost diffDst spatial size). */
  readonly rowLength: number;
  readonly splits: number;
  readonly rowsPerSplit: number;
}

/** A split of the reduction's rows (see ReductionPlan), as every pass plans one. */
export type RowSplit = Pick<ReductionPlan, 'rows' | 'rowLength' | 'splits' | 'rowsPerSplit'>;

export {CONV_BACKPROP_FILTERS_WEBGL_MIN_SPLIT_POSITIONS_PER_OUTPUT, CONV_BACKPROP_FILTERS_WEBGL_TARGET_FRAGMENTS} from './device';

/** The single-target programs' plan for a problem, under `profile` (default: today's, tuning flags applied). */
export function planReduction(geometry: FilterGradientGeometry, profile: WebglProfile = tunedWebglProfile()): ReductionPlan {
  const innermost = geometry.axes[geometry.axes.length - 1];
  const denseTiles = geometry.src.channelsPerGroup >= 2 && geometry.diffDst.channelsPerGroup >= 2;
  const mode = denseTiles && packedTexelsAlign(geometry)                                    ? 'packedTiles' :
      denseTiles                                                                        ? 'channelTiles' :
      innermost.kernelSize >= 2                                                         ? 'kernelTaps' :
                                                                                          'single';
  const tapShift = innermost.stride % innermost.dilation === 0 ? Math.min(4, innermost.stride / innermost.dilation) : 4;
  const outputsPerFragment = mode === 'channelTiles' || mode === 'packedTiles' ? 4 : mode === 'kernelTaps' ? Math.min(4, innermost.kernelSize) : 1;
  return {mode, tapShift, ...splitReduction(geometry, outputsPerFragment, profile.split)};
}

/**
 * The split of the reduction (see ReductionPlan) for fragments that sum `outputsPerFragment`
 * filter elements each, into at most `split.maxSplits` and `maxSplits` splits, aiming at
 * `targetFragments` fragments (default: `split.targetFragments`).
 */
export function splitReduction(geometry: FilterGradientGeometry, outputsPerFragment: number, split: WebglProfile['split'],
                               maxSplits = Infinity, targetFragments = split.targetFragments):
    RowSplit {
  const sizes = geometry.axes.map(axis => axis.diffDstSize);
  const rowLength = sizes[sizes.length - 1];
  const rows = geometry.batch * sizes.slice(0, -1).reduce((a, b) => a * b, 1);
  const minPositions = Math.max(split.minProducts / outputsPerFragment, outputsPerFragment * split.minPositionsPerOutput);
  const minRowsPerSplit = Math.ceil(minPositions / rowLength);
  const wanted = Math.ceil(targetFragments * outputsPerFragment / geometry.filterSize);
  const splits = Math.max(1, Math.min(wanted, Math.ceil(rows / minRowsPerSplit), split.maxSplits, maxSplits));
  const rowsPerSplit = Math.ceil(rows / splits);
  return {rows, rowLength, splits: Math.ceil(rows / rowsPerSplit), rowsPerSplit};
}

/**
 * Whether 'packedTiles' can read this problem: channels-last data (packed 2-D views put two
 * channels of two positions in a texel) and every group's first channel even on both sides,
 * so a tile's two channels share a texel.
 */
export function packedTexelsAlign(geometry: FilterGradientGeometry): boolean {
  const evenStarts = (channelsPerGroup: number) => geometry.groups === 1 || channelsPerGroup % 2 === 0;
  return geometry.dataFormat === 'NXC' && evenStarts(geometry.src.channelsPerGroup) &&
      evenStarts(geometry.diffDst.channelsPerGroup);
}

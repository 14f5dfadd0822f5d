import type {FilterGradientGeometry} from '../../../src/geometry';
import {ArrangeChannelTexelsProgram, ArrangeTargetsProgram, channelsInnermost, TargetLocation} from '../finish/arrange_targets';
import {ArrangeTilesProgram} from '../finish/arrange_tiles';
import {FilterGradientProgram} from '../passes/single_target';
import {SumSplitsProgram} from '../finish/sum_splits';
import {DENSE_ROWS} from '../passes/rows/dense';
import {DEPTHWISE_ROWS} from '../passes/rows/depthwise';
import type {MultiTargetParams, MultiTargetPass} from '../passes/pass';
import {planReduction, ReductionPlan} from './splits';
import {SUM_TARGET_SPLITS_PROGRAM, TargetSplits} from '../finish/sum_target_splits';
import {ONE_CHANNEL_ROWS, ONE_CHANNEL_ROWS_SRC_COLUMNS} from '../passes/rows/one_channel';
import {ONE_CHANNEL_LOOPS} from '../passes/loops/one_channel_taps';
import {DEPTHWISE_LOOPS} from '../passes/loops/depthwise_taps';
import {DENSE_LOOPS} from '../passes/loops/dense_tiles';
import type {WebglDevice} from './device';
import type {InputTexture, WebglInputs} from './inputs';

/**
 * The multi-target passes in the order the planner tries them; the first whose plan takes the
 * problem runs. The three families (dense, depthwise, one src channel) take disjoint problems,
 * so order matters only within a family: there the pass that writes a diffDst row's products
 * out in its text comes first, because it takes only rows narrow enough for that text (the
 * profile's maxWidth and maxWrittenRowProducts) and there does fewer reads and less work per
 * read than the pass that loops; the looping pass takes the rest of its family.
 */
export const MULTI_TARGET_PASSES: readonly MultiTargetPass[] = Object.freeze([
  DENSE_ROWS, DENSE_LOOPS, DEPTHWISE_ROWS, DEPTHWISE_LOOPS, ONE_CHANNEL_ROWS, ONE_CHANNEL_LOOPS,
] as unknown as MultiTargetPass[]);

/** The multi-target pass of that name. */
export function multiTargetPass(name: string): MultiTargetPass {
  const pass = MULTI_TARGET_PASSES.find(candidate => candidate.name === name);
  if (pass === undefined) throw new Error(`tfjs-conv-backprop-filters: internal: no webgl pass '${name}'`);
  return pass;
}

/**
 * How a program reads an input: 'rows', the 2-D view [elements / last axis, last axis] (packed
 * or unpacked); 'paddedBlocks', that view over a packed texture of odd blocks read in place,
 * each block padded to an even number of rows (InputTexture.oddBlockRows); 'pairedPositions',
 * the packed view [positions / 2, 2] of a one-channel tensor.
 */
export interface InputView {
  readonly kind: 'rows' | 'paddedBlocks' | 'pairedPositions';
  readonly packed: boolean;
  /** The view's columns. */
  readonly columns: number;
  /** Odd rows per block ('paddedBlocks'), else 0. */
  readonly blockRows: number;
}

/** The single-target programs (FilterGradientProgram, then ArrangeTilesProgram or SumSplitsProgram). */
export interface SingleTargetPlan {
  readonly path: 'singleTarget';
  readonly reduction: ReductionPlan;
  readonly webglVersion: 1 | 2;
  /**
   * WebGL 2: the program reads the textures itself when both hold their views row-major (what
   * tfjs hands over is known once the views are made); WebGL 1: tfjs's samplers.
   */
  readonly directReadsWhenRowMajor: boolean;
  readonly views: {readonly src: InputView; readonly diffDst: InputView};
  /** The second pass: the tiles' arrangement, the sum of the splits, or none. */
  readonly finish: 'arrangeTiles' | 'sumSplits' | null;
  readonly inputs: WebglInputs;
  /** What the verbose line prints. */
  readonly summary: string;
}

/** A multi-target pass 1, the sum of its splits when split, and the arrangement into the filter layout. */
export interface MultiTargetPlan {
  readonly path: 'multiTarget';
  /** The pass's name (MULTI_TARGET_PASSES). */
  readonly pass: string;
  /** The pass's own plan (its parameters: tiles, splits, pitches, …). */
  readonly params: MultiTargetParams;
  readonly targetSplits: TargetSplits;
  readonly location: TargetLocation;
  readonly arrangement: 'channelTexels' | 'targets';
  readonly views: {readonly src: InputView; readonly diffDst: InputView};
  readonly inputs: WebglInputs;
  /**
   * What runs where tfjs cannot make a target unfolded or hand a view over as it is (a
   * texture shape tfjs chooses when it makes them): the single-target programs.
   */
  readonly fallback: SingleTargetPlan;
  readonly summary: string;
}

/** A batch of 0: the filter gradient is zeros. */
export interface ZerosPlan {
  readonly path: 'zeros';
  readonly summary: 'zeros';
}

export type WebglPlan = ZerosPlan | MultiTargetPlan | SingleTargetPlan;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const field of Object.values(value as object)) deepFreeze(field);
  }
  return value;
}

function lastAxis(shape: readonly number[]): number {
  return shape[shape.length - 1];
}

function singleTargetPlan(geometry: FilterGradientGeometry, device: WebglDevice, inputs: WebglInputs): SingleTargetPlan {
  const reduction = planReduction(geometry, device.profile);
  const packed = reduction.mode === 'packedTiles';
  const view = (shape: readonly number[]): InputView => ({kind: 'rows', packed, columns: lastAxis(shape), blockRows: 0});
  return {
    path: 'singleTarget', reduction, webglVersion: device.webglVersion, directReadsWhenRowMajor: device.webglVersion === 2,
    views: {src: view(geometry.src.shape), diffDst: view(geometry.diffDst.shape)},
    finish: reduction.mode !== 'single' ? 'arrangeTiles' : reduction.splits > 1 ? 'sumSplits' : null,
    inputs, summary: `single target ${reduction.mode} splits=${reduction.splits}`,
  };
}

/** A packed view of an input read by a multi-target pass: in place in padded blocks where its texture has odd ones. */
function packedRowsView(shape: readonly number[], input: InputTexture): InputView {
  return input.oddBlockRows > 0 ? {kind: 'paddedBlocks', packed: true, columns: lastAxis(shape), blockRows: input.oddBlockRows} :
                                  {kind: 'rows', packed: true, columns: lastAxis(shape), blockRows: 0};
}

/**
 * The webgl kernel's plan for a problem on a device, given what its input textures look like:
 * the multi-target pass that takes it (WebGL 2, multi-target flag on; MULTI_TARGET_PASSES in
 * order), else the single-target programs. A plain, frozen value: the kernel executes it, the
 * verbose line prints its summary, the specs assert it.
 */
export function planWebgl(geometry: FilterGradientGeometry, device: WebglDevice, inputs: WebglInputs): WebglPlan {
  if (geometry.batch === 0) return deepFreeze<ZerosPlan>({path: 'zeros', summary: 'zeros'});
  const single = singleTargetPlan(geometry, device, inputs);
  if (!device.multiTarget) return deepFreeze(single);
  for (const pass of MULTI_TARGET_PASSES) {
    const params = pass.plan(geometry, device, inputs);
    if (params === null) continue;
    const src: InputView = pass.srcView === 'pairedPositions' ?
        {kind: 'pairedPositions', packed: true, columns: ONE_CHANNEL_ROWS_SRC_COLUMNS, blockRows: 0} :
        packedRowsView(geometry.src.shape, inputs.src);
    return deepFreeze<MultiTargetPlan>({
      path: 'multiTarget', pass: pass.name, params, targetSplits: params.targetSplits,
      location: pass.location(geometry, params),
      arrangement: pass.arrangement === 'channelTexels' && channelsInnermost(geometry) ? 'channelTexels' : 'targets',
      views: {src, diffDst: packedRowsView(geometry.diffDst.shape, inputs.diffDst)}, inputs, fallback: single,
      summary: `${pass.name} splits=${params.targetSplits.splits}`,
    });
  }
  return deepFreeze(single);
}

/**
 * The names of every program the webgl kernel runs: each pass's, the split sum's, the
 * arrangements' and the single-target programs' (for counts that tell ours from tfjs's).
 */
export const WEBGL_PROGRAM_NAMES: readonly string[] = Object.freeze([
  ...MULTI_TARGET_PASSES.map(pass => pass.programName), SUM_TARGET_SPLITS_PROGRAM, ArrangeTargetsProgram.name,
  ArrangeChannelTexelsProgram.name, FilterGradientProgram.name, SumSplitsProgram.name, ArrangeTilesProgram.name,
]);

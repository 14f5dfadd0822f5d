// Depthwise loops: the multi-target pass 1 for depthwise problems, looping along the rows (see passes/pass.ts; for
// narrow rows: ../rows/depthwise.ts).
import {FilterGradientGeometry, spatialAxesAs3d} from '../../../../src/geometry';
import type {TargetLocation} from '../../finish/arrange_targets';
import type {MultiTargetProgram} from '../../multi_target';
import {lines, Uniform} from '../../glsl/builder';
import {packedReadsHeader} from '../../glsl/packed_reads';
import {tunedWebglProfile, WebglProfile} from '../../plan/device';
import {RowSplit, splitReduction} from '../../plan/splits';
import {planSplitGrid, SPLIT_OF_FRAGMENT, TargetSplits} from '../../finish/sum_target_splits';
import {planSegments, stepAdvance, stepValues, TAP_ROWS_FUNCTIONS, tapBlockSetup, tapRowsLoop, TapRowsText, tapRowsText,
        tapRowsUniforms, tapSegmentsLoop} from './tap_rows';
import {MultiTargetPass, passProgram, PassTextures} from '../pass';
import {paddedBlocks} from '../../plan/inputs';
import {textPerKey} from '../../../text_per_key';

/** Taps along the innermost kernel axis for one fragment of a depthwise problem, two per target. */
export interface DepthwiseLoops {
  /** Taps per fragment (a block of the innermost kernel axis). */
  readonly taps: number;
  /** Blocks of `taps` along the innermost kernel axis. */
  readonly tapBlocks: number;
  /** Kernel rows: the kernel's depth × height. */
  readonly kernelRows: number;
  /** src texels a step spans (see depthwiseLoopsProgram). */
  readonly stepTexels: number;
  readonly plan: RowSplit;
  /** How the rows run in segments (tapSegmentsLoop in tap_rows.ts); null: one by one. */
  readonly segments: {readonly continuous: boolean} | null;
  /**
   * Where the targets hold each split (see TargetSplits): a block of [2, 2 · ⌈channel pairs /
   * 4⌉ · kernelRows · tapBlocks] texels, a 2×2 block of texels per 4 consecutive channel pairs
   * and kernel block (kernel row, tap block), the kernel block fastest along the row (see
   * depthwiseLoopsProgram).
   */
  readonly targetSplits: TargetSplits;
}


/**
 * The depthwise loops for a depthwise problem (groups = channels, one src and one diffDst channel
 * each) in channels-last data, given how many targets a draw may write, the largest texture
 * side tfjs allocates unfolded and whether an input is read in padded blocks; null for any
 * other problem or when the targets cannot fit.
 */
export function planDepthwiseLoops(geometry: FilterGradientGeometry, maxTargets: number, maxTextureSize: number,
                                   paddedBlocks: boolean, profile: WebglProfile = tunedWebglProfile()): DepthwiseLoops | null {
  if (geometry.dataFormat !== 'NXC' || geometry.src.channelsPerGroup !== 1 || geometry.diffDst.channelsPerGroup !== 1 ||
      geometry.groups < 2) {
    return null;
  }
  const [d, h, w] = spatialAxesAs3d(geometry.axes);
  // At most the profile's maxTaps: a step's reads and selects grow with its taps.
  const taps = Math.min(w.kernelSize, profile.maxTaps, 2 * maxTargets);
  const tapBlocks = Math.ceil(w.kernelSize / taps);
  const kernelRows = d.kernelSize * h.kernelSize;
  // Past two texels a tap (a stride or dilation along the row far larger than the kernel,
  // up to 2^30) the taps share no texels and the shader would grow with the span: the
  // single-target program reads per tap instead.
  const stepTexels = Math.floor(((taps - 1) * w.dilation + w.stride + 1) / 2) + 1;
  if (stepTexels > 2 * taps + 2) return null;
  const channelPairs = Math.ceil(geometry.groups / 2);
  const plan = splitReduction(geometry, 2 * taps, profile.split, Infinity, profile.depthwiseLoops.targetFragments);
  const segments = w.diffDstSize <= profile.depthwiseLoops.maxSegmentRowLength ?
      planSegments(geometry, paddedBlocks) : null;
  const targetSplits = planSplitGrid(2, 2 * Math.ceil(channelPairs / 4) * kernelRows * tapBlocks, plan.splits, maxTextureSize);
  return targetSplits === null ? null : {taps, tapBlocks, kernelRows, stepTexels, plan, segments, targetSplits};
}

/**
 * Pass 1 of the webgl filter gradient for depthwise channels-last problems on WebGL 2, as a
 * multi-target program (see ../../multi_target.ts): a fragment sums, for one channel pair and one
 * kernel row (depth, height), a block of `taps` neighbouring taps along the innermost axis over
 * one split of the diffDst rows, reading packed 2-D views [positions, channels] directly (a
 * texel: two channels of two neighbouring positions). Target q holds taps 2q and 2q + 1 as
 * (tap 2q: channel 0, channel 1; tap 2q + 1: channel 0, channel 1).
 *
 * A step takes the diffDst texel of two positions and the src texels spanning every tap's two
 * src positions — ⌈((taps − 1)·dilation + stride) / 2⌉ + 1 texels, 3 for 3 taps at stride
 * 1 or 2 — for 4 · taps multiply-adds: the taps share src texels, where the single-target
 * program reads one value per tap and position. Where a tap or a position falls outside (the
 * ends of a row) each product is selected, not multiplied by 0 (0 · Infinity is NaN); in
 * between, none is.
 *
 * Where the rows are short and laid out for it (planSegments in tap_rows.ts), the split's rows
 * run in segments: a row's set-up (position arithmetic, parities, cursors, three loops) is done
 * once a segment of consecutive rows, and on rows of 4–8 positions it is most of a call.
 *
 * Cache key: the shader text, which bakes in the block of taps, the stride and the dilation
 * along the innermost axis (they decide which texel half each value comes from), whether the
 * rows run in segments and whether those continue one another, and whether each input's
 * texture is folded; sizes, the other strides, pads and dilations, the split and
 * the textures' sizes are uniforms.
 *
 * Where the fragments run on a CPU (SwiftShader), the multiply-adds are nearly free and the
 * reads, their address arithmetic and per-product selects are the time: the pass is made of
 * fewer and cheaper reads (cursors through folded textures, no division a read), in an order
 * that hits the cache, and tests only the steps at a row's ends.
 */
export function depthwiseLoopsProgram(geometry: FilterGradientGeometry, loops: DepthwiseLoops, textures: PassTextures): MultiTargetProgram {
  return passProgram(DEPTHWISE_LOOPS, geometry, loops, textures);
}

/** What depthwiseLoopsProgram's text is made from: its cache key. */
interface DepthwiseLoopsText extends TapRowsText {
  readonly segments: DepthwiseLoops['segments'];
}

const depthwiseLoopsTextKey = (geometry: FilterGradientGeometry, loops: DepthwiseLoops, textures: PassTextures, uniforms: readonly Uniform[]):
    DepthwiseLoopsText => ({...tapRowsText(geometry, loops, textures, uniforms), segments: loops.segments});

const depthwiseLoopsText = textPerKey((key: DepthwiseLoopsText) => {
  const {taps, stride, dilation, segments, wholeRows} = key;
  const targetCount = Math.ceil(taps / 2);
  const targets = Array.from({length: targetCount}, (_, q) => q);
  const texelCount = key.stepTexels;
  const value = (p: number) => `x${p}`;
  // A texel holds the channel pair at .xy (first position) and .zw (second).
  const {offsets, values} = stepValues(taps, stride, dilation, 'vec2', p => `t${p >> 1}.${p % 2 === 1 ? 'zw' : 'xy'}`);
  // Target q's sum of products over the step's two positions; a target holding one tap (the
  // last of an odd block) adds to its first half only.
  const accumulate = (q: number, product: (tap: number, position: 0 | 1) => string) => {
    const both = (t: number) => `${product(t, 0)} + ${product(t, 1)}`;
    return 2 * q + 1 < taps ? `sum${q} += vec4(${both(2 * q)}, ${both(2 * q + 1)});` : `sum${q}.xy += ${both(2 * q)};`;
  };
  const product = (t: number, position: 0 | 1) => `${value(offsets(t)[position])} * ${position === 0 ? 'y.xy' : 'y.zw'}`;
  // Outside the middle range each product is tested for being inside.
  const testedProduct = (t: number, position: 0 | 1) =>
    `(valid${position === 0 ? 'A' : 'B'} && insideRow(w + ${offsets(t)[position]}) ? ${product(t, position)} : vec2(0.0))`;
  const step = (tested: boolean) => `
            vec4 y = readDiffDstAt(diffDstAt);
            diffDstAt = diffDstNextRow(diffDstAt);${tested ? `
            int w = pw * ${stride} + shift.z;
            bool validA = pw >= 0;
            bool validB = pw + 1 < diffDstSize.z;` : ''}${values}${targets.map(q => `
            ${accumulate(q, tested ? testedProduct : product)}`).join('')}

${stepAdvance(stride, texelCount)}`;
  return `${packedReadsHeader(key.inputs)}
      ${key.intUniforms}
      ${lines(targets.map(q => `layout(location = ${q}) out vec4 target${q};`), 6)}
${TAP_ROWS_FUNCTIONS}
      void main() {
        ${SPLIT_OF_FRAGMENT}
        // A 2×2 block of fragments — one SwiftShader quad, run in lockstep — takes 4 consecutive
        // channel pairs, whose texels share a cache line, and one kernel block (kernel row, tap
        // block). Blocks run along a row in order, so the kernel blocks of a channel block run
        // one after another and find the diffDst and src texels their neighbour just read still
        // in the cache.
        ivec2 block = fragment / 2;
        ivec2 inBlock = fragment - 2 * block;
        int kernelBlock = block.x - sizes.z * sizes.w * (block.x / (sizes.z * sizes.w));
        int channelBlock = block.x / (sizes.z * sizes.w);
        int tapBlock = kernelBlock - sizes.z * (kernelBlock / sizes.z);
        int kernelRow = kernelBlock / sizes.z;
        int channel = 2 * (4 * channelBlock + 2 * inBlock.y + inBlock.x);${tapBlockSetup(taps, stride, dilation)}
        ${lines(targets.map(q => `vec4 sum${q} = vec4(0.0);`), 8)}
${(rows => segments !== null ? tapSegmentsLoop(rows, segments.continuous) : tapRowsLoop(rows))({
    stride, stepTexels: texelCount, srcChannel: 'channel', diffDstChannel: 'channel', step,
    wholeRows, diffDstCursors: `
          ivec2 diffDstAt = diffDstTexelOf(diffDstRow + pw, diffDstCol);`})}
        ${lines(targets.map(q => `target${q} = sum${q};`), 8)}
      }
`;
});

/**
 * Where depthwiseLoopsProgram leaves each element: its target, texel (split 0) and lane in the targets' packed views
 * [2 · texel rows, 2 · texel columns], in blocks of 2×2 texels for 4 consecutive channel
 * pairs (see depthwiseLoopsProgram and TargetLocation).
 */
export function depthwiseLoopsTargetLocation(loops: DepthwiseLoops): TargetLocation {
  const {taps} = loops;
  // tiling: tap blocks, kernel rows
  return {targetCount: Math.ceil(taps / 2), tiling: [loops.tapBlocks, loops.kernelRows], locate: `
        int tapBlock = k.z / ${taps};
        int tap = k.z - tapBlock * ${taps};
        int target = tap / 2;
        int pair = diffDstChannel / 2;
        int lane = 2 * (tap - 2 * target) + diffDstChannel - 2 * pair;
        int pairInBlock = pair - 4 * (pair / 4);
        int kernelBlock = (k.x * kernelSize.y + k.y) * tiling[0] + tapBlock;
        int row = 2 * (pairInBlock / 2);
        int col = 2 * (2 * ((pair / 4) * tiling[1] * tiling[0] + kernelBlock) + pairInBlock - 2 * (pairInBlock / 2));`};
}

/** The pass (see MultiTargetPass). */
export const DEPTHWISE_LOOPS: MultiTargetPass<DepthwiseLoops, DepthwiseLoopsText> = Object.freeze<MultiTargetPass<DepthwiseLoops, DepthwiseLoopsText>>({
  name: 'depthwise loops', family: 'depthwise', form: 'loops', programName: 'DepthwiseLoopsProgram', arrangement: 'targets', srcView: 'rows',
  plan: (geometry, device, inputs) => planDepthwiseLoops(geometry, device.maxDrawBuffers, device.maxTextureSize, paddedBlocks(inputs), device.profile),
  location: (_, params) => depthwiseLoopsTargetLocation(params),
  uniforms: (geometry, params, textures) => tapRowsUniforms(geometry, textures, params), textKey: depthwiseLoopsTextKey, text: depthwiseLoopsText});

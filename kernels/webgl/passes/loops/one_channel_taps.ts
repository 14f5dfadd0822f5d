// One-channel loops: the multi-target pass 1 for problems with one src channel, looping along the rows (see
// passes/pass.ts; for narrow rows: ../rows/one_channel.ts).
import {FilterGradientGeometry, spatialAxesAs3d} from '../../../../src/geometry';
import type {TargetLocation} from '../../finish/arrange_targets';
import type {MultiTargetProgram} from '../../multi_target';
import {lines, Uniform} from '../../glsl/builder';
import {packedReadsHeader} from '../../glsl/packed_reads';
import {tunedWebglProfile, WebglProfile} from '../../plan/device';
import {RowSplit, splitReduction} from '../../plan/splits';
import {planSplitGrid, SPLIT_OF_FRAGMENT, TargetSplits} from '../../finish/sum_target_splits';
import {stepAdvance, stepValues, TAP_ROWS_FUNCTIONS, tapBlockSetup, tapRowsLoop, TapRowsText, tapRowsText,
        tapRowsUniforms} from './tap_rows';
import {MultiTargetPass, passProgram, PassTextures} from '../pass';
import {textPerKey} from '../../../text_per_key';

/**
 * The shape of work for a problem with one src channel (a first layer on grey-scale data or a
 * spectrogram): a fragment sums `taps` neighbouring taps of the innermost kernel axis for
 * `pairs` diffDst channel pairs, one render target per two taps and channel pair.
 */
export interface OneChannelLoops {
  /** Taps per fragment (a block of the innermost kernel axis). */
  readonly taps: number;
  /** Blocks of `taps` along the innermost kernel axis. */
  readonly tapBlocks: number;
  /** Kernel rows: the kernel's depth × height. */
  readonly kernelRows: number;
  /** diffDst channel pairs per fragment. */
  readonly pairs: number;
  /** Blocks of `pairs` over the diffDst channels. */
  readonly pairBlocks: number;
  /** src texels a step spans (see oneChannelLoopsProgram). */
  readonly stepTexels: number;
  readonly plan: RowSplit;
  /**
   * Where the targets hold each split (see TargetSplits): a block of [1, pairBlocks · kernelRows
   * · tapBlocks] texels, the kernel block fastest along the row.
   */
  readonly targetSplits: TargetSplits;
}

/**
 * The one-channel loops for a problem in channels-last data with one group, one src channel and at
 * least two diffDst channels, given how many targets a draw may write and the largest texture
 * side tfjs allocates unfolded; null for any other problem, when a fragment would fill fewer
 * than 2 targets, or when the targets cannot fit.
 *
 * The widest tap block first (a step's src texels serve every tap: its reads grow with the
 * stride, not with the taps), up to the profile's maxTaps,
 * then as many channel pairs as the remaining targets hold, up to the profile's maxTapPairs taps
 * × pairs: 5 taps × 2 pairs (6 targets) for a 5×5 kernel, 3 × 4 (8) for 3×3, 8 × 1 (4) for a 2×8
 * kernel.
 */
export function planOneChannelLoops(geometry: FilterGradientGeometry, maxTargets: number, maxTextureSize: number,
                                    profile: WebglProfile = tunedWebglProfile()): OneChannelLoops | null {
  if (geometry.dataFormat !== 'NXC' || geometry.groups !== 1 || geometry.src.channelsPerGroup !== 1 ||
      geometry.diffDst.channelsPerGroup < 2) {
    return null;
  }
  const [d, h, w] = spatialAxesAs3d(geometry.axes);
  const targetLimit = Math.min(profile.maxTargets, maxTargets);
  const taps = Math.min(w.kernelSize, profile.maxTaps, targetLimit * 2);
  const tapTargets = Math.ceil(taps / 2);
  const pairsInGroup = Math.ceil(geometry.diffDst.channelsPerGroup / 2);
  const pairs = Math.min(pairsInGroup, Math.max(1, Math.min(Math.floor(targetLimit / tapTargets), Math.floor(profile.oneChannelLoops.maxTapPairs / taps))));
  if (tapTargets * pairs < 2) return null;
  const tapBlocks = Math.ceil(w.kernelSize / taps);
  const kernelRows = d.kernelSize * h.kernelSize;
  // As in planDepthwiseLoops: past two texels a tap the taps share no texels.
  const stepTexels = Math.floor(((taps - 1) * w.dilation + w.stride + 1) / 2) + 1;
  if (stepTexels > 2 * taps + 2) return null;
  const pairBlocks = Math.ceil(pairsInGroup / pairs);
  const plan = splitReduction(geometry, 2 * taps * pairs, profile.split, Infinity, profile.oneChannelLoops.targetFragments);
  const targetSplits = planSplitGrid(1, pairBlocks * kernelRows * tapBlocks, plan.splits, maxTextureSize);
  return targetSplits === null ? null : {taps, tapBlocks, kernelRows, pairs, pairBlocks, stepTexels, plan, targetSplits};
}

/**
 * Pass 1 of the webgl filter gradient for channels-last problems with one src channel (one
 * group) on WebGL 2, as a multi-target program (see ../../multi_target.ts): a fragment sums, for one
 * kernel row (depth, height), a block of `taps` neighbouring taps along the innermost axis and
 * a block of `pairs` diffDst channel pairs, over one split of the diffDst rows, reading packed
 * 2-D views [positions, channels] directly. Target q · pairs + j holds taps 2q and 2q + 1 of
 * pair j as (tap 2q: channel 2j, 2j + 1; tap 2q + 1: channel 2j, 2j + 1).
 *
 * The 2×2 channel tiles of the dense programs would use one lane in two here (the src view has
 * one channel; its texel holds two positions of it), and the depthwise loops pair one src with
 * one diffDst channel; here a step over two positions reads `pairs` diffDst texels and the src
 * texels under every tap's two positions — `stride` new ones a step, the rest carried over —
 * for 4 · taps · pairs multiply-adds (40 for a 5×5 kernel: 3 reads where the single-target
 * taps program reads 2 per 4). Where a tap or a position falls outside (the ends of a row)
 * its products are skipped by an if, not multiplied by 0 (0 · Infinity is NaN); in between,
 * nothing is tested.
 * Channel pairs past the last channel (a ragged last block) read neighbouring texels into lanes
 * the arrangement never reads.
 *
 * Cache key: the shader text, which bakes in the block of taps and of channel pairs, the stride
 * and the dilation along the innermost axis (they decide which texel half each value comes
 * from) and whether each input's texture is folded; sizes, the other strides, pads and
 * dilations, the split and the textures' sizes are uniforms.
 */
export function oneChannelLoopsProgram(geometry: FilterGradientGeometry, loops: OneChannelLoops, textures: PassTextures): MultiTargetProgram {
  return passProgram(ONE_CHANNEL_LOOPS, geometry, loops, textures);
}

/** What oneChannelLoopsProgram's text is made from: its cache key. */
interface OneChannelLoopsText extends TapRowsText {
  /** diffDst channel pairs a fragment takes. */
  readonly pairs: number;
}

const oneChannelLoopsTextKey = (geometry: FilterGradientGeometry, loops: OneChannelLoops, textures: PassTextures, uniforms: readonly Uniform[]):
    OneChannelLoopsText => ({...tapRowsText(geometry, loops, textures, uniforms), pairs: loops.pairs});

const oneChannelLoopsText = textPerKey((key: OneChannelLoopsText) => {
  const {taps, pairs, stride, dilation, wholeRows} = key;
  const tapTargets = Array.from({length: Math.ceil(taps / 2)}, (_, q) => q);
  const pairIndices = Array.from({length: pairs}, (_, j) => j);
  const targets = tapTargets.flatMap(q => pairIndices.map(j => ({q, j, index: q * pairs + j})));
  const texelCount = key.stepTexels;
  const value = (p: number) => `x${p}`;
  // The src view has one channel: a texel holds it at .x (first position) and .z (second).
  const {offsets, values} = stepValues(taps, stride, dilation, 'float', p => `t${p >> 1}.${p % 2 === 1 ? 'z' : 'x'}`);
  // Target (q, j): taps 2q and 2q + 1 of pair j over the step's two positions; a target holding
  // one tap (the last of an odd block) adds to its first half only.
  const accumulate = (q: number, j: number, product: (tap: number, position: 0 | 1, j: number) => string) => {
    const both = (t: number) => `${product(t, 0, j)} + ${product(t, 1, j)}`;
    return 2 * q + 1 < taps ? `sum${q}_${j} += vec4(${both(2 * q)}, ${both(2 * q + 1)});` : `sum${q}_${j}.xy += ${both(2 * q)};`;
  };
  const product = (t: number, position: 0 | 1, j: number) => `${value(offsets(t)[position])} * y${j}.${position === 0 ? 'xy' : 'zw'}`;
  // Outside the middle range each tap and position is tested, by an if around its products
  // (selects on bools there make the shader compiler's work grow steeply).
  const testedProducts = (t: number, position: 0 | 1) => `
            if (valid${position === 0 ? 'A' : 'B'} && insideRow(w + ${offsets(t)[position]})) {${pairIndices.map(j => `
              sum${t >> 1}_${j}.${t % 2 === 1 ? 'zw' : 'xy'} += ${product(t, position, j)};`).join('')}
            }`;
  const step = (tested: boolean) => `${pairIndices.map(j => `
            vec4 y${j} = readDiffDstAt(diffDstAt${j});
            diffDstAt${j} = diffDstNextRow(diffDstAt${j});`).join('')}${tested ? `
            int w = pw * ${stride} + shift.z;
            bool validA = pw >= 0;
            bool validB = pw + 1 < diffDstSize.z;` : ''}${values}${tested ?
      Array.from({length: taps}, (_, t) => testedProducts(t, 0) + testedProducts(t, 1)).join('') :
      targets.map(({q, j}) => `
            ${accumulate(q, j, product)}`).join('')}

${stepAdvance(stride, texelCount)}`;
  return `${packedReadsHeader(key.inputs)}
      ${key.intUniforms}
      ${lines(targets.map(({index}) => `layout(location = ${index}) out vec4 target${index};`), 6)}
${TAP_ROWS_FUNCTIONS}
      void main() {
        ${SPLIT_OF_FRAGMENT}
        // A split's texels: (pair block, kernel block), kernel blocks fastest, so the kernel
        // rows of a pair block run one after another and find the diffDst texels their
        // neighbour just read still in the cache.
        int kernelBlocks = sizes.z * sizes.w;
        int pairBlock = fragment.x / kernelBlocks;
        int kernelBlock = fragment.x - kernelBlocks * pairBlock;
        int tapBlock = kernelBlock - sizes.z * (kernelBlock / sizes.z);
        int kernelRow = kernelBlock / sizes.z;
        int diffDstChannel = ${2 * pairs} * pairBlock;${tapBlockSetup(taps, stride, dilation)}
        ${lines(targets.map(({q, j}) => `vec4 sum${q}_${j} = vec4(0.0);`), 8)}
${tapRowsLoop({stride, stepTexels: texelCount, srcChannel: '0', diffDstChannel: 'diffDstChannel', step, wholeRows,
                 diffDstCursors: pairIndices.map(j => `
          ivec2 diffDstAt${j} = diffDstTexelOf(diffDstRow + pw, diffDstCol + ${2 * j});`).join('')})}
        ${lines(targets.map(({q, j, index}) => `target${index} = sum${q}_${j};`), 8)}
      }
`;
});

/**
 * Where oneChannelLoopsProgram leaves each element: its target, texel (split 0) and lane in the targets' packed views
 * [2 · splits, 2 · pair blocks · kernel blocks] (see TargetLocation).
 */
export function oneChannelLoopsTargetLocation(loops: OneChannelLoops): TargetLocation {
  const {taps, pairs} = loops;
  // tiling: tap blocks, kernel rows
  return {targetCount: Math.ceil(taps / 2) * pairs, tiling: [loops.tapBlocks, loops.kernelRows], locate: `
        int tapBlock = k.z / ${taps};
        int tap = k.z - tapBlock * ${taps};
        int pair = diffDstChannel / 2;
        int pairBlock = pair / ${pairs};
        int target = (tap / 2) * ${pairs} + pair - pairBlock * ${pairs};
        int lane = 2 * (tap - 2 * (tap / 2)) + diffDstChannel - 2 * pair;
        int kernelBlock = (k.x * kernelSize.y + k.y) * tiling[0] + tapBlock;
        int row = 0;
        int col = 2 * (pairBlock * tiling[1] * tiling[0] + kernelBlock);`};
}

/** The pass (see MultiTargetPass). */
export const ONE_CHANNEL_LOOPS: MultiTargetPass<OneChannelLoops, OneChannelLoopsText> = Object.freeze<MultiTargetPass<OneChannelLoops, OneChannelLoopsText>>({
  name: 'one-channel loops', family: 'oneSrcChannel', form: 'loops', programName: 'OneChannelLoopsProgram', arrangement: 'targets', srcView: 'rows',
  plan: (geometry, device) => planOneChannelLoops(geometry, device.maxDrawBuffers, device.maxTextureSize, device.profile),
  location: (_, params) => oneChannelLoopsTargetLocation(params),
  uniforms: (geometry, params, textures) => tapRowsUniforms(geometry, textures, params), textKey: oneChannelLoopsTextKey, text: oneChannelLoopsText});

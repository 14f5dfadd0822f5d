// Dense rows: the multi-target pass 1 for dense problems (one group, several src channels) whose diffDst
// rows are narrow enough to be written out in the text (see passes/pass.ts; the looping pass: ../loops/dense_tiles.ts).
import {FilterGradientGeometry, spatialAxesAs3d} from '../../../../src/geometry';
import type {TargetLocation} from '../../finish/arrange_targets';
import {MultiTargetProgram} from '../../multi_target';
import {lines, Uniform} from '../../glsl/builder';
import {packedReadsHeader} from '../../glsl/packed_reads';
import {DEFAULT_WEBGL_PROFILE, tunedWebglProfile, WebglProfile} from '../../plan/device';
import {RowSplit, splitReduction} from '../../plan/splits';
import {planSplitGrid, SPLIT_OF_FRAGMENT, splitGridUniform, TargetSplits} from '../../finish/sum_target_splits';
import {declareRowSums, interleavedRowSteps, readDiffDstTexel, rowLayout, rowMeetings, rowSplitUniform, rowSumOf, srcRowInImage, srcTexelsAlongRow, srcTexelsAt, writtenRowsLoop, WrittenRowsText, writtenRowsText} from './written_rows';
import {MultiTargetPass, passProgram, PassTextures} from '../pass';
import {blockRowsOf} from '../../plan/inputs';
import {textPerKey} from '../../../text_per_key';

/**
 * One src channel pair × a block of diffDst channel pairs × every tap of one kernel row a
 * fragment, for a dense problem on narrow images (see denseRowsProgram).
 */
export interface DenseRows {
  /** diffDst channel pairs a fragment takes (B). */
  readonly diffDstPairs: number;
  /** src channel pairs (⌈C / 2⌉) and blocks of B diffDst channel pairs (⌈⌈O / 2⌉ / B⌉). */
  readonly srcPairs: number;
  readonly diffDstBlocks: number;
  readonly plan: RowSplit;
  /** Kernel width × B: target kx · B + b holds tap kx of diffDst pair b. */
  readonly targetCount: number;
  /**
   * Where the targets hold each split (see TargetSplits): a block of [kernel rows · src pairs,
   * diffDst blocks] texels, a fragment per (kernel row, src pair; diffDst block).
   */
  readonly targetSplits: TargetSplits;
  /** View rows from one image row to the next in src and diffDst (see rowLayout in written_rows.ts). */
  readonly srcPitch: number;
  readonly diffDstPitch: number;
}

export {CONV_BACKPROP_FILTERS_WEBGL_DENSE_ROWS_MIN_FRAGMENT_READS, CONV_BACKPROP_FILTERS_WEBGL_DENSE_ROWS_WIDTH} from '../../plan/device';
/**
 * The default profile's fewest reads a dense-rows fragment's split gives it: a fragment is not
 * free (its quad's set-up, 4–8 target writes, and a share of the sum pass), so layers whose rows
 * are few or short take fewer, longer splits than the fragment count alone gives them, and large
 * layers (thousands of reads a fragment already) keep theirs.
 */
export const DENSE_ROWS_MIN_FRAGMENT_READS = DEFAULT_WEBGL_PROFILE.denseRows.minFragmentReads;

/**
 * Dense rows for a problem of one group, channels-last, 1-D or 2-D, with a kernel larger than
 * 1 × 1 and diffDst rows of at most the profile's denseRows.maxWidth positions, laid out position after
 * position (row (n · height + y) · width + x of the tensor), each image row starting at a
 * texel of both inputs' textures (see rowLayout in written_rows.ts), given how many targets a draw may write and the largest texture side tfjs allocates
 * unfolded; null for any other problem (dense loops or one-channel loops then take it).
 */
export function planDenseRows(geometry: FilterGradientGeometry, maxTargets: number, maxTextureSize: number,
                              blockRows: {readonly src: number; readonly diffDst: number},
                              profile: WebglProfile = tunedWebglProfile()): DenseRows | null {
  const {src, diffDst} = geometry;
  const maxWidth = profile.denseRows.maxWidth;
  if (geometry.dataFormat !== 'NXC' || geometry.groups !== 1 || src.channels < 2 || geometry.spatialRank > 2) {
    return null;
  }
  const [, h, w] = spatialAxesAs3d(geometry.axes);
  // 1 × 1 kernels: dense loops' pointwise sweep reads fewer texels a multiply-add (8 channel
  // pairs of both tensors a fragment) and has no taps to write out.
  if (h.kernelSize * w.kernelSize === 1) return null;
  const srcPairs = Math.ceil(src.channels / 2);
  const allDiffDstPairs = Math.ceil(diffDst.channels / 2);
  const diffDstPairs = Math.min(allDiffDstPairs, Math.floor(Math.min(profile.maxTargets, maxTargets) / w.kernelSize));
  const layout = rowLayout(geometry, blockRows);
  if (diffDstPairs < 1 || layout === null || w.diffDstSize > maxWidth ||
      w.kernelSize * diffDstPairs * w.diffDstSize > profile.maxWrittenRowProducts) {
    return null;
  }
  const diffDstBlocks = Math.ceil(allDiffDstPairs / diffDstPairs);
  // A row's texel reads: B diffDst texels for every two positions, and the src texels its products meet.
  const readsPerRow = diffDstPairs * Math.ceil(w.diffDstSize / 2) + srcTexelsAlongRow(w, 2);
  const minReads = profile.denseRows.minFragmentReads;
  const maxSplits = minReads > 0 ? Math.max(1, Math.floor(geometry.batch * h.diffDstSize * readsPerRow / minReads)) : Infinity;
  const split = splitReduction(geometry, 4 * diffDstPairs * w.kernelSize, profile.split, maxSplits,
                               profile.denseRows.targetFragments);
  const targetSplits = planSplitGrid(srcPairs * h.kernelSize, diffDstBlocks, split.splits, maxTextureSize);
  if (targetSplits === null) return null;
  return {diffDstPairs, srcPairs, diffDstBlocks, plan: split, targetCount: w.kernelSize * diffDstPairs, targetSplits, ...layout};
}

/**
 * Pass 1 of the webgl filter gradient for dense problems on narrow images, as a multi-target
 * program (see ../../multi_target.ts): a fragment sums, for one src channel pair, B diffDst channel
 * pairs and one kernel row, every tap along the row over one split of the diffDst rows
 * (batch × height), reading packed 2-D views [positions, channels] directly (a texel: two
 * channels of two neighbouring positions). Along each diffDst row it reads, texel by texel
 * (interleavedRowSteps in written_rows.ts), its B pairs' texel and the texels of the src row
 * its kernel row meets that the products there first need, and adds those products as 2 × 2
 * outer products (src channels × diffDst channels, a vec4): the row's width, the
 * stride, dilation and pads along it are baked into the text, so which tap meets which position
 * is settled there and nothing along the row is tested or looped over. A src row outside (a
 * pad) adds nothing: its products are selected away (not multiplied by 0: 0 · Infinity is NaN).
 *
 * As depthwise rows (depthwise.ts) do for depthwise layers, this trades dense loops' steps
 * along a row (two positions each, tested at the row's ends, a row's set-up every few steps on
 * narrow images) for straight-line code: on SwiftShader a call costs its reads and the code it
 * runs per read.
 *
 * Target kx · B + b holds tap kx of diffDst pair b as (src channel 0: diffDst channel 0, 1;
 * src channel 1: diffDst channel 0, 1).
 *
 * Cache key: DenseRowsText, all the text is made from (once per key: textPerKey); the batch,
 * heights, channel counts, the stride, dilation and pad along the height, the split and the
 * textures' sizes are uniforms, so one shader serves every batch size.
 */
export function denseRowsProgram(geometry: FilterGradientGeometry, rows: DenseRows, textures: PassTextures): MultiTargetProgram {
  return passProgram(DENSE_ROWS, geometry, rows, textures);
}

/** denseRowsProgram's uniforms besides the packed reads'. */
function denseRowsUniforms(geometry: FilterGradientGeometry, rows: DenseRows): Uniform[] {
  const [, h] = spatialAxesAs3d(geometry.axes);
  return [
    rowSplitUniform(rows.plan, h),
    ['heightAxis', 'ivec3', [h.stride, h.dilation, h.padBegin]],
    ['srcPairs', 'int[]', [rows.srcPairs]],
    splitGridUniform(rows.targetSplits),
  ];
}

const denseRowsTextKey = (geometry: FilterGradientGeometry, rows: DenseRows, textures: PassTextures, uniforms: readonly Uniform[]):
    DenseRowsText => ({...writtenRowsText(geometry, rows.diffDstPitch, textures, uniforms), diffDstPairs: rows.diffDstPairs, srcPitch: rows.srcPitch});

/** What denseRowsProgram's text is made from: its cache key. */
interface DenseRowsText extends WrittenRowsText {
  /** B. */
  readonly diffDstPairs: number;
  readonly srcPitch: number;
}

const denseRowsText = textPerKey((text: DenseRowsText) => {
  const w = text.row;
  const B = text.diffDstPairs;
  const pairs = [...Array(B).keys()];
  const kernelColumns = [...Array(w.kernelSize).keys()];
  const meetings = rowMeetings(w);
  const sum = (kx: number, b: number) => `sum${kx}_${b}`;
  const rowSum = (kx: number, b: number) => rowSumOf(sum(kx, b), text.kernelRowsAlwaysInside);
  // Target kx · B + b's sum.
  const sums = kernelColumns.flatMap(kx => pairs.map(b => sum(kx, b)));
  // A src value as (c0, c0, c1, c1) and a diffDst value as (o0, o1, o0, o1): their product is the 2 × 2 outer product.
  const srcValue = (column: number) => `s${column >> 1}.${column % 2 === 1 ? 'zzww' : 'xxyy'}`;
  const diffDstValue = (b: number, x: number) => `d${b}_${x >> 1}.${x % 2 === 1 ? 'zwzw' : 'xyxy'}`;
  const products = (j: number) => kernelColumns.flatMap(kx => pairs.map(b => {
    const terms = meetings[kx][j].map(({x, column}) => `${srcValue(column)} * ${diffDstValue(b, x)}`);
    return terms.length === 0 ? '' : `
          ${rowSum(kx, b)} += ${terms.join(' + ')};`;
  })).join('');
  const steps = interleavedRowSteps(Math.ceil(w.diffDstSize / 2), j => pairs.map(b => readDiffDstTexel(`diffDstAt${b}`, j, `d${b}_${j}`, '          ')).join(''),
                                    [{cursor: 'srcAt', texel: t => `s${t}`, needed: srcTexelsAt(meetings, 2)}], products, '          ');
  // A kernel row in the pads adds nothing: the sums are kept by a component select (mix with a
  // bvec4), where a ternary on the products is translated into a branch that SwiftShader runs
  // both ways.
  const addRowSums = text.kernelRowsAlwaysInside ? '' : `
          bvec4 insideLanes = bvec4(srcY >= 0 && srcY < rowSplit.w);
          ${lines(sums.map(name => `${name} = mix(${name}, ${name} + ${rowSumOf(name, false)}, insideLanes);`), 10)}`;
  return `${packedReadsHeader(text.inputs)}
      ${text.intUniforms}
      ${lines(sums.map((_, q) => `layout(location = ${q}) out vec4 target${q};`), 6)}
      void main() {
        ${SPLIT_OF_FRAGMENT}
        int kernelRow = fragment.y / srcPairs[0];
        int srcCol = 2 * (fragment.y - kernelRow * srcPairs[0]);
        int diffDstCol = 2 * ${B} * fragment.x;
        ${lines(sums.map(name => `vec4 ${name} = vec4(0.0);`), 8)}
${writtenRowsLoop(`
          int srcY = y * heightAxis.x + kernelRow * heightAxis.y - heightAxis.z;${pairs.map(b => `
          ivec2 diffDstAt${b} = diffDstTexelOf(row * ${text.diffDstPitch}, diffDstCol + ${2 * b});`).join('')}
          ivec2 srcAt = srcTexelOf((n * rowSplit.w + ${srcRowInImage('srcY', text.kernelRowsAlwaysInside)}) * ${text.srcPitch}, srcCol);${
      declareRowSums(sums, 'vec4', text.kernelRowsAlwaysInside)}${steps}${addRowSums}`)}
        ${lines(sums.map((name, q) => `target${q} = ${name};`), 8)}
      }
`;
});

/**
 * Where denseRowsProgram leaves each element: its target (kx · B + its pair in the block),
 * texel (kernel row, src pair; diffDst block, split 0) and lane (see TargetLocation).
 */
export function denseRowsTargetLocation(rows: DenseRows): TargetLocation {
  const B = rows.diffDstPairs;
  // tiling: src pairs, diffDst blocks
  return {targetCount: rows.targetCount, tiling: [rows.srcPairs, rows.diffDstBlocks], locate: `
        int diffDstPair = diffDstChannel / 2;
        int block = diffDstPair / ${B};
        int target = k.z * ${B} + diffDstPair - block * ${B};
        int srcPair = srcChannel / 2;
        int lane = 2 * (srcChannel - 2 * srcPair) + diffDstChannel - 2 * diffDstPair;
        int row = 2 * (k.y * tiling[0] + srcPair);
        int col = 2 * block;`};
}

/** The pass (see MultiTargetPass). */
export const DENSE_ROWS: MultiTargetPass<DenseRows, DenseRowsText> = Object.freeze<MultiTargetPass<DenseRows, DenseRowsText>>({
  name: 'dense rows', family: 'dense', form: 'writtenRows', programName: 'DenseRowsProgram', arrangement: 'channelTexels', srcView: 'rows',
  plan: (geometry, device, inputs) => planDenseRows(geometry, device.maxDrawBuffers, device.maxTextureSize, blockRowsOf(inputs), device.profile),
  location: (_, params) => denseRowsTargetLocation(params),
  uniforms: denseRowsUniforms, textKey: denseRowsTextKey, text: denseRowsText});

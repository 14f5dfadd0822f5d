// Depthwise rows: the multi-target pass 1 for depthwise problems whose diffDst rows are narrow enough to be
// written out in the text (see passes/pass.ts; the looping pass: ../loops/depthwise_taps.ts).
import {FilterGradientGeometry, spatialAxesAs3d} from '../../../../src/geometry';
import type {TargetLocation} from '../../finish/arrange_targets';
import {MultiTargetProgram} from '../../multi_target';
import {lines, Uniform} from '../../glsl/builder';
import {packedReadsHeader} from '../../glsl/packed_reads';
import {tunedWebglProfile, WebglProfile} from '../../plan/device';
import {RowSplit, splitReduction} from '../../plan/splits';
import {planSplitGrid, SPLIT_OF_FRAGMENT, splitGridUniform, TargetSplits} from '../../finish/sum_target_splits';
import {declareRowSums, interleavedRowSteps, readDiffDstTexel, rowLayout, rowMeetings, rowSplitUniform, rowSumOf, srcRowInImage, srcTexelsAt, writtenRowsLoop, WrittenRowsText, writtenRowsText} from './written_rows';
import {MultiTargetPass, passProgram, PassTextures} from '../pass';
import {blockRowsOf} from '../../plan/inputs';
import {textPerKey} from '../../../text_per_key';

/** Every tap of one channel pair a fragment, for a depthwise problem on narrow images (see depthwiseRowsProgram). */
export interface DepthwiseRows {
  /** Taps of the kernel (its height × width), two per target. */
  readonly taps: number;
  readonly plan: RowSplit;
  readonly targetCount: number;
  /** Where the targets hold each split (see TargetSplits): a block of [channel pairs, 1] texels. */
  readonly targetSplits: TargetSplits;
  /** View rows from one image row to the next in src and diffDst (see rowLayout in written_rows.ts). */
  readonly srcPitch: number;
  readonly diffDstPitch: number;
}

export {CONV_BACKPROP_FILTERS_WEBGL_DEPTHWISE_ROWS_WIDTH} from '../../plan/device';

/**
 * Depthwise rows for a depthwise problem (one src and one diffDst channel a group) in
 * channels-last data, 1-D or 2-D, with diffDst rows of at most the profile's
 * depthwiseRows.maxWidth positions, laid out position after position (row (n · height + y) · width + x of the
 * tensor), each image row starting at a texel of both inputs' textures (see rowLayout in
 * written_rows.ts), given how many targets a
 * draw may write and the largest texture side tfjs allocates unfolded; null for any other
 * problem (depthwise loops then take it).
 */
export function planDepthwiseRows(geometry: FilterGradientGeometry, maxTargets: number, maxTextureSize: number,
                                  blockRows: {readonly src: number; readonly diffDst: number},
                                  profile: WebglProfile = tunedWebglProfile()): DepthwiseRows | null {
  const {src, diffDst, groups} = geometry;
  const maxWidth = profile.depthwiseRows.maxWidth;
  if (geometry.dataFormat !== 'NXC' || src.channelsPerGroup !== 1 || diffDst.channelsPerGroup !== 1 || groups < 2 ||
      geometry.spatialRank > 2) {
    return null;
  }
  const [, h, w] = spatialAxesAs3d(geometry.axes);
  const taps = h.kernelSize * w.kernelSize;
  const targetCount = Math.ceil(taps / 2);
  const channelPairs = Math.ceil(groups / 2);
  const layout = rowLayout(geometry, blockRows);
  if (layout === null || w.diffDstSize > maxWidth || taps * w.diffDstSize > profile.maxWrittenRowProducts ||
      targetCount > maxTargets) {
    return null;
  }
  const split = splitReduction(geometry, 2 * taps, profile.split, Infinity, profile.depthwiseRows.targetFragments);
  // At least two splits where there are two rows: a 2 × 2 block of fragments spans two.
  const rowsPerSplit = split.splits === 1 && split.rows > 1 ? Math.ceil(split.rows / 2) : split.rowsPerSplit;
  const plan = {...split, rowsPerSplit, splits: Math.ceil(split.rows / rowsPerSplit)};
  const targetSplits = planSplitGrid(channelPairs, 1, plan.splits, maxTextureSize);
  return targetSplits === null ? null : {taps, plan, targetCount, targetSplits, ...layout};
}

/**
 * Pass 1 of the webgl filter gradient for depthwise problems on narrow images, as a
 * multi-target program (see ../../multi_target.ts): a fragment sums every tap of one channel pair
 * over one split of the diffDst rows (batch × height), reading packed 2-D views [positions,
 * channels] directly (a texel: two channels of two neighbouring positions). Per diffDst row it
 * reads the row's texels, then per kernel row the texels of the src row it meets, each as the
 * products first need it (interleavedRowSteps in written_rows.ts), adding those products: the
 * row's width, the stride, dilation and pads along it are baked
 * into the text, so which tap meets which position is settled there and nothing along the row
 * is tested or looped over. A kernel row whose src row lies outside (a pad) adds nothing: its
 * products are selected away (not multiplied by 0: 0 · Infinity is NaN).
 *
 * At 3 × 3, stride 1 over rows of 4 this reads 8 texels for 72 multiply-adds where depthwise loops,
 * whose fragments loop over steps of two positions and test the steps at a row's ends (every
 * step of a 4-position row with pads), read 3 for 12; on SwiftShader, where a call costs its
 * reads and the code it runs, not its multiply-adds, that is what the narrow layers need.
 *
 * Target q holds taps 2q and 2q + 1 (tap = kernel row · kernel width + column) as (tap 2q:
 * channel 0, channel 1; tap 2q + 1: channel 0, channel 1).
 *
 * Cache key: DepthwiseRowsText, all the text is made from (once per key: textPerKey); the
 * batch, heights, the stride, dilation and pad along the height, the split and the textures'
 * sizes are uniforms, so one shader serves every batch size.
 */
export function depthwiseRowsProgram(geometry: FilterGradientGeometry, rows: DepthwiseRows, textures: PassTextures): MultiTargetProgram {
  return passProgram(DEPTHWISE_ROWS, geometry, rows, textures);
}

/** depthwiseRowsProgram's uniforms besides the packed reads'. */
function depthwiseRowsUniforms(geometry: FilterGradientGeometry, rows: DepthwiseRows): Uniform[] {
  const [, h] = spatialAxesAs3d(geometry.axes);
  return [rowSplitUniform(rows.plan, h), ['heightAxis', 'ivec3', [h.stride, h.dilation, h.padBegin]], splitGridUniform(rows.targetSplits)];
}

const depthwiseRowsTextKey = (geometry: FilterGradientGeometry, rows: DepthwiseRows, textures: PassTextures,
                              uniforms: readonly Uniform[]): DepthwiseRowsText =>
    ({...writtenRowsText(geometry, rows.diffDstPitch, textures, uniforms), kernelHeight: spatialAxesAs3d(geometry.axes)[1].kernelSize,
      srcPitch: rows.srcPitch});

/** What depthwiseRowsProgram's text is made from: its cache key. */
interface DepthwiseRowsText extends WrittenRowsText {
  readonly kernelHeight: number;
  readonly srcPitch: number;
}

const depthwiseRowsText = textPerKey((text: DepthwiseRowsText) => {
  const w = text.row;
  const taps = text.kernelHeight * w.kernelSize;
  const kernelRows = [...Array(text.kernelHeight).keys()];
  const kernelColumns = [...Array(w.kernelSize).keys()];
  const half = (position: number) => `${position >> 1}.${position % 2 === 1 ? 'zw' : 'xy'}`;
  const meetings = rowMeetings(w);
  const tap = (ky: number, kx: number) => ky * w.kernelSize + kx;
  const sum = (t: number) => `sum${t}`;
  const sums = [...Array(taps).keys()].map(sum);
  const rowSum = (t: number) => rowSumOf(sum(t), text.kernelRowsAlwaysInside);
  // Per kernel row ky: its src row's cursor srcAt<ky> and texels s<ky>_<t>.
  const productsOf = (ky: number, j: number) => kernelColumns.map(kx => {
    const terms = meetings[kx][j].map(({x, column}) => `s${ky}_${half(column)} * d${half(x)}`);
    return terms.length === 0 ? '' : `
          ${rowSum(tap(ky, kx))} += ${terms.join(' + ')};`;
  }).join('');
  // The dy row first, then per kernel row its src texels as its products first need them: one
  // src row at a time, not the rows' reads interleaved.
  const texelsAlong = Math.ceil(w.diffDstSize / 2);
  const steps = [...Array(texelsAlong).keys()].map(j => readDiffDstTexel('diffDstAt', j, `d${j}`, '          ')).join('') +
      kernelRows.map(ky => interleavedRowSteps(texelsAlong, () => '',
                                               [{cursor: `srcAt${ky}`, texel: t => `s${ky}_${t}`, needed: srcTexelsAt(meetings, 2)}],
                                               j => productsOf(ky, j), '          ')).join('');
  const addRowSums = text.kernelRowsAlwaysInside ? '' : kernelRows.map(ky => `
          bool inside${ky} = srcY${ky} >= 0 && srcY${ky} < rowSplit.w;${kernelColumns.map(kx => `
          ${sum(tap(ky, kx))} += inside${ky} ? ${rowSum(tap(ky, kx))} : vec2(0.0);`).join('')}`).join('');
  const tapSum = (t: number) => t < taps ? sum(t) : 'vec2(0.0)';
  return `${packedReadsHeader(text.inputs)}
      ${text.intUniforms}
      ${lines([...Array(Math.ceil(taps / 2)).keys()].map(q => `layout(location = ${q}) out vec4 target${q};`), 6)}
      void main() {
        ${SPLIT_OF_FRAGMENT}
        int col = 2 * fragment.y;
        ${lines(sums.map(name => `vec2 ${name} = vec2(0.0);`), 8)}
${writtenRowsLoop(`
          ivec2 diffDstAt = diffDstTexelOf(row * ${text.diffDstPitch}, col);${kernelRows.map(ky => `
          int srcY${ky} = y * heightAxis.x + ${ky} * heightAxis.y - heightAxis.z;
          ivec2 srcAt${ky} = srcTexelOf((n * rowSplit.w + ${srcRowInImage(`srcY${ky}`, text.kernelRowsAlwaysInside)}) * ${text.srcPitch}, col);`).join('')}${
      declareRowSums(sums, 'vec2', text.kernelRowsAlwaysInside)}${steps}${addRowSums}`)}
        ${lines([...Array(Math.ceil(taps / 2)).keys()].map(q => `target${q} = vec4(${tapSum(2 * q)}, ${tapSum(2 * q + 1)});`), 8)}
      }
`;
});

/**
 * Where depthwiseRowsProgram leaves each element: its target (its tap / 2), texel (its channel
 * pair, split 0) and lane (see TargetLocation).
 */
export function depthwiseRowsTargetLocation(rows: DepthwiseRows): TargetLocation {
  return {targetCount: rows.targetCount, tiling: [1], locate: `
        int tap = k.y * kernelSize.z + k.z;
        int target = tap / 2;
        int pair = diffDstChannel / 2;
        int lane = 2 * (tap - 2 * target) + diffDstChannel - 2 * pair;
        int row = 2 * pair;
        int col = 0;`};
}

/** The pass (see MultiTargetPass). */
export const DEPTHWISE_ROWS: MultiTargetPass<DepthwiseRows, DepthwiseRowsText> =
    Object.freeze<MultiTargetPass<DepthwiseRows, DepthwiseRowsText>>({
  name: 'depthwise rows', family: 'depthwise', form: 'writtenRows', programName: 'DepthwiseRowsProgram', arrangement: 'targets', srcView: 'rows',
  plan: (geometry, device, inputs) => planDepthwiseRows(geometry, device.maxDrawBuffers, device.maxTextureSize, blockRowsOf(inputs), device.profile),
  location: (_, params) => depthwiseRowsTargetLocation(params),
  uniforms: depthwiseRowsUniforms, textKey: depthwiseRowsTextKey, text: depthwiseRowsText});

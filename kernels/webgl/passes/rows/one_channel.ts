// One-channel rows: the multi-target pass 1 for problems with one src channel whose diffDst rows are narrow enough
// to be written out in the text (see passes/pass.ts; the looping pass: ../loops/one_channel_taps.ts).
import {FilterGradientGeometry, spatialAxesAs3d} from '../../../../src/geometry';
import type {TargetLocation} from '../../finish/arrange_targets';
import {MultiTargetProgram} from '../../multi_target';
import {lines, Uniform} from '../../glsl/builder';
import {packedReadsHeader, rowPitch} from '../../glsl/packed_reads';
import {tunedWebglProfile, WebglProfile} from '../../plan/device';
import {RowSplit, splitReduction} from '../../plan/splits';
import {planSplitGrid, SPLIT_OF_FRAGMENT, splitGridUniform, TargetSplits} from '../../finish/sum_target_splits';
import {declareRowSums, interleavedRowSteps, kernelRowsAlwaysInside, readDiffDstTexel, rowMeetings, rowsInOrder, rowSplitUniform, rowSumOf, srcRowInImage, srcTexelsAt, writtenRowsLoop, WrittenRowsText, writtenRowsText} from './written_rows';
import {MultiTargetPass, passProgram, PassTextures} from '../pass';
import {textPerKey} from '../../../text_per_key';

/**
 * R kernel rows × every tap of one diffDst channel pair a fragment, for a problem with one src
 * channel on narrow images (see oneChannelRowsProgram).
 */
export interface OneChannelRows {
  /** Kernel rows a fragment takes (R). */
  readonly kernelRows: number;
  /** Blocks of R kernel rows (⌈kernel height / R⌉). */
  readonly kernelRowBlocks: number;
  /** Texels of taps along a kernel row (two taps each). */
  readonly tapTexels: number;
  readonly diffDstPairs: number;
  readonly plan: RowSplit;
  /** R × tap texels: target r · tapTexels + q holds taps 2q and 2q + 1 of the block's kernel row r. */
  readonly targetCount: number;
  /** Where the targets hold each split (see TargetSplits): a block of [diffDst pairs · kernel row blocks, 1] texels. */
  readonly targetSplits: TargetSplits;
  /** View rows from one diffDst image row to the next (see rowPitch). */
  readonly diffDstPitch: number;
}

export {CONV_BACKPROP_FILTERS_WEBGL_ONE_CHANNEL_ROWS_WIDTH} from '../../plan/device';

/**
 * The view of a src tensor of one channel that one-channel rows read: [positions / 2, 2], two
 * neighbouring positions a row, so a packed texel holds four positions in order.
 */
export const ONE_CHANNEL_ROWS_SRC_COLUMNS = 2;

/**
 * One-channel rows for a channels-last problem of one group and one src channel, 1-D or 2-D, with
 * diffDst rows of at most the profile's oneChannelRows.maxWidth positions laid out position after position and
 * src rows of a multiple of 4 positions (each starts at a texel of the src view); null for any
 * other problem (one-channel loops then take it).
 */
export function planOneChannelRows(geometry: FilterGradientGeometry, maxTargets: number, maxTextureSize: number,
                                   diffDstBlockRows: number, profile: WebglProfile = tunedWebglProfile()): OneChannelRows | null {
  const maxWidth = profile.oneChannelRows.maxWidth;
  const {src, diffDst} = geometry;
  if (geometry.dataFormat !== 'NXC' || geometry.groups !== 1 || src.channels !== 1 || diffDst.channels < 2 ||
      geometry.spatialRank > 2) {
    return null;
  }
  const [, h, w] = spatialAxesAs3d(geometry.axes);
  const diffDstPitch = rowPitch(w.diffDstSize, diffDstBlockRows);
  const tapTexels = Math.ceil(w.kernelSize / 2);
  const kernelRows = Math.min(h.kernelSize, Math.floor(Math.min(profile.maxTargets, maxTargets) / tapTexels));
  if (!rowsInOrder(geometry) || diffDstPitch === null || w.srcSize % 4 !== 0 || w.diffDstSize > maxWidth || kernelRows < 1 ||
      kernelRows * w.kernelSize * w.diffDstSize > profile.maxWrittenRowProducts) {
    return null;
  }
  const kernelRowBlocks = Math.ceil(h.kernelSize / kernelRows);
  const diffDstPairs = Math.ceil(diffDst.channels / 2);
  const targetCount = kernelRows * tapTexels;
  const plan = splitReduction(geometry, 4 * targetCount, profile.split, Infinity, profile.oneChannelRows.targetFragments);
  const targetSplits = planSplitGrid(diffDstPairs * kernelRowBlocks, 1, plan.splits, maxTextureSize);
  return targetSplits === null ? null :
      {kernelRows, kernelRowBlocks, tapTexels, diffDstPairs, plan, targetCount, targetSplits, diffDstPitch};
}

/**
 * Pass 1 of the webgl filter gradient for problems with one src channel on narrow images (a
 * first layer on grey-scale images), as a multi-target program (see ../../multi_target.ts): a
 * fragment sums, for one diffDst channel pair and R kernel rows, every tap over one split of
 * the diffDst rows. The src is read as the packed view [positions / 2, 2] (four positions a
 * texel, where the tensor's own packing [positions, 1] holds two and two empty lanes), diffDst
 * as the packed view [positions, channels]. Along each diffDst row a fragment reads, texel by
 * texel (interleavedRowSteps in written_rows.ts), its pair's texel once for its R kernel rows
 * and, per kernel row, the texels of the src row it meets that the products there first need;
 * the row's width, the stride, dilation and pad along it are baked into the text (as in dense
 * rows: nothing along the row tested or looped over), and a kernel row in the pads or past the
 * kernel adds nothing (its sums kept by a component select).
 *
 * Cache key: OneChannelRowsText, all the text is made from (once per key: textPerKey); the batch,
 * heights, kernel height, the stride, dilation and pad along the height, the split and the
 * textures' sizes are uniforms.
 */
export function oneChannelRowsProgram(geometry: FilterGradientGeometry, rows: OneChannelRows, textures: PassTextures): MultiTargetProgram {
  return passProgram(ONE_CHANNEL_ROWS, geometry, rows, textures);
}

/** oneChannelRowsProgram's uniforms besides the packed reads'. */
function oneChannelRowsUniforms(geometry: FilterGradientGeometry, rows: OneChannelRows): Uniform[] {
  const [, h, w] = spatialAxesAs3d(geometry.axes);
  return [
    rowSplitUniform(rows.plan, h),
    ['heightAxis', 'ivec4', [h.stride, h.dilation, h.padBegin, h.kernelSize]],
    ['blocks', 'ivec2', [rows.kernelRowBlocks, w.srcSize]],
    splitGridUniform(rows.targetSplits),
  ];
}

function oneChannelRowsTextKey(geometry: FilterGradientGeometry, rows: OneChannelRows, textures: PassTextures,
                               uniforms: readonly Uniform[]): OneChannelRowsText {
  const h = spatialAxesAs3d(geometry.axes)[1];
  // Kernel rows past the kernel (a last block that overhangs it) are selected away as pads are.
  const alwaysInside = kernelRowsAlwaysInside(h) && rows.kernelRowBlocks * rows.kernelRows === h.kernelSize;
  return {...writtenRowsText(geometry, rows.diffDstPitch, textures, uniforms, alwaysInside), kernelRows: rows.kernelRows};
}

/** What oneChannelRowsProgram's text is made from: its cache key. */
interface OneChannelRowsText extends WrittenRowsText {
  /** R. */
  readonly kernelRows: number;
}

const oneChannelRowsText = textPerKey((text: OneChannelRowsText) => {
  const w = text.row;
  const R = text.kernelRows;
  const tapTexelCount = Math.ceil(w.kernelSize / 2);
  const kernelRowIndices = [...Array(R).keys()];
  const tapTexels = [...Array(tapTexelCount).keys()];
  const meetings = rowMeetings(w);
  // Per kernel row r of the block: its src row's cursor srcAt<r> and texels s<r>_<t> (the src
  // view's texel t holds positions 4t … 4t + 3 of a row).
  const srcValue = (r: number, column: number) => `s${r}_${column >> 2}.${'xyzw'[column & 3]}`;
  const diffDstValue = (x: number) => `d${x >> 1}.${x % 2 === 1 ? 'zw' : 'xy'}`;
  const tapTerms = (r: number, tap: number, j: number) => tap >= w.kernelSize ? [] :
      meetings[tap][j].map(({x, column}) => `${srcValue(r, column)} * ${diffDstValue(x)}`);
  const sum = (r: number, q: number) => `sum${r}_${q}`;
  const rowSum = (r: number, q: number) => rowSumOf(sum(r, q), text.kernelRowsAlwaysInside);
  // Target r · tap texels + q's sum.
  const sums = kernelRowIndices.flatMap(r => tapTexels.map(q => sum(r, q)));
  const products = (j: number) => kernelRowIndices.flatMap(r => tapTexels.map(q => {
    const [even, odd] = [tapTerms(r, 2 * q, j), tapTerms(r, 2 * q + 1, j)];
    const lanes = (terms: string[]) => terms.length === 0 ? 'vec2(0.0)' : terms.join(' + ');
    return even.length + odd.length === 0 ? '' : `
          ${rowSum(r, q)} += vec4(${lanes(even)}, ${lanes(odd)});`;
  })).join('');
  const steps = interleavedRowSteps(Math.ceil(w.diffDstSize / 2), j => readDiffDstTexel('diffDstAt', j, `d${j}`, '          '),
                                    kernelRowIndices.map(r => ({cursor: `srcAt${r}`, texel: t => `s${r}_${t}`, needed: srcTexelsAt(meetings, 4)})),
                                    products, '          ');
  const addRowSums = text.kernelRowsAlwaysInside ? '' : kernelRowIndices.map(r => `
          bvec4 insideLanes${r} = bvec4(ky${r} < heightAxis.w && srcY${r} >= 0 && srcY${r} < rowSplit.w);${tapTexels.map(q => `
          ${sum(r, q)} = mix(${sum(r, q)}, ${sum(r, q)} + ${rowSum(r, q)}, insideLanes${r});`).join('')}`).join('');
  return `${packedReadsHeader(text.inputs)}
      ${text.intUniforms}
      ${lines(sums.map((_, t) => `layout(location = ${t}) out vec4 target${t};`), 6)}
      void main() {
        ${SPLIT_OF_FRAGMENT}
        int pair = fragment.y / blocks.x;
        int block = fragment.y - pair * blocks.x;
        int diffDstCol = 2 * pair;
        ${lines(sums.map(name => `vec4 ${name} = vec4(0.0);`), 8)}
${writtenRowsLoop(`
          ivec2 diffDstAt = diffDstTexelOf(row * ${text.diffDstPitch}, diffDstCol);${kernelRowIndices.map(r => `
          int ky${r} = block * ${R} + ${r};
          int srcY${r} = y * heightAxis.x + ky${r} * heightAxis.y - heightAxis.z;
          ivec2 srcAt${r} = srcTexelOf(((n * rowSplit.w + ${srcRowInImage(`srcY${r}`, text.kernelRowsAlwaysInside)}) * blocks.y) / 2, 0);`).join('')}${
      declareRowSums(sums, 'vec4', text.kernelRowsAlwaysInside)}${steps}${addRowSums}`)}
        ${lines(sums.map((name, t) => `target${t} = ${name};`), 8)}
      }
`;
});

/**
 * Where oneChannelRowsProgram leaves each element: its target (its kernel row in the block · tap
 * texels + its tap / 2), texel (pair, kernel row block; split 0) and lane (see TargetLocation).
 */
export function oneChannelRowsTargetLocation(rows: OneChannelRows): TargetLocation {
  const R = rows.kernelRows;
  // tiling: kernel row blocks
  return {targetCount: rows.targetCount, tiling: [rows.kernelRowBlocks], locate: `
        int block = k.y / ${R};
        int target = (k.y - block * ${R}) * ${rows.tapTexels} + k.z / 2;
        int pair = diffDstChannel / 2;
        int lane = 2 * (k.z - 2 * (k.z / 2)) + diffDstChannel - 2 * pair;
        int row = 2 * (pair * tiling[0] + block);
        int col = 0;`};
}

/** The pass (see MultiTargetPass). */
export const ONE_CHANNEL_ROWS: MultiTargetPass<OneChannelRows, OneChannelRowsText> = Object.freeze<MultiTargetPass<OneChannelRows, OneChannelRowsText>>({
  name: 'one-channel rows', family: 'oneSrcChannel', form: 'writtenRows', programName: 'OneChannelRowsProgram', arrangement: 'targets', srcView: 'pairedPositions',
  plan: (geometry, device, inputs) => planOneChannelRows(geometry, device.maxDrawBuffers, device.maxTextureSize, inputs.diffDst.oddBlockRows, device.profile),
  location: (_, params) => oneChannelRowsTargetLocation(params),
  uniforms: oneChannelRowsUniforms, textKey: oneChannelRowsTextKey, text: oneChannelRowsText});

// Dense loops: the multi-target pass 1 for dense problems, looping along the rows (see passes/pass.ts; for
// narrow rows: ../rows/dense.ts).
import {FilterGradientGeometry, SpatialAxis, spatialAxesAs3d} from '../../../../src/geometry';
import type {TargetLocation} from '../../finish/arrange_targets';
import {geometryUniforms, INSIDE_FUNCTIONS, position, splitRowsLoop} from '../../glsl/geometry';
import type {MultiTargetProgram} from '../../multi_target';
import {declareUniforms, lines, Uniform} from '../../glsl/builder';
import {InputFolding, inputFolding, packedReadsHeader} from '../../glsl/packed_reads';
import {tunedWebglProfile, WebglProfile} from '../../plan/device';
import {packedTexelsAlign, RowSplit, splitReduction} from '../../plan/splits';
import {planSplitGrid, SPLIT_OF_FRAGMENT, splitGridUniform, TargetSplits} from '../../finish/sum_target_splits';
import {wholeRowSteps} from './tap_rows';
import {MultiTargetPass, passProgram, PassTextures} from '../pass';
import {paddedBlocks} from '../../plan/inputs';
import {textPerKey} from '../../../text_per_key';

/**
 * The shape of a dense tile: `srcPairs` × `diffDstPairs` channel pairs of one group and kernel
 * offset, one render target (a 2×2 texel) per pair of pairs.
 */
export interface DenseLoops {
  readonly srcPairs: number;
  readonly diffDstPairs: number;
  /** Tiles along src channels in a group. */
  readonly srcBlocks: number;
  /** Tiles along diffDst channels in a group. */
  readonly diffDstBlocks: number;
  /**
   * 1×1 kernel, stride 1, no padding: src and diffDst views have the same rows, the reduction
   * is over all of them at once, and `plan` splits them (rows = positions, an even number per
   * split) instead of diffDst rows.
   */
  readonly pointwise: boolean;
  readonly plan: RowSplit;
  /** Where the targets hold each split (see TargetSplits): a block of [groups · srcBlocks, diffDstBlocks · kernel volume] texels. */
  readonly targetSplits: TargetSplits;
}

/**
 * The dense tile for a problem 'packedTiles' reads (channels-last, groups at even channels),
 * given how many targets a draw may write and the largest texture side tfjs allocates
 * unfolded (WEBGL_MAX_TEXTURE_SIZE), and whether an input's view has padded blocks (see
 * PackedTexture.blockRows); null when a tile would have fewer than 4 targets (then the
 * single-target program does as well) or the targets cannot fit. A step over two positions reads diffDstPairs
 * diffDst texels and 2 · srcPairs src texels for 8 · srcPairs · diffDstPairs multiply-adds:
 * 2 × 4 pairs is the cheapest in reads of the 8-target shapes.
 */
export function planDenseLoops(geometry: FilterGradientGeometry, maxTargets: number, maxTextureSize: number,
                               paddedBlocks = false, profile: WebglProfile = tunedWebglProfile()): DenseLoops | null {
  if (!packedTexelsAlign(geometry) || geometry.src.channelsPerGroup < 2 || geometry.diffDst.channelsPerGroup < 2) return null;
  const srcPairsInGroup = Math.ceil(geometry.src.channelsPerGroup / 2);
  const diffDstPairsInGroup = Math.ceil(geometry.diffDst.channelsPerGroup / 2);
  const targets = Math.min(profile.maxTargets, maxTargets);
  const diffDstPairs = Math.min(diffDstPairsInGroup, Math.max(1, Math.floor(targets / 2)));
  const srcPairs = Math.min(srcPairsInGroup, Math.floor(targets / diffDstPairs));
  if (srcPairs * diffDstPairs < 4) return null;
  const srcBlocks = Math.ceil(srcPairsInGroup / srcPairs);
  const diffDstBlocks = Math.ceil(diffDstPairsInGroup / diffDstPairs);
  const kernelVolume = geometry.axes.reduce((volume, axis) => volume * axis.kernelSize, 1);
  // Fragments: one per tile and split; the filter elements a fragment sums include the
  // ragged tiles' padding, which costs the same.
  const outputsPerFragment = 4 * srcPairs * diffDstPairs;
  // The pointwise sweep runs over all rows of the views at once: it cannot skip pad rows.
  const pointwise = !paddedBlocks && geometry.axes.every(axis =>
      axis.kernelSize === 1 && axis.stride === 1 && axis.padBegin === 0 && axis.srcSize === axis.diffDstSize);
  let plan = splitReduction(geometry, outputsPerFragment, profile.split);
  if (pointwise) {
    const positions = plan.rows * plan.rowLength;
    const positionsPerSplit = 2 * Math.ceil(positions / plan.splits / 2);
    plan = {rows: positions, rowLength: 1, splits: Math.ceil(positions / positionsPerSplit), rowsPerSplit: positionsPerSplit};
  }
  // The grid of splits must fit a texture unfolded.
  const targetSplits = planSplitGrid(geometry.groups * srcBlocks, diffDstBlocks * kernelVolume, plan.splits, maxTextureSize);
  return targetSplits === null ? null : {srcPairs, diffDstPairs, srcBlocks, diffDstBlocks, pointwise, plan, targetSplits};
}

/**
 * Pass 1 of the webgl filter gradient for dense channels-last problems on WebGL 2, as a
 * multi-target program (see ../../multi_target.ts): a fragment sums a dense tile — srcPairs ×
 * diffDstPairs channel pairs of one group and kernel offset (2 × 4 pairs: 32 filter elements)
 * — over one split of batch × diffDst positions, from packed 2-D views [positions, channels]
 * read directly (a texel holds two channels of two neighbouring positions), and writes pair
 * (i, j) to target i · diffDstPairs + j as the 2×2 texel (s0·d0, s0·d1, s1·d0, s1·d1).
 *
 * A step over two positions reads diffDstPairs diffDst texels and two src texels per src pair
 * — one where the stride along the row is 1 (the step's second texel, carried over, is the next
 * step's first) and in the pointwise sweep, where src and diffDst rows coincide — for 8 ·
 * srcPairs · diffDstPairs multiply-adds: 6–8 reads per 64 instead of the single-target program's
 * 3 per 8. Texel halves outside a row are peeled, not zeroed (0 · Infinity is NaN), as in packedRowSweep; the
 * channel pairs past a group's last (ragged tiles) read neighbouring data into lanes that
 * the arrangement never reads.
 *
 * Cache key: the shader text, which bakes in the tile shape (srcPairs, diffDstPairs), whether
 * the problem is pointwise, whether the stride along the row is 1 and whether each input's
 * texture is folded; sizes, strides, pads,
 * dilations, groups, channel counts, the split and the textures' sizes are uniforms, so one
 * program serves every problem of that kind and every batch size.
 */
export function denseLoopsProgram(geometry: FilterGradientGeometry, tiles: DenseLoops, textures: PassTextures): MultiTargetProgram {
  return passProgram(DENSE_LOOPS, geometry, tiles, textures);
}

/** denseLoopsProgram's uniforms besides the packed reads'. */
function denseLoopsUniforms(geometry: FilterGradientGeometry, tiles: DenseLoops, textures: PassTextures): Uniform[] {
  const [d, h, w] = spatialAxesAs3d(geometry.axes);
  const each = (f: (axis: SpatialAxis) => number) => [f(d), f(h), f(w)];
  const kernelVolume = d.kernelSize * h.kernelSize * w.kernelSize;
  return [
    ['kernelSize', 'ivec3', each(axis => axis.kernelSize)],
    ...geometryUniforms(geometry, {src: textures.src.blockRows, diffDst: textures.diffDst.blockRows}),
    ['sizes', 'ivec4', [geometry.src.channelsPerGroup, geometry.diffDst.channelsPerGroup, tiles.plan.rowsPerSplit, tiles.plan.rows]],
    ['tiling', 'ivec3', [tiles.srcBlocks, kernelVolume, geometry.groups]],
    splitGridUniform(tiles.targetSplits),
  ];
}

/** What denseLoopsProgram's text is made from: its cache key. */
interface DenseLoopsText {
  readonly srcPairs: number;
  readonly diffDstPairs: number;
  readonly pointwise: boolean;
  /** The stride along the row is 1: a step's second src texel is the next step's first. */
  readonly slides: boolean;
  /** wholeRowSteps. */
  readonly wholeRows: boolean;
  readonly inputs: InputFolding;
  /** The integer uniforms' declarations. */
  readonly intUniforms: string;
}

function denseLoopsTextKey(geometry: FilterGradientGeometry, tiles: DenseLoops, textures: PassTextures,
                          uniforms: readonly Uniform[]): DenseLoopsText {
  return {srcPairs: tiles.srcPairs, diffDstPairs: tiles.diffDstPairs, pointwise: tiles.pointwise,
          slides: spatialAxesAs3d(geometry.axes)[2].stride === 1, wholeRows: wholeRowSteps(geometry, textures.diffDst),
          inputs: inputFolding(textures), intUniforms: declareUniforms(uniforms)};
}

const denseLoopsText = textPerKey((key: DenseLoopsText) => {
  const {srcPairs, diffDstPairs, slides, wholeRows} = key;
  const pairs = (count: number) => Array.from({length: count}, (_, i) => i);
  const srcIs = pairs(srcPairs);
  const diffDstJs = pairs(diffDstPairs);
  const targets = srcIs.flatMap(i => diffDstJs.map(j => ({i, j, name: `target${i * diffDstPairs + j}`})));
  // The loops read a folded texture through cursors (see cursorFunctions in glsl/packed_reads.ts),
  // stepped with an add and a compare where its texel index would take a division per read; a
  // row-major one by its row, which holds fewer values live. `cursor` names the stream's cursor, set up at view row
  // `row` before the loop; a read at view row `rowNow` then moves it on by `step` (GLSL ivec2).
  const stream = (input: 'src' | 'diffDst', cursor: string, row: string, col: string, step: string):
      {setup: string; read: (variable: string, rowNow: string) => string} => {
    const Name = input === 'src' ? 'Src' : 'DiffDst';
    return key.inputs[input].folded ? {
      setup: `
          ivec2 ${cursor} = ${input}TexelOf(${row}, ${col});`,
      read: (variable: string) => `
            vec4 ${variable} = read${Name}At(${cursor});
            ${cursor} = ${input}Advance(${cursor}, ${step});`,
    } : {
      setup: '',
      read: (variable: string, rowNow: string) => `
            vec4 ${variable} = read${Name}(${rowNow}, ${col});`,
    };
  };
  // Both sweeps' loops read diffDst from view row texelRow on, one texel row a step.
  const diffDstLoop = diffDstJs.map(j => stream('diffDst', `y${j}At`, 'texelRow', `diffDstCol + ${2 * j}`, 'diffDstTexelRowStep'));
  const readDiffDst = (row: string) => diffDstJs.map(j => `
            vec4 y${j} = readDiffDst(${row}, diffDstCol + ${2 * j});`).join('');
  // Products of the src values of the step's first (A) and/or second (B) position, given as
  // vec4 (channel 0, channel 0, channel 1, channel 1) expressions per src pair.
  const accumulate = (a: ((i: number) => string) | null, b: ((i: number) => string) | null) => targets.map(({i, j}) => `
            sum${i}${j} += ${[a && `${a(i)} * y${j}.xyxy`, b && `${b(i)} * y${j}.zwzw`].filter(Boolean).join(' + ')};`).join('');
  const readSrc = (row: string, variable: string, odd: string) => srcIs.map(i => `
            vec4 ${variable}${i} = readSrc(${row}, srcCol + ${2 * i});
            ${variable}${i} = ${odd} ? ${variable}${i}.zzww : ${variable}${i}.xxyy;`).join('');
  // At stride 1 along the row (slides) a step's two src positions lie in one texel or two
  // neighbours, the second being the next step's first: one new src texel a pair a step, carried
  // over. Rows of whole steps, every tap inside (wholeRows): no half-texel step at a row's start or end.
  const sums = lines(targets.map(({i, j}) => `vec4 sum${i}${j} = vec4(0.0);`), 8);
  // Pointwise: view row r of src pairs with view row r of diffDst; a split is an even run of rows.
  const pointwiseSrc = srcIs.map(i => stream('src', `a${i}At`, 'texelRow', `srcCol + ${2 * i}`, 'srcTexelRowStep'));
  const pointwiseSweep = `
        ${sums}
        int srcCol = srcChannelAll;
        int diffDstCol = diffDstChannel;
        int texelRow = split * sizes.z;
        int rowEnd = min(texelRow + sizes.z, sizes.w);${diffDstLoop.map(y => y.setup).join('')}${
      pointwiseSrc.map(a => a.setup).join('')}
        for (; texelRow + 1 < rowEnd; texelRow += 2) {${diffDstLoop.map((y, j) => y.read(`y${j}`, 'texelRow')).join('')}${
      pointwiseSrc.map((a, i) => a.read(`a${i}`, 'texelRow')).join('')}${accumulate(i => `a${i}.xxyy`, i => `a${i}.zzww`)}
        }
        if (texelRow < rowEnd) {  // an odd number of positions ends at a texel's first half
          ${readDiffDst('texelRow')}${srcIs.map(i => `
            vec4 a${i} = readSrc(texelRow, srcCol + ${2 * i});`).join('')}${accumulate(i => `a${i}.xxyy`, null)}
        }
`;
  const nextSrc = srcIs.map(i => stream('src', `next${i}At`, 'rowA + 2', `srcCol + ${2 * i}`, 'srcTexelRowStep'));
  const firstSrc = srcIs.map(i => stream('src', `a${i}At`, 'rowA', `srcCol + ${2 * i}`, 'srcStepAlong'));
  const secondSrc = srcIs.map(i => stream('src', `b${i}At`, 'rowA + srcRowStep', `srcCol + ${2 * i}`, 'srcStepAlong'));
  const rowSweeps = `
        ivec3 shift = k * dilation - padBegin;
        ivec3 first = ivec3(firstInside(shift.x, stride.x), firstInside(shift.y, stride.y),
                            firstInside(shift.z, stride.z));
        ivec3 end = ivec3(endInside(shift.x, stride.x, srcSize.x, diffDstSize.x),
                          endInside(shift.y, stride.y, srcSize.y, diffDstSize.y),
                          endInside(shift.z, stride.z, srcSize.z, diffDstSize.z));
        int srcRowStep = stride.z * srcRowStrides[4];${slides || !key.inputs.src.folded ? '' : `
        // Two positions on: the src texels move on srcRowStep texel rows.
        ivec2 srcStepAlong = srcRowsStep(srcRowStep);`}
        int diffDstRowStep = diffDstRowStrides[4];
        ${sums}
${splitRowsLoop('sizes.z', 'sizes.z', 'sizes.w')}
          ivec3 p = ivec3(pd, ph, first.z);
          ivec3 tap = p * stride + shift;
          int srcRow = ${position('src', 'Row', 'n', 'srcChannelAll', 'tap')};
          int srcCol = ${position('src', 'Col', 'n', 'srcChannelAll', 'tap')};
          int diffDstRow = ${position('diffDst', 'Row', 'n', 'diffDstChannel', 'p')};
          int diffDstCol = ${position('diffDst', 'Col', 'n', 'diffDstChannel', 'p')};
          int rowEnd = diffDstRow + (end.z - first.z) * diffDstRowStep;
          int texelRow = diffDstRow - (isOdd(diffDstRow) ? 1 : 0);
          int rowA = srcRow + (texelRow - diffDstRow) * srcRowStep;
          bool oddA = isOdd(rowA);
          bool oddB = isOdd(rowA + srcRowStep);
${wholeRows ? '' : `          if (texelRow < diffDstRow) {  // the row starts at the texel's second position
            if (diffDstRow < rowEnd) {${readDiffDst('texelRow')}${readSrc('rowA + srcRowStep', 'b', 'oddB')}${
      accumulate(null, i => `b${i}`)}
            }
            texelRow += 2;
            rowA += 2 * srcRowStep;
          }
`}${diffDstLoop.map(y => y.setup).join('')}${slides ? `${srcIs.map(i => `
          vec4 current${i} = readSrc(rowA, srcCol + ${2 * i});`).join('')}${nextSrc.map(b => b.setup).join('')}
          for (; texelRow + 1 < rowEnd; texelRow += 2) {${diffDstLoop.map((y, j) => y.read(`y${j}`, 'texelRow')).join('')}${
      srcIs.map(i => `${nextSrc[i].read(`next${i}`, 'rowA + 2')}
            vec4 a${i} = oddA ? current${i}.zzww : current${i}.xxyy;
            vec4 b${i} = oddA ? next${i}.xxyy : current${i}.zzww;
            current${i} = next${i};`).join('')}${accumulate(i => `a${i}`, i => `b${i}`)}
            rowA += 2;
          }
` : `${[...firstSrc, ...secondSrc].map(a => a.setup).join('')}
          for (; texelRow + 1 < rowEnd; texelRow += 2) {${diffDstLoop.map((y, j) => y.read(`y${j}`, 'texelRow')).join('')}${
      srcIs.map(i => `${firstSrc[i].read(`a${i}`, 'rowA')}
            a${i} = oddA ? a${i}.zzww : a${i}.xxyy;${secondSrc[i].read(`b${i}`, 'rowA + srcRowStep')}
            b${i} = oddB ? b${i}.zzww : b${i}.xxyy;`).join('')}${accumulate(i => `a${i}`, i => `b${i}`)}
            rowA += 2 * srcRowStep;
          }
`}${wholeRows ? '' : `          if (texelRow < rowEnd) {  // the row ends at the texel's first position
            ${readDiffDst('texelRow')}${readSrc('rowA', 'a', 'oddA')}${accumulate(i => `a${i}`, null)}
          }
`}        }
`;
  return `${packedReadsHeader(key.inputs)}
      ${key.intUniforms}
      ${lines(targets.map(({name}, t) => `layout(location = ${t}) out vec4 ${name};`), 6)}
${INSIDE_FUNCTIONS}
      void main() {
        ${SPLIT_OF_FRAGMENT}
        // A split's rows: (group, src block); its columns: (diffDst block, kernel offset).
        // Fragments run along a row in order, so the kernel offsets of a tile run one after
        // another and find the diffDst and src texels their neighbour just read still in the
        // cache.
        int group = fragment.y / tiling.x;
        int srcBlock = fragment.y - tiling.x * group;
        int diffDstBlock = fragment.x / tiling.y;
        int kernelIndex = fragment.x - tiling.y * diffDstBlock;
        ivec3 k = ivec3(kernelIndex / (kernelSize.y * kernelSize.z), 0, 0);
        kernelIndex -= k.x * kernelSize.y * kernelSize.z;
        k.y = kernelIndex / kernelSize.z;
        k.z = kernelIndex - k.y * kernelSize.z;
        int srcChannelAll = group * sizes.x + ${2 * srcPairs} * srcBlock;
        int diffDstChannel = group * sizes.y + ${2 * diffDstPairs} * diffDstBlock;

${key.pointwise ? pointwiseSweep : rowSweeps}        ${lines(targets.map(({i, j, name}) => `${name} = sum${i}${j};`), 8)}
      }
`;
});

/**
 * Where denseLoopsProgram leaves each element: its target, texel (split 0) and lane in the targets' packed views
 * [2 · texel rows, 2 · texel columns] (see TargetLocation).
 */
export function denseLoopsTargetLocation(geometry: FilterGradientGeometry, tiles: DenseLoops): TargetLocation {
  const {srcPairs, diffDstPairs} = tiles;
  const kernelVolume = geometry.axes.reduce((volume, axis) => volume * axis.kernelSize, 1);
  // tiling: diffDst channels per group, src blocks, kernel volume
  const tiling = [geometry.diffDst.channelsPerGroup, tiles.srcBlocks, kernelVolume];
  return {targetCount: srcPairs * diffDstPairs, tiling, locate: `
        int group = diffDstChannel / tiling[0];
        int diffDstInGroup = diffDstChannel - group * tiling[0];
        int srcBlock = srcChannel / ${2 * srcPairs};
        int srcInTile = srcChannel - srcBlock * ${2 * srcPairs};
        int diffDstBlock = diffDstInGroup / ${2 * diffDstPairs};
        int diffDstInTile = diffDstInGroup - diffDstBlock * ${2 * diffDstPairs};
        int target = (srcInTile / 2) * ${diffDstPairs} + diffDstInTile / 2;
        int kernelIndex = (k.x * kernelSize.y + k.y) * kernelSize.z + k.z;
        int row = 2 * (group * tiling[1] + srcBlock);
        int col = 2 * (diffDstBlock * tiling[2] + kernelIndex);
        int lane = 2 * (srcInTile - 2 * (srcInTile / 2)) + diffDstInTile - 2 * (diffDstInTile / 2);`};
}

/** The pass (see MultiTargetPass). */
export const DENSE_LOOPS: MultiTargetPass<DenseLoops, DenseLoopsText> = Object.freeze<MultiTargetPass<DenseLoops, DenseLoopsText>>({
  name: 'dense loops', family: 'dense', form: 'loops', programName: 'DenseLoopsProgram', arrangement: 'channelTexels', srcView: 'rows',
  plan: (geometry, device, inputs) => planDenseLoops(geometry, device.maxDrawBuffers, device.maxTextureSize, paddedBlocks(inputs), device.profile),
  location: denseLoopsTargetLocation, uniforms: denseLoopsUniforms, textKey: denseLoopsTextKey, text: denseLoopsText});

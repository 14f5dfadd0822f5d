import type {GPGPUProgram} from '@tensorflow/tfjs-backend-webgl';

import {FilterGradientGeometry, SpatialAxis, spatialAxesAs3d} from '../../src/geometry';
import {decodeFilterIndex, filterAxesInLayoutOrder, INSIDE_FUNCTIONS, position, tensorUniforms, Uniform} from './filter_gradient_program';
import type {MultiTargetProgram} from './multi_target';
import {PackedTexture, packedReadsHeader, packedReadsUniforms} from './packed_reads';
import {MAX_SPLITS, packedTexelsAlign, ReductionPlan, splitReduction} from './reduction_plan';

/**
 * The shape of a wide tile: `srcPairs` × `diffDstPairs` channel pairs of one group and kernel
 * offset, one render target (a 2×2 texel) per pair of pairs.
 */
export interface WideTiles {
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
  readonly plan: Pick<ReductionPlan, 'rows' | 'rowLength' | 'splits' | 'rowsPerSplit'>;
  /** Each target's texels: [splits · groups · kernel volume · srcBlocks, diffDstBlocks]. */
  readonly targetRows: number;
  readonly targetColumns: number;
}

/**
 * The wide tile for a problem 'packedTiles' reads (channels-last, groups at even channels),
 * given how many targets a draw may write and the largest texture side tfjs allocates
 * unfolded (WEBGL_MAX_TEXTURE_SIZE); null when a tile would have fewer than 4 targets (then the
 * single-target program does as well) or the targets cannot fit. A step over two positions reads diffDstPairs
 * diffDst texels and 2 · srcPairs src texels for 8 · srcPairs · diffDstPairs multiply-adds:
 * 2 × 4 pairs is the cheapest in reads of the 8-target shapes.
 */
export function planWideTiles(geometry: FilterGradientGeometry, maxTargets: number, maxTextureSize: number): WideTiles | null {
  if (!packedTexelsAlign(geometry) || geometry.src.channelsPerGroup < 2 || geometry.diffDst.channelsPerGroup < 2) return null;
  const srcPairsInGroup = Math.ceil(geometry.src.channelsPerGroup / 2);
  const diffDstPairsInGroup = Math.ceil(geometry.diffDst.channelsPerGroup / 2);
  const targets = Math.min(8, maxTargets);
  const diffDstPairs = Math.min(diffDstPairsInGroup, Math.max(1, Math.floor(targets / 2)));
  const srcPairs = Math.min(srcPairsInGroup, Math.floor(targets / diffDstPairs));
  if (srcPairs * diffDstPairs < 4) return null;
  const srcBlocks = Math.ceil(srcPairsInGroup / srcPairs);
  const diffDstBlocks = Math.ceil(diffDstPairsInGroup / diffDstPairs);
  const kernelVolume = geometry.axes.reduce((volume, axis) => volume * axis.kernelSize, 1);
  // Fragments: one per tile and split; the filter elements a fragment sums include the
  // ragged tiles' padding, which costs the same.
  const outputsPerFragment = 4 * srcPairs * diffDstPairs;
  const pointwise = geometry.axes.every(axis =>
      axis.kernelSize === 1 && axis.stride === 1 && axis.padBegin === 0 && axis.srcSize === axis.diffDstSize);
  // A target's texel rows (splits × groups × kernel volume × srcBlocks) must fit a texture unfolded.
  const tilesPerSplit = geometry.groups * kernelVolume * srcBlocks;
  const maxSplits = Math.floor(maxTextureSize / tilesPerSplit);
  if (maxSplits < 1 || diffDstBlocks > maxTextureSize) return null;
  let plan = splitReduction(geometry, outputsPerFragment, Math.min(MAX_SPLITS, maxSplits));
  if (pointwise) {
    const positions = plan.rows * plan.rowLength;
    const positionsPerSplit = 2 * Math.ceil(positions / plan.splits / 2);
    plan = {rows: positions, rowLength: 1, splits: Math.ceil(positions / positionsPerSplit), rowsPerSplit: positionsPerSplit};
  }
  return {
    srcPairs, diffDstPairs, srcBlocks, diffDstBlocks, pointwise, plan,
    targetRows: plan.splits * tilesPerSplit,
    targetColumns: diffDstBlocks,
  };
}

/**
 * Pass 1 of the webgl filter gradient for dense channels-last problems on WebGL 2, as a
 * multi-target program (see multi_target.ts): a fragment sums a wide tile — srcPairs ×
 * diffDstPairs channel pairs of one group and kernel offset (2 × 4 pairs: 32 filter elements)
 * — over one split of batch × diffDst positions, from packed 2-D views [positions, channels]
 * read directly (a texel holds two channels of two neighbouring positions), and writes pair
 * (i, j) to target i · diffDstPairs + j as the 2×2 texel (s0·d0, s0·d1, s1·d0, s1·d1).
 *
 * A step over two positions reads diffDstPairs diffDst texels and, per src pair, one src texel
 * when the two taps share it (stride 1, even tap row) or two, for 8 · srcPairs · diffDstPairs
 * multiply-adds: 6–8 reads per 64 instead of the single-target program's 3 per 8. Texel halves
 * outside a row are peeled, not zeroed (0 · Infinity is NaN), as in packedRowSweep; the
 * channel pairs past a group's last (ragged tiles) read neighbouring data into lanes that
 * ArrangeWideTilesProgram never reads.
 *
 * Cache key: the shader text, which bakes in only the tile shape (srcPairs, diffDstPairs);
 * sizes, strides, pads, dilations, groups, channel counts, the split and the textures' sizes
 * are uniforms, so one program serves every problem with that tile shape and every batch size.
 */
export function wideTilesProgram(geometry: FilterGradientGeometry, tiles: WideTiles,
                                 textures: {src: PackedTexture; diffDst: PackedTexture}): MultiTargetProgram {
  const {srcPairs, diffDstPairs, plan} = tiles;
  const [d, h, w] = spatialAxesAs3d(geometry.axes);
  const each = (f: (axis: SpatialAxis) => number) => [f(d), f(h), f(w)];
  const kernelVolume = d.kernelSize * h.kernelSize * w.kernelSize;
  const ints: Uniform[] = [
    ['kernelSize', 'ivec3', each(axis => axis.kernelSize)],
    ['srcSize', 'ivec3', each(axis => axis.srcSize)],
    ['diffDstSize', 'ivec3', each(axis => axis.diffDstSize)],
    ['stride', 'ivec3', each(axis => axis.stride)],
    ['dilation', 'ivec3', each(axis => axis.dilation)],
    ['padBegin', 'ivec3', each(axis => axis.padBegin)],
    ...tensorUniforms('src', geometry.src, each(axis => axis.srcStride), geometry.dataFormat),
    ...tensorUniforms('diffDst', geometry.diffDst, each(axis => axis.diffDstStride), geometry.dataFormat),
    ['sizes', 'ivec4', [geometry.src.channelsPerGroup, geometry.diffDst.channelsPerGroup, plan.rowsPerSplit, plan.rows]],
    ['tiling', 'ivec3', [tiles.srcBlocks, kernelVolume, geometry.groups]],
  ];
  const pairs = (count: number) => Array.from({length: count}, (_, i) => i);
  const srcIs = pairs(srcPairs);
  const diffDstJs = pairs(diffDstPairs);
  const targets = srcIs.flatMap(i => diffDstJs.map(j => ({i, j, name: `target${i * diffDstPairs + j}`})));
  const readDiffDst = (row: string) => diffDstJs.map(j => `
            vec4 y${j} = readDiffDst(${row}, diffDstCol + ${2 * j});`).join('');
  // Products of the src values of the step's first (A) and/or second (B) position, given as
  // vec4 (channel 0, channel 0, channel 1, channel 1) expressions per src pair.
  const accumulate = (a: ((i: number) => string) | null, b: ((i: number) => string) | null) => targets.map(({i, j}) => `
            sum${i}${j} += ${[a && `${a(i)} * y${j}.xyxy`, b && `${b(i)} * y${j}.zwzw`].filter(Boolean).join(' + ')};`).join('');
  const readSrc = (row: string, variable: string, odd: string) => srcIs.map(i => `
            vec4 ${variable}${i} = readSrc(${row}, srcCol + ${2 * i});
            ${variable}${i} = ${odd} ? ${variable}${i}.zzww : ${variable}${i}.xxyy;`).join('');
  const sums = targets.map(({i, j}) => `vec4 sum${i}${j} = vec4(0.0);`).join('\n        ');
  // Pointwise: view row r of src pairs with view row r of diffDst; a split is an even run of rows.
  const pointwiseSweep = `
        ${sums}
        int srcCol = srcChannelAll;
        int diffDstCol = diffDstChannel;
        int texelRow = split * sizes.z;
        int rowEnd = min(texelRow + sizes.z, sizes.w);
        for (; texelRow + 1 < rowEnd; texelRow += 2) {${readDiffDst('texelRow')}${srcIs.map(i => `
            vec4 a${i} = readSrc(texelRow, srcCol + ${2 * i});`).join('')}${accumulate(i => `a${i}.xxyy`, i => `a${i}.zzww`)}
        }
        if (texelRow < rowEnd) {  // an odd number of positions ends at a texel's first half
          ${readDiffDst('texelRow')}${srcIs.map(i => `
            vec4 a${i} = readSrc(texelRow, srcCol + ${2 * i});`).join('')}${accumulate(i => `a${i}.xxyy`, null)}
        }
`;
  const rowSweeps = `
        ivec3 shift = k * dilation - padBegin;
        ivec3 first = ivec3(firstInside(shift.x, stride.x), firstInside(shift.y, stride.y),
                            firstInside(shift.z, stride.z));
        ivec3 end = ivec3(endInside(shift.x, stride.x, srcSize.x, diffDstSize.x),
                          endInside(shift.y, stride.y, srcSize.y, diffDstSize.y),
                          endInside(shift.z, stride.z, srcSize.z, diffDstSize.z));
        int srcRowStep = stride.z * srcRowStrides[4];
        int diffDstRowStep = diffDstRowStrides[4];
        ${sums}
        int rowBegin = split * sizes.z;
        for (int r = 0; r < sizes.z; r++) {
          int row = rowBegin + r;
          if (row >= sizes.w) break;
          int outer = row / diffDstSize.y;
          int ph = row - outer * diffDstSize.y;
          int n = outer / diffDstSize.x;
          int pd = outer - n * diffDstSize.x;
          if (pd < first.x || pd >= end.x || ph < first.y || ph >= end.y) continue;
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
          if (texelRow < diffDstRow) {  // the row starts at the texel's second position
            if (diffDstRow < rowEnd) {${readDiffDst('texelRow')}${readSrc('rowA + srcRowStep', 'b', 'oddB')}${
      accumulate(null, i => `b${i}`)}
            }
            texelRow += 2;
            rowA += 2 * srcRowStep;
          }
          for (; texelRow + 1 < rowEnd; texelRow += 2) {${readDiffDst('texelRow')}${readSrc('rowA', 'a', 'oddA')}${
      readSrc('rowA + srcRowStep', 'b', 'oddB')}${accumulate(i => `a${i}`, i => `b${i}`)}
            rowA += 2 * srcRowStep;
          }
          if (texelRow < rowEnd) {  // the row ends at the texel's first position
            ${readDiffDst('texelRow')}${readSrc('rowA', 'a', 'oddA')}${accumulate(i => `a${i}`, null)}
          }
        }
`;
  const source = `${packedReadsHeader(textures)}
      ${ints.map(([name, type, values]) => `uniform ${type} ${name}${type === 'int' ? `[${values.length}]` : ''};`).join('\n      ')}
      ${targets.map(({name}, t) => `layout(location = ${t}) out vec4 ${name};`).join('\n      ')}
${INSIDE_FUNCTIONS}
      void main() {
        ivec2 fragment = ivec2(gl_FragCoord.xy);
        // Rows of targets: (split, group, kernel offset, src block); columns: diffDst blocks.
        int rest = fragment.y;
        int srcBlock = rest - tiling.x * (rest / tiling.x);
        rest /= tiling.x;
        int kernelIndex = rest - tiling.y * (rest / tiling.y);
        rest /= tiling.y;
        int group = rest - tiling.z * (rest / tiling.z);
        int split = rest / tiling.z;
        ivec3 k = ivec3(kernelIndex / (kernelSize.y * kernelSize.z), 0, 0);
        kernelIndex -= k.x * kernelSize.y * kernelSize.z;
        k.y = kernelIndex / kernelSize.z;
        k.z = kernelIndex - k.y * kernelSize.z;
        int srcChannelAll = group * sizes.x + ${2 * srcPairs} * srcBlock;
        int diffDstChannel = group * sizes.y + ${2 * diffDstPairs} * fragment.x;

${tiles.pointwise ? pointwiseSweep : rowSweeps}        ${targets.map(({i, j, name}) => `${name} = sum${i}${j};`).join('\n        ')}
      }
`;
  return {
    name: 'WideTilesProgram',
    source,
    inputNames: ['src', 'diffDst'],
    uniforms: [
      ...packedReadsUniforms(textures),
      ...ints.map(([name, type, values]) => ({name, type, values})),
    ],
  };
}

/**
 * Pass 2 after wideTilesProgram: adds the splits of each filter element from the target that
 * holds it and writes it where the requested layout puts it, [filterSize].
 * Cache key: the tile shape and the order of the filter axes (with shape uniforms, no shapes).
 */
export class ArrangeWideTilesProgram implements GPGPUProgram {
  readonly variableNames: string[];
  readonly outputShape: number[];
  readonly userCode: string;
  readonly enableShapeUniforms = true;
  /** The targets as they are (tfjs would otherwise unpack each first): a read is a texel, the element one of its lanes. */
  readonly packedInputs = true;
  readonly customUniforms: Array<{name: string; type: 'int' | 'ivec3'; arrayIndex?: number}>;
  private readonly uniformValues: number[][];

  constructor(geometry: FilterGradientGeometry, tiles: WideTiles) {
    const {srcPairs, diffDstPairs} = tiles;
    const targetCount = srcPairs * diffDstPairs;
    this.variableNames = Array.from({length: targetCount}, (_, t) => `target${t}`);
    this.outputShape = [geometry.filterSize];
    const [d, h, w] = spatialAxesAs3d(geometry.axes);
    const kernelVolume = d.kernelSize * h.kernelSize * w.kernelSize;
    const filterAxes = filterAxesInLayoutOrder(geometry);
    this.customUniforms = [
      {name: 'filterAxisStrides', type: 'int', arrayIndex: filterAxes.length},
      {name: 'kernelSize', type: 'ivec3'},
      // srcPerGroup, diffDstPerGroup, srcBlocks, kernel volume, groups, splits
      {name: 'tiling', type: 'int', arrayIndex: 6},
    ];
    this.uniformValues = [
      filterAxes.map(axis => axis.stride), [d.kernelSize, h.kernelSize, w.kernelSize],
      [geometry.src.channelsPerGroup, geometry.diffDst.channelsPerGroup, tiles.srcBlocks, kernelVolume, geometry.groups, tiles.plan.splits],
    ];
    const reads = this.variableNames.map((name, t) => `${t > 0 ? ' else ' : ''}if (target == ${t}) {
          for (int s = 0; s < tiling[5]; s++) sum += get${name[0].toUpperCase()}${name.slice(1)}(row + s * splitRows, col)[lane];
        }`).join('');
    this.userCode = `
      void main() {
        int rest = getOutputCoords();
        ivec3 k = ivec3(0, 0, 0);${decodeFilterIndex(filterAxes)}
        int group = diffDstChannel / tiling[1];
        int diffDstInGroup = diffDstChannel - group * tiling[1];
        int srcBlock = srcChannel / ${2 * srcPairs};
        int srcInTile = srcChannel - srcBlock * ${2 * srcPairs};
        int diffDstBlock = diffDstInGroup / ${2 * diffDstPairs};
        int diffDstInTile = diffDstInGroup - diffDstBlock * ${2 * diffDstPairs};
        int target = (srcInTile / 2) * ${diffDstPairs} + diffDstInTile / 2;
        int kernelIndex = (k.x * kernelSize.y + k.y) * kernelSize.z + k.z;
        // The element's texel in the targets' packed views [2 · texel rows, 2 · texel columns], and its lane.
        int row = 2 * ((group * tiling[3] + kernelIndex) * tiling[2] + srcBlock);
        int col = 2 * diffDstBlock;
        int lane = 2 * (srcInTile - 2 * (srcInTile / 2)) + diffDstInTile - 2 * (diffDstInTile / 2);
        int splitRows = 2 * tiling[4] * tiling[3] * tiling[2];
        float sum = 0.0;
        ${reads}
        setOutput(sum);
      }
    `;
  }

  uniforms(): number[][] {
    return this.uniformValues;
  }
}

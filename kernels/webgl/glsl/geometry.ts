// The geometry as every webgl pass reads it: the filter's axes in layout order, the tensors' row
// and column strides, the geometry uniforms, and the GLSL that decodes filter indices, walks a
// split's rows and finds the taps inside src.
import {FilterGradientGeometry, SpatialAxis, spatialAxesAs3d} from '../../../src/geometry';
import type {Uniform} from './builder';

/** Where a filter axis goes in the canonical indices; spatial axes as components of ivec3 k. */
type FilterRole = 'diffDstChannel' | 'srcChannel' | 'k.x' | 'k.y' | 'k.z';

interface FilterAxis {
  readonly role: FilterRole;
  readonly stride: number;
  readonly size: number;
}

/**
 * The filter's axes in layout order, found from the geometry's strides alone (largest first;
 * of two equal strides the size-1 axis is the inner one), so the shader needs no notion of
 * format letters: it peels the output element's flat index apart axis by axis.
 */
export function filterAxesInLayoutOrder(geometry: FilterGradientGeometry): FilterAxis[] {
  const {filterStrides, groups, diffDst, src, axes} = geometry;
  const spatialComponents = ['k.x', 'k.y', 'k.z'].slice(3 - axes.length) as FilterRole[];
  const all: FilterAxis[] = [
    {role: 'diffDstChannel', stride: filterStrides.diffDstChannel, size: groups * diffDst.channelsPerGroup},
    {role: 'srcChannel', stride: filterStrides.srcChannel, size: src.channelsPerGroup},
    ...axes.map((axis, i) => ({role: spatialComponents[i], stride: axis.filterStride, size: axis.kernelSize})),
  ];
  return all.sort((a, b) => b.stride - a.stride || Number(a.size === 1) - Number(b.size === 1));
}

/**
 * Each tensor is read as the 2-D view [elements / last axis, last axis], the shape tfjs gives
 * its texture whenever that fits, so a read is (row, col) → uv with no integer division. An
 * element's row and column are sums of index × stride over (batch, channel, d, h, w): the last
 * axis (channels for NXC, w for NCX) steps the column, every other axis the row.
 */
export function tensorUniforms(
    name: string, tensor: FilterGradientGeometry['src'], spatialStrides: number[],
    dataFormat: FilterGradientGeometry['dataFormat'], blockRows = 0): Uniform[] {
  const columns = tensor.shape[tensor.shape.length - 1];
  const elementStrides = [tensor.batchStride, tensor.channelStride, ...spatialStrides];
  const lastAxis = dataFormat === 'NXC' ? 1 : 4;
  // Blocks of an odd number of rows, each padded to an even one (see PackedTexture.blockRows):
  // the axes that step whole blocks step padded ones. The innermost spatial axis of channels-last
  // data steps one position within a block, also where a block is a single position (a row of
  // width 1): the row sweeps count a row's view rows with it.
  const padded = (rows: number) => blockRows % 2 === 1 && rows >= blockRows ? rows / blockRows * (blockRows + 1) : rows;
  const innermost = elementStrides.length - 1;
  const rowStrides = elementStrides.map((stride, axis) => axis === lastAxis ? 0 :
                                                          dataFormat === 'NXC' && axis === innermost ? stride / columns :
                                                                                                       padded(stride / columns));
  const columnStrides = elementStrides.map((_, axis) => axis === lastAxis ? 1 : 0);
  return [[`${name}RowStrides`, 'int[]', rowStrides], [`${name}ColStrides`, 'int[]', columnStrides]];
}

/**
 * The geometry as the uniforms every pass-1 program reads: src and diffDst sizes, strides,
 * dilations and leading pads (ivec3, d/h/w), and both tensors' row and column strides (see
 * tensorUniforms), rows counted in padded blocks where `blockRows` gives a tensor's odd block size
 * (see PackedTexture.blockRows). The kernel size is left to the caller (one program reads filter
 * strides instead).
 */
export function geometryUniforms(geometry: FilterGradientGeometry, blockRows = {src: 0, diffDst: 0}): Uniform[] {
  const [d, h, w] = spatialAxesAs3d(geometry.axes);
  const each = (f: (axis: SpatialAxis) => number) => [f(d), f(h), f(w)];
  return [
    ['srcSize', 'ivec3', each(axis => axis.srcSize)],
    ['diffDstSize', 'ivec3', each(axis => axis.diffDstSize)],
    ['stride', 'ivec3', each(axis => axis.stride)],
    ['dilation', 'ivec3', each(axis => axis.dilation)],
    ['padBegin', 'ivec3', each(axis => axis.padBegin)],
    ...tensorUniforms('src', geometry.src, each(axis => axis.srcStride), geometry.dataFormat, blockRows.src),
    ...tensorUniforms('diffDst', geometry.diffDst, each(axis => axis.diffDstStride), geometry.dataFormat, blockRows.diffDst),
  ];
}

/**
 * GLSL that peels a flat filter index `rest` (in the requested layout) into the canonical
 * indices diffDstChannel, srcChannel and ivec3 k, with the uniform `filterAxisStrides`.
 */
export function decodeFilterIndex(filterAxes: readonly FilterAxis[]): string {
  return filterAxes.map((axis, i) => `
        ${axis.role.startsWith('k.') ? axis.role : `int ${axis.role}`} = rest / filterAxisStrides[${i}];
        rest -= ${axis.role} * filterAxisStrides[${i}];`).join('');
}

/**
 * GLSL opening the loop over a fragment's split of the diffDst rows (batch × depth × height):
 * rows [split · perSplit, +perSplit) below `rows`, decoded into n, pd and ph, skipping those
 * whose tap falls outside src in depth or height (first/end .x and .y). The caller closes it.
 */
export function splitRowsLoop(loopBound: string, perSplit: string, rows: string): string {
  return `        int rowBegin = split * ${perSplit};
        for (int i = 0; i < ${loopBound}; i++) {
          int row = rowBegin + i;
          if (row >= ${rows}) break;
          int outer = row / diffDstSize.y;
          int ph = row - outer * diffDstSize.y;
          int n = outer / diffDstSize.x;
          int pd = outer - n * diffDstSize.x;
          if (pd < first.x || pd >= end.x || ph < first.y || ph >= end.y) continue;`;
}

/** GLSL: the range of diffDst positions whose tap stays inside src along one axis. */
export const INSIDE_FUNCTIONS = `
      // First diffDst position p with p·stride + shift ≥ 0, and one past the last with
      // p·stride + shift < srcSize, clamped to [0, dstSize]: the taps that stay inside src.
      int firstInside(int shift, int stride) {
        return shift >= 0 ? 0 : (stride - 1 - shift) / stride;
      }
      int endInside(int shift, int stride, int srcSize, int dstSize) {
        int room = srcSize - 1 - shift;
        if (room < 0) return 0;
        int end = room / stride + 1;
        return end < dstSize ? end : dstSize;
      }
`;


/** (row, col) of index × stride sums over (batch, channel, d, h, w) for tensor `t`. */
export function position(t: string, part: 'Row' | 'Col', n: string, c: string, p: string): string {
  return `${n} * ${t}${part}Strides[0] + ${c} * ${t}${part}Strides[1] + ${p}.x * ${t}${part}Strides[2] + ` +
      `${p}.y * ${t}${part}Strides[3] + ${p}.z * ${t}${part}Strides[4]`;
}

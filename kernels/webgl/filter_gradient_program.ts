import type {GPGPUProgram} from '@tensorflow/tfjs-backend-webgl';

import type {FilterGradientGeometry, SpatialAxis} from '../../src/geometry';
import type {ReductionPlan} from './reduction_plan';

type UniformType = 'int' | 'ivec3' | 'ivec4';

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
function filterAxesInLayoutOrder(geometry: FilterGradientGeometry): FilterAxis[] {
  const {filterStrides, groups, diffDst, src, axes} = geometry;
  const spatialComponents = ['k.x', 'k.y', 'k.z'].slice(3 - axes.length) as FilterRole[];
  const all: FilterAxis[] = [
    {role: 'diffDstChannel', stride: filterStrides.diffDstChannel, size: groups * diffDst.channelsPerGroup},
    {role: 'srcChannel', stride: filterStrides.srcChannel, size: src.channelsPerGroup},
    ...axes.map((axis, i) => ({role: spatialComponents[i], stride: axis.filterStride, size: axis.kernelSize})),
  ];
  return all.sort((a, b) => b.stride - a.stride || Number(a.size === 1) - Number(b.size === 1));
}

/** Spatial axes as three, outermost first, with unit axes in front for 1-D and 2-D problems. */
function axesAs3d(axes: readonly SpatialAxis[]): SpatialAxis[] {
  const unit: SpatialAxis = {
    srcSize: 1, diffDstSize: 1, kernelSize: 1, stride: 1, dilation: 1, padBegin: 0, padEnd: 0,
    srcStride: 0, diffDstStride: 0, filterStride: 0,
  };
  return [...new Array<SpatialAxis>(3 - axes.length).fill(unit), ...axes];
}

/**
 * Each tensor is read as the 2-D view [elements / last axis, last axis], the shape tfjs gives
 * its texture whenever that fits, so a read is (row, col) → uv with no integer division. An
 * element's row and column are sums of index × stride over (batch, channel, d, h, w): the last
 * axis (channels for NXC, w for NCX) steps the column, every other axis the row.
 */
function tensorUniforms(
    name: string, tensor: FilterGradientGeometry['src'], spatialStrides: number[],
    dataFormat: FilterGradientGeometry['dataFormat']): Array<[string, UniformType, number[]]> {
  const columns = tensor.shape[tensor.shape.length - 1];
  const elementStrides = [tensor.batchStride, tensor.channelStride, ...spatialStrides];
  const lastAxis = dataFormat === 'NXC' ? 1 : 4;
  const rowStrides = elementStrides.map((stride, axis) => axis === lastAxis ? 0 : stride / columns);
  const columnStrides = elementStrides.map((_, axis) => axis === lastAxis ? 1 : 0);
  return [[`${name}RowStrides`, 'int', rowStrides], [`${name}ColStrides`, 'int', columnStrides]];
}

/**
 * Pass 1 of the webgl filter gradient: output [filterSize, splits], fragment (e, s) holds the
 * sum over split s of the reduction for filter element e (flat, in the requested layout).
 * Inputs are 2-D views of src and diffDst (see tensorUniforms), read through strides, so every
 * data and filter layout runs the same code.
 *
 * Cache key (tfjs keys compiled programs on this text plus the input and output shapes):
 *   - the text bakes in only the order of the filter axes (a permutation of ≤ 5 roles), and on
 *     WebGL 1, whose loops need constant bounds, rowsPerSplit and the row length; sizes,
 *     strides, pads, dilations, channel counts and the split are uniforms;
 *   - but the shapes are in the key too: shape uniforms (enableShapeUniforms) would make one
 *     program serve every shape, at the price of a float division by a uniform on every
 *     texture read, which made the kernel 3× slower on SwiftShader. A new tensor shape (batch
 *     size included) compiles a new program; repeated calls on one shape compile nothing.
 */
export class FilterGradientProgram implements GPGPUProgram {
  readonly variableNames = ['src', 'diffDst'];
  readonly outputShape: number[];
  readonly userCode: string;
  readonly enableShapeUniforms = false;
  readonly customUniforms: Array<{name: string; type: UniformType; arrayIndex?: number}>;
  private readonly uniformValues: number[][];

  constructor(geometry: FilterGradientGeometry, plan: ReductionPlan, webgl2: boolean) {
    this.outputShape = [geometry.filterSize, plan.splits];
    const filterAxes = filterAxesInLayoutOrder(geometry);
    const [d, h, w] = axesAs3d(geometry.axes);
    const each = (f: (axis: SpatialAxis) => number) => [f(d), f(h), f(w)];
    const uniforms: Array<[string, UniformType, number[]]> = [
      ['filterAxisStrides', 'int', filterAxes.map(axis => axis.stride)],
      ['srcSize', 'ivec3', each(axis => axis.srcSize)],
      ['diffDstSize', 'ivec3', each(axis => axis.diffDstSize)],
      ['stride', 'ivec3', each(axis => axis.stride)],
      ['dilation', 'ivec3', each(axis => axis.dilation)],
      ['padBegin', 'ivec3', each(axis => axis.padBegin)],
      ...tensorUniforms('src', geometry.src, each(axis => axis.srcStride), geometry.dataFormat),
      ...tensorUniforms('diffDst', geometry.diffDst, each(axis => axis.diffDstStride), geometry.dataFormat),
      ['sizes', 'ivec4', [geometry.src.channelsPerGroup, geometry.diffDst.channelsPerGroup, plan.rowsPerSplit, plan.rows]],
    ];
    this.customUniforms = uniforms.map(
        ([name, type, values]) => type === 'int' ? {name, type, arrayIndex: values.length} : {name, type});
    this.uniformValues = uniforms.map(([, , values]) => values);

    const rowsPerSplit = webgl2 ? 'sizes.z' : String(plan.rowsPerSplit);
    const decode = filterAxes.map((axis, i) => `
        ${axis.role.startsWith('k.') ? axis.role : `int ${axis.role}`} = rest / filterAxisStrides[${i}];
        rest -= ${axis.role} * filterAxisStrides[${i}];`).join('');
    const innerLoop = webgl2 ?
        `for (int pw = first.z; pw < end.z; pw++) {` :
        `for (int j = 0; j < ${plan.rowLength}; j++) {
            if (first.z + j >= end.z) break;`;
    // (row, col) of index × stride sums over (batch, channel, d, h, w) for tensor `t`.
    const position = (t: string, part: 'Row' | 'Col', n: string, c: string, p: string) =>
        `${n} * ${t}${part}Strides[0] + ${c} * ${t}${part}Strides[1] + ${p}.x * ${t}${part}Strides[2] + ` +
        `${p}.y * ${t}${part}Strides[3] + ${p}.z * ${t}${part}Strides[4]`;
    this.userCode = `
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

      void main() {
        ivec2 coords = getOutputCoords();
        int rest = coords[0];
        ivec3 k = ivec3(0, 0, 0);${decode}
        int srcChannelAll = (diffDstChannel / sizes.y) * sizes.x + srcChannel;
        ivec3 shift = k * dilation - padBegin;
        ivec3 first = ivec3(firstInside(shift.x, stride.x), firstInside(shift.y, stride.y),
                            firstInside(shift.z, stride.z));
        ivec3 end = ivec3(endInside(shift.x, stride.x, srcSize.x, diffDstSize.x),
                          endInside(shift.y, stride.y, srcSize.y, diffDstSize.y),
                          endInside(shift.z, stride.z, srcSize.z, diffDstSize.z));
        int srcRowStep = stride.z * srcRowStrides[4];
        int srcColStep = stride.z * srcColStrides[4];
        int diffDstRowStep = diffDstRowStrides[4];
        int diffDstColStep = diffDstColStrides[4];

        float sum = 0.0;
        int rowBegin = coords[1] * sizes.z;
        for (int i = 0; i < ${rowsPerSplit}; i++) {
          int row = rowBegin + i;
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
          ${innerLoop}
            sum += getSrc(srcRow, srcCol) * getDiffDst(diffDstRow, diffDstCol);
            srcRow += srcRowStep;
            srcCol += srcColStep;
            diffDstRow += diffDstRowStep;
            diffDstCol += diffDstColStep;
          }
        }
        setOutput(sum);
      }
    `;
  }

  /** The values of `customUniforms`, in order, for runWebGLProgram. */
  uniforms(): number[][] {
    return this.uniformValues;
  }
}

/**
 * Pass 2: adds the splits, [filterSize, splits] → [filterSize]. Cache key: WebGL 2 none (the
 * split count is a uniform); WebGL 1 the split count.
 */
export class SumSplitsProgram implements GPGPUProgram {
  readonly variableNames = ['partial'];
  readonly outputShape: number[];
  readonly userCode: string;
  readonly enableShapeUniforms = true;
  readonly customUniforms = [{name: 'splits', type: 'int' as const}];

  constructor(filterSize: number, readonly splits: number, webgl2: boolean) {
    this.outputShape = [filterSize];
    this.userCode = `
      void main() {
        int element = getOutputCoords();
        float sum = 0.0;
        for (int s = 0; s < ${webgl2 ? 'splits' : splits}; s++) {
          sum += getPartial(element, s);
        }
        setOutput(sum);
      }
    `;
  }

  uniforms(): number[][] {
    return [[this.splits]];
  }
}

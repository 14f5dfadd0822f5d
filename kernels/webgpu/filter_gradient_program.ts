import type {WebGPUProgram} from '@tensorflow/tfjs-backend-webgpu';

import {FilterGradientGeometry, spatialAxesAs3d} from '../../src/geometry';
import {WebgpuReductionPlan, WORKGROUP_INVOCATIONS} from './reduction_plan';

/** A uniform as tfjs-webgpu's runWebGPUProgram takes it (its `programUniform` entries). */
export interface ProgramUniform {
  type: 'int32';
  data: number[];
}

/**
 * The geometry as uniforms, every one a vec4<i32> (so their layout in the uniform block is
 * the same whatever tfjs puts before them). Spatial triples are d, h, w with unit axes in front
 * for 1-D and 2-D problems (spatialAxesAs3d); `work` is the plan's share of the reduction.
 */
const GEOMETRY_UNIFORMS = `
    srcSpatial : vec4<i32>, diffDstSpatial : vec4<i32>, srcSteps : vec4<i32>, diffDstSteps : vec4<i32>,
    kernel : vec4<i32>, strides : vec4<i32>, dilations : vec4<i32>, padsBegin : vec4<i32>,
    filterSteps : vec4<i32>, filterChannels : vec4<i32>, work : vec4<i32>, tiles : vec4<i32>,`;

export function geometryUniforms(geometry: FilterGradientGeometry, plan: WebgpuReductionPlan): ProgramUniform[] {
  const axes = spatialAxesAs3d(geometry.axes);
  const each = (f: (axis: (typeof axes)[number]) => number) => axes.map(f);
  const {src, diffDst, filterStrides} = geometry;
  const kernelVolume = axes.reduce((volume, axis) => volume * axis.kernelSize, 1);
  const vec4 = (...data: number[]): ProgramUniform => ({type: 'int32', data});
  const tilesM = Math.ceil(diffDst.channelsPerGroup / plan.tileRows);
  const tilesN = Math.ceil(src.channelsPerGroup * kernelVolume / plan.tileColumns);
  return [
    vec4(...each(axis => axis.srcSize), src.batchStride),  // srcSpatial: sizes, batch stride
    vec4(...each(axis => axis.diffDstSize), diffDst.batchStride),  // diffDstSpatial
    vec4(...each(axis => axis.srcStride), src.channelStride),  // srcSteps: element strides d, h, w, channel
    vec4(...each(axis => axis.diffDstStride), diffDst.channelStride),  // diffDstSteps
    vec4(...each(axis => axis.kernelSize), kernelVolume),  // kernel
    vec4(...each(axis => axis.stride), geometry.groups),  // strides, groups
    vec4(...each(axis => axis.dilation), src.channelsPerGroup),  // dilations, SC
    vec4(...each(axis => axis.padBegin), diffDst.channelsPerGroup),  // padsBegin, DC
    vec4(...each(axis => axis.filterStride), geometry.filterSize),  // filterSteps, filter size
    vec4(filterStrides.group, filterStrides.diffDstChannel, filterStrides.srcChannel, 0),  // filterChannels
    vec4(plan.reductionRows, plan.rowsPerSplit, plan.splits, plan.workgroupsPerSplit),  // work
    vec4(tilesM, tilesN, Math.ceil(plan.rowsPerSplit / plan.stepRows), 0),  // tiles: per group, steps per split
  ];
}

/** WGSL helpers both pass-1 programs share. */
const COMMON_WGSL = `
  fn isFinite(value : f32) -> bool {
    return (bitcast<u32>(value) & 0x7f800000u) != 0x7f800000u;
  }
  fn insideSrc(position : vec3<i32>) -> bool {
    return all(position >= vec3<i32>(0)) && all(position < uniforms.srcSpatial.xyz);
  }
  // Integer division rounding down and up, for numerators of either sign (positive divisors).
  fn divFloor(a : i32, b : i32) -> i32 {
    return select(-((b - 1 - a) / b), a / b, a >= 0);
  }
  fn divCeil(a : i32, b : i32) -> i32 {
    return select(-((-a) / b), (a + b - 1) / b, a > 0);
  }
`;

/**
 * Pass 1, 'tiles' (see WebgpuReductionPlan): one workgroup per (split, group, TM × TN tile) of
 * the group's filter matrix (rows: diffDst channels; columns: (src channel, kernel offset)
 * pairs, channels inner for NXC data so neighbouring invocations read neighbouring addresses).
 * Each step stages TR reduction rows (batch × diffDst positions): the row's offsets, decoded
 * once per row, then the TR × TM diffDst values and the TR × TN im2col'd src values (zero
 * outside the src tensor); each invocation then adds TR products into its 4 × 4 outputs with
 * vec4 arithmetic from workgroup memory. A step whose diffDst values include NaN or ±Inf
 * (rare) takes a path that skips the out-of-tensor terms by position, as the definition does,
 * rather than multiplying them by a zero (Inf · 0 = NaN). Outputs go to
 * result[split · filterSize + filter index] (filter index from the geometry's strides).
 *
 * Cache key: `ConvBackpropFiltersTiles_<TM>x<TN>x<TR>_<column order>` (plus tfjs's: workgroup
 * size, ranks, dtypes); the tile shape and column order are the only things baked in: sizes,
 * strides, dilations, pads, groups, layouts and the split are uniforms (geometryUniforms).
 */
export class FilterGradientTilesProgram implements WebGPUProgram {
  readonly variableNames = ['src', 'diffDst'];
  readonly uniforms = GEOMETRY_UNIFORMS;
  readonly workgroupSize: [number, number, number] = [WORKGROUP_INVOCATIONS, 1, 1];
  readonly dispatchLayout = {x: [0]};
  dispatch: [number, number, number];
  readonly outputShape: number[];
  shaderKey: string;
  private readonly channelsInner: boolean;

  constructor(geometry: FilterGradientGeometry, private readonly plan: WebgpuReductionPlan) {
    this.outputShape = [plan.splits * geometry.filterSize];
    this.dispatch = [plan.workgroupsPerSplit * plan.splits, 1, 1];
    this.channelsInner = geometry.dataFormat === 'NXC';
    this.shaderKey = `ConvBackpropFiltersTiles_${plan.tileRows}x${plan.tileColumns}x${plan.stepRows}_${
        this.channelsInner ? 'channelsInner' : 'kernelInner'}`;
  }

  getUserCode(): string {
    const {tileRows: TM, tileColumns: TN, stepRows: TR} = this.plan;
    const columnOf = this.channelsInner ?
        'let sc = column % SC; let k = column / SC;' :
        'let k = column % uniforms.kernel.w; let sc = column / uniforms.kernel.w;';
    return `
  ${COMMON_WGSL}
  const TM = ${TM};
  const TN = ${TN};
  const TR = ${TR};
  const FAR = -536870912;  // a position outside every tensor, for rows and columns that hold none
  var<workgroup> tileA : array<vec4<f32>, ${TR * TM / 4}>;
  var<workgroup> tileB : array<vec4<f32>, ${TR * TN / 4}>;
  var<workgroup> rowDiffDst : array<i32, TR>;
  var<workgroup> rowSrc : array<i32, TR>;
  var<workgroup> rowPosition : array<vec3<i32>, TR>;
  var<workgroup> columnSrc : array<i32, TN>;
  var<workgroup> columnOffset : array<vec3<i32>, TN>;
  var<workgroup> columnFilter : array<i32, TN>;
  var<workgroup> stepHasSpecials : atomic<u32>;

  // Writes one row of an invocation's 4 × 4 outputs (those inside the group's matrix).
  fn store(splitBase : i32, dc : i32, firstColumn : i32, firstLocal : i32, values : vec4<f32>, DC : i32, columns : i32) {
    if (dc >= DC) {
      return;
    }
    let rowBase = splitBase + dc * uniforms.filterChannels.y;
    ${[0, 1, 2, 3].map(j => `if (firstColumn + ${j} < columns) {
      result[rowBase + columnFilter[firstLocal + ${j}]] = values[${j}];
    }`).join('\n    ')}
  }

  fn main(index : i32) {
    let local = i32(localIndex);
    let workgroup = index / ${WORKGROUP_INVOCATIONS};
    let split = workgroup / uniforms.work.w;
    let inSplits = split < uniforms.work.z;
    var tile = workgroup % uniforms.work.w;
    let tileN = tile % uniforms.tiles.y;
    tile = tile / uniforms.tiles.y;
    let tileM = tile % uniforms.tiles.x;
    let g = tile / uniforms.tiles.x;
    let SC = uniforms.dilations.w;
    let DC = uniforms.padsBegin.w;
    let columns = SC * uniforms.kernel.w;

    for (var c = local; c < TN; c = c + ${WORKGROUP_INVOCATIONS}) {
      let column = tileN * TN + c;
      ${columnOf}
      let kx = k % uniforms.kernel.z;
      let ky = (k / uniforms.kernel.z) % uniforms.kernel.y;
      let kz = k / (uniforms.kernel.z * uniforms.kernel.y);
      let offset = vec3<i32>(kz, ky, kx) * uniforms.dilations.xyz;
      columnSrc[c] = (g * SC + sc) * uniforms.srcSteps.w + dot(offset, uniforms.srcSteps.xyz);
      columnOffset[c] = select(vec3<i32>(FAR), offset, column < columns);
      columnFilter[c] = sc * uniforms.filterChannels.z + dot(vec3<i32>(kz, ky, kx), uniforms.filterSteps.xyz);
    }

    let rowStart = select(uniforms.work.x, split * uniforms.work.y, inSplits);
    let rowEnd = min(rowStart + uniforms.work.y, uniforms.work.x);
    let tx = local % (TN / 4);
    let ty = local / (TN / 4);
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    for (var step = 0; step < uniforms.tiles.z; step = step + 1) {
      let firstRow = rowStart + step * TR;
      if (local < TR) {
        let row = firstRow + local;
        var rest = row;
        let px = rest % uniforms.diffDstSpatial.z;
        rest = rest / uniforms.diffDstSpatial.z;
        let py = rest % uniforms.diffDstSpatial.y;
        rest = rest / uniforms.diffDstSpatial.y;
        let pz = rest % uniforms.diffDstSpatial.x;
        let n = rest / uniforms.diffDstSpatial.x;
        let position = vec3<i32>(pz, py, px) * uniforms.strides.xyz - uniforms.padsBegin.xyz;
        let inside = row < rowEnd;
        rowDiffDst[local] = select(-1, n * uniforms.diffDstSpatial.w + dot(vec3<i32>(pz, py, px), uniforms.diffDstSteps.xyz), inside);
        rowSrc[local] = n * uniforms.srcSpatial.w + dot(position, uniforms.srcSteps.xyz);
        rowPosition[local] = select(vec3<i32>(FAR), position, inside);
      }
      if (local == 0) {
        atomicStore(&stepHasSpecials, 0u);
      }
      workgroupBarrier();

      for (var i = 0; i < TR * TM / ${WORKGROUP_INVOCATIONS}; i = i + 1) {
        let e = i * ${WORKGROUP_INVOCATIONS} + local;
        let r = e / TM;
        let dc = tileM * TM + e % TM;
        var a = 0.0;
        if (rowDiffDst[r] >= 0 && dc < DC) {
          a = diffDst[rowDiffDst[r] + (g * DC + dc) * uniforms.diffDstSteps.w];
          if (!isFinite(a)) {
            atomicStore(&stepHasSpecials, 1u);
          }
        }
        tileA[e / 4][e % 4] = a;
      }
      for (var i = 0; i < TR * TN / ${WORKGROUP_INVOCATIONS}; i = i + 1) {
        let e = i * ${WORKGROUP_INVOCATIONS} + local;
        let r = e / TN;
        let c = e % TN;
        var b = 0.0;
        if (insideSrc(rowPosition[r] + columnOffset[c])) {
          b = src[rowSrc[r] + columnSrc[c]];
        }
        tileB[e / 4][e % 4] = b;
      }
      workgroupBarrier();

      if (atomicLoad(&stepHasSpecials) == 0u) {
        for (var r = 0; r < TR; r = r + 1) {
          let a = tileA[r * (TM / 4) + ty];
          let b = tileB[r * (TN / 4) + tx];
          acc0 = acc0 + a.x * b;
          acc1 = acc1 + a.y * b;
          acc2 = acc2 + a.z * b;
          acc3 = acc3 + a.w * b;
        }
      } else {
        for (var r = 0; r < TR; r = r + 1) {
          let a = tileA[r * (TM / 4) + ty];
          let b = tileB[r * (TN / 4) + tx];
          let position = rowPosition[r];
          let inside = vec4<f32>(${[0, 1, 2, 3].map(j => `f32(insideSrc(position + columnOffset[tx * 4 + ${j}]))`).join(', ')});
          acc0 = acc0 + select(vec4<f32>(0.0), a.x * b, inside == vec4<f32>(1.0));
          acc1 = acc1 + select(vec4<f32>(0.0), a.y * b, inside == vec4<f32>(1.0));
          acc2 = acc2 + select(vec4<f32>(0.0), a.z * b, inside == vec4<f32>(1.0));
          acc3 = acc3 + select(vec4<f32>(0.0), a.w * b, inside == vec4<f32>(1.0));
        }
      }
      workgroupBarrier();
    }

    if (!inSplits) {
      return;
    }
    let splitBase = split * uniforms.filterSteps.w + g * uniforms.filterChannels.x;
    ${[0, 1, 2, 3].map(i => `store(splitBase, tileM * TM + ty * 4 + ${i}, tileN * TN + tx * 4, tx * 4, acc${i}, DC, columns);`).join('\n    ')}
  }
`;
  }
}

/**
 * Pass 1, 'elements' (see WebgpuReductionPlan): one invocation per (split, filter element),
 * enumerated with the group fastest so that neighbouring invocations of a depthwise problem
 * read neighbouring channels. An invocation walks its split's rows (batch × outer diffDst
 * positions); per row it checks the outer src coordinates once and sweeps exactly the
 * innermost positions whose src coordinate is inside (bounds solved per element, not tested
 * per term), one multiply-add a position.
 *
 * Cache key: `ConvBackpropFiltersElements` (plus tfjs's): nothing of the geometry is baked in.
 */
export class FilterGradientElementsProgram implements WebGPUProgram {
  readonly variableNames = ['src', 'diffDst'];
  readonly uniforms = GEOMETRY_UNIFORMS;
  readonly workgroupSize: [number, number, number] = [WORKGROUP_INVOCATIONS, 1, 1];
  readonly dispatchLayout = {x: [0]};
  dispatch: [number, number, number];
  readonly outputShape: number[];
  shaderKey = 'ConvBackpropFiltersElements';

  constructor(geometry: FilterGradientGeometry, plan: WebgpuReductionPlan) {
    this.outputShape = [plan.splits * geometry.filterSize];
    this.dispatch = [Math.ceil(plan.splits * geometry.filterSize / WORKGROUP_INVOCATIONS), 1, 1];
  }

  getUserCode(): string {
    return `
  ${COMMON_WGSL}
  fn main(index : i32) {
    let filterSize = uniforms.filterSteps.w;
    let split = index / filterSize;
    if (split >= uniforms.work.z) {
      return;
    }
    let G = uniforms.strides.w;
    let SC = uniforms.dilations.w;
    let DC = uniforms.padsBegin.w;
    var rest = index % filterSize;
    let g = rest % G;
    rest = rest / G;
    let dc = rest % DC;
    rest = rest / DC;
    let sc = rest % SC;
    rest = rest / SC;
    let kx = rest % uniforms.kernel.z;
    rest = rest / uniforms.kernel.z;
    let ky = rest % uniforms.kernel.y;
    let kz = rest / uniforms.kernel.y;
    let offset = vec3<i32>(kz, ky, kx) * uniforms.dilations.xyz - uniforms.padsBegin.xyz;

    // The innermost positions px whose src coordinate px · stride + offset lies inside.
    let stride = uniforms.strides.z;
    let firstX = max(0, divCeil(-offset.z, stride));
    let endX = min(uniforms.diffDstSpatial.z, divFloor(uniforms.srcSpatial.z - 1 - offset.z, stride) + 1);
    let srcStep = stride * uniforms.srcSteps.z;
    let diffDstStep = uniforms.diffDstSteps.z;
    let srcChannel = (g * SC + sc) * uniforms.srcSteps.w + (firstX * stride + offset.z) * uniforms.srcSteps.z;
    let diffDstChannel = (g * DC + dc) * uniforms.diffDstSteps.w + firstX * diffDstStep;

    let rowStart = split * uniforms.work.y;
    let rowEnd = min(rowStart + uniforms.work.y, uniforms.work.x);
    var sum = 0.0;
    for (var row = rowStart; row < rowEnd; row = row + 1) {
      let py = row % uniforms.diffDstSpatial.y;
      let outer = row / uniforms.diffDstSpatial.y;
      let pz = outer % uniforms.diffDstSpatial.x;
      let n = outer / uniforms.diffDstSpatial.x;
      let z = pz * uniforms.strides.x + offset.x;
      let y = py * uniforms.strides.y + offset.y;
      if (z < 0 || z >= uniforms.srcSpatial.x || y < 0 || y >= uniforms.srcSpatial.y) {
        continue;
      }
      var s = n * uniforms.srcSpatial.w + z * uniforms.srcSteps.x + y * uniforms.srcSteps.y + srcChannel;
      var d = n * uniforms.diffDstSpatial.w + pz * uniforms.diffDstSteps.x + py * uniforms.diffDstSteps.y + diffDstChannel;
      for (var px = firstX; px < endX; px = px + 1) {
        sum = sum + diffDst[d] * src[s];
        s = s + srcStep;
        d = d + diffDstStep;
      }
    }
    let filterIndex = g * uniforms.filterChannels.x + dc * uniforms.filterChannels.y + sc * uniforms.filterChannels.z +
        dot(vec3<i32>(kz, ky, kx), uniforms.filterSteps.xyz);
    result[split * filterSize + filterIndex] = sum;
  }
`;
  }
}

/**
 * Pass 2 when the reduction was split: result[i] = Σ_s partial[s · filterSize + i] (the
 * partial sums are already in the filter layout).
 *
 * Cache key: `ConvBackpropFiltersSumSplits` (plus tfjs's): the split count is a uniform.
 */
export class SumSplitsProgram implements WebGPUProgram {
  readonly variableNames = ['partial'];
  readonly uniforms = 'splits : i32,';
  readonly workgroupSize: [number, number, number] = [WORKGROUP_INVOCATIONS, 1, 1];
  readonly dispatchLayout = {x: [0]};
  dispatch: [number, number, number];
  readonly outputShape: number[];
  readonly size = true;
  shaderKey = 'ConvBackpropFiltersSumSplits';

  constructor(filterSize: number, private readonly splits: number) {
    this.outputShape = [filterSize];
    this.dispatch = [Math.ceil(filterSize / WORKGROUP_INVOCATIONS), 1, 1];
  }

  programUniforms(): ProgramUniform[] {
    return [{type: 'int32', data: [this.splits]}];
  }

  getUserCode(): string {
    return `
  fn main(index : i32) {
    if (index < uniforms.size) {
      var sum = 0.0;
      for (var s = 0; s < uniforms.splits; s = s + 1) {
        sum = sum + partial[s * uniforms.size + index];
      }
      result[index] = sum;
    }
  }
`;
  }
}

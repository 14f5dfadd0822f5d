import type {WebGPUProgram} from '@tensorflow/tfjs-backend-webgpu';

import {FilterGradientGeometry, spatialAxesAs3d} from '../../src/geometry';
import {BLOCK_COLUMNS, WebgpuReductionPlan, WORKGROUP_INVOCATIONS} from './reduction_plan';

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
    filterSteps : vec4<i32>, filterChannels : vec4<i32>, work : vec4<i32>, blocks : vec4<i32>,`;

export function geometryUniforms(geometry: FilterGradientGeometry, plan: WebgpuReductionPlan): ProgramUniform[] {
  const axes = spatialAxesAs3d(geometry.axes);
  const each = (f: (axis: (typeof axes)[number]) => number) => axes.map(f);
  const {src, diffDst, filterStrides} = geometry;
  const kernelVolume = axes.reduce((volume, axis) => volume * axis.kernelSize, 1);
  const vec4 = (...data: number[]): ProgramUniform => ({type: 'int32', data});
  const blocksM = Math.ceil(diffDst.channelsPerGroup / plan.blockRows);
  const blocksN = Math.ceil(src.channelsPerGroup * kernelVolume / BLOCK_COLUMNS);
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
    // blocks: per group down and across (taps: tap blocks along the innermost kernel axis), all of one split
    vec4(blocksM, plan.mode === 'taps' ? Math.ceil(axes[2].kernelSize / plan.taps) : blocksN, 0, plan.blocksPerSplit),
  ];
}

/** WGSL helpers both pass-1 programs share. */
const COMMON_WGSL = `
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
 * Pass 1, 'blocks' (see WebgpuReductionPlan): one invocation per (split, group, BM × 4 block)
 * of the group's filter matrix, reading both operands straight from the tensors: no workgroup
 * memory and no barrier. Per reduction row (batch × diffDst positions, stepped with carries,
 * never divided) an invocation reads its BM diffDst values and its 4 src values (one per
 * column, each tested against the src bounds) and adds BM × 4 products with vec4 arithmetic.
 * Out-of-tensor terms are skipped by position (a select on the product), as the definition
 * does, so NaN or ±Inf in diffDst stay exact. Columns are ordered channels inner for NXC data
 * (a block's 4 src reads are neighbouring addresses), kernel offsets inner for NCX.
 *
 * Why no workgroup memory: where invocations run as 4-lane groups on CPU threads (SwiftShader),
 * a barrier switches between every lane group of the workgroup and workgroup memory is read
 * and written lane by lane, so staging operands there costs more than the reads it saves. Here
 * a block's BM + 4 reads serve 4 · BM products from registers, and invocations next to each
 * other (blocks along columns are fastest) read the same diffDst values and neighbouring src
 * values, which a GPU's caches serve. On a large GPU a workgroup tile staged in shared memory
 * would save more reads; this program keeps to what the CPU adapter runs well.
 *
 * Cache key: `ConvBackpropFiltersBlocks_<BM>x4_<column order>` (plus tfjs's): sizes, strides,
 * dilations, pads, groups, layouts and the split are uniforms (geometryUniforms).
 */
export class FilterGradientBlocksProgram implements WebGPUProgram {
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
    this.shaderKey = `ConvBackpropFiltersBlocks_${plan.blockRows}x${BLOCK_COLUMNS}_${
        this.channelsInner ? 'channelsInner' : 'kernelInner'}`;
  }

  getUserCode(): string {
    const BM = this.plan.blockRows;
    const rows = [...Array(BM).keys()];
    const cols = [0, 1, 2, 3];
    const columnOf = this.channelsInner ?
        (j: number) => `let sc${j} = column${j} % SC; let k${j} = column${j} / SC;` :
        (j: number) => `let k${j} = column${j} % uniforms.kernel.w; let sc${j} = column${j} / uniforms.kernel.w;`;
    return `
  ${COMMON_WGSL}
  const FAR = -536870912;  // a position outside every tensor, for columns the group's matrix does not have
  fn main(index : i32) {
    let perSplit = uniforms.work.w * ${WORKGROUP_INVOCATIONS};
    let split = index / perSplit;
    var block = index % perSplit;
    if (split >= uniforms.work.z || block >= uniforms.blocks.w) {
      return;
    }
    let blockN = block % uniforms.blocks.y;
    block = block / uniforms.blocks.y;
    let blockM = block % uniforms.blocks.x;
    let g = block / uniforms.blocks.x;
    let SC = uniforms.dilations.w;
    let DC = uniforms.padsBegin.w;
    let columns = SC * uniforms.kernel.w;

    ${cols.map(j => `let column${j} = blockN * 4 + ${j};
    ${columnOf(j)}
    let kernel${j} = vec3<i32>(k${j} / (uniforms.kernel.z * uniforms.kernel.y), (k${j} / uniforms.kernel.z) % uniforms.kernel.y, k${j} % uniforms.kernel.z);
    let offset${j} = select(vec3<i32>(FAR), kernel${j} * uniforms.dilations.xyz, column${j} < columns);
    let columnSrc${j} = (g * SC + sc${j}) * uniforms.srcSteps.w + dot(kernel${j} * uniforms.dilations.xyz, uniforms.srcSteps.xyz);`).join('\n    ')}
    ${rows.map(i => `let dc${i} = blockM * ${BM} + ${i};
    let rowDiffDst${i} = (g * DC + min(dc${i}, DC - 1)) * uniforms.diffDstSteps.w;`).join('\n    ')}

    let rowStart = split * uniforms.work.y;
    let rowEnd = min(rowStart + uniforms.work.y, uniforms.work.x);
    var px = rowStart % uniforms.diffDstSpatial.z;
    var rest = rowStart / uniforms.diffDstSpatial.z;
    var py = rest % uniforms.diffDstSpatial.y;
    rest = rest / uniforms.diffDstSpatial.y;
    var pz = rest % uniforms.diffDstSpatial.x;
    var n = rest / uniforms.diffDstSpatial.x;
    ${rows.map(i => `var acc${i} = vec4<f32>(0.0);`).join('\n    ')}
    for (var row = rowStart; row < rowEnd; row = row + 1) {
      let p = vec3<i32>(pz, py, px);
      let position = p * uniforms.strides.xyz - uniforms.padsBegin.xyz;
      let d = n * uniforms.diffDstSpatial.w + dot(p, uniforms.diffDstSteps.xyz);
      let s = n * uniforms.srcSpatial.w + dot(position, uniforms.srcSteps.xyz);
      ${cols.map(j => `let inside${j} = insideSrc(position + offset${j});
      var b${j} = 0.0;
      if (inside${j}) {
        b${j} = src[s + columnSrc${j}];
      }`).join('\n      ')}
      let b = vec4<f32>(b0, b1, b2, b3);
      let inside = vec4<bool>(inside0, inside1, inside2, inside3);
      ${rows.map(i => `acc${i} = acc${i} + select(vec4<f32>(0.0), diffDst[d + rowDiffDst${i}] * b, inside);`).join('\n      ')}
      px = px + 1;
      if (px == uniforms.diffDstSpatial.z) {
        px = 0;
        py = py + 1;
        if (py == uniforms.diffDstSpatial.y) {
          py = 0;
          pz = pz + 1;
          if (pz == uniforms.diffDstSpatial.x) {
            pz = 0;
            n = n + 1;
          }
        }
      }
    }

    let splitBase = split * uniforms.filterSteps.w + g * uniforms.filterChannels.x;
    ${cols.map(j => `let columnFilter${j} = sc${j} * uniforms.filterChannels.z + dot(kernel${j}, uniforms.filterSteps.xyz);`).join('\n    ')}
    ${rows.map(i => `if (dc${i} < DC) {
      ${cols.map(j => `if (column${j} < columns) {
        result[splitBase + dc${i} * uniforms.filterChannels.y + columnFilter${j}] = acc${i}[${j}];
      }`).join('\n      ')}
    }`).join('\n    ')}
  }
`;
  }
}

/**
 * Pass 1, 'taps' (see WebgpuReductionPlan): one invocation per (split, T neighbouring taps
 * along the innermost kernel axis of one filter row), enumerated with the group fastest so
 * that neighbouring invocations of a depthwise problem read neighbouring channels. An
 * invocation walks its split's rows (batch × outer diffDst positions); per row it checks the
 * outer src coordinates once and sweeps the innermost positions where any of its taps is
 * inside, reading each diffDst value once for its T taps (T + 1 reads for T multiply-adds).
 * Each tap's inside range is solved once per invocation: the middle stretch where every tap is
 * inside runs without tests, the ends test each tap and skip a product outside its range (not
 * multiply it by zero), as the definition does.
 *
 * Cache key: `ConvBackpropFiltersTaps<T>` (plus tfjs's): only T (1-4) is baked in.
 */
export class FilterGradientTapsProgram implements WebGPUProgram {
  readonly variableNames = ['src', 'diffDst'];
  readonly uniforms = GEOMETRY_UNIFORMS;
  readonly workgroupSize: [number, number, number] = [WORKGROUP_INVOCATIONS, 1, 1];
  readonly dispatchLayout = {x: [0]};
  dispatch: [number, number, number];
  readonly outputShape: number[];
  shaderKey: string;

  constructor(geometry: FilterGradientGeometry, private readonly plan: WebgpuReductionPlan) {
    this.outputShape = [plan.splits * geometry.filterSize];
    this.dispatch = [plan.workgroupsPerSplit * plan.splits, 1, 1];
    this.shaderKey = `ConvBackpropFiltersTaps${plan.taps}`;
  }

  getUserCode(): string {
    const T = this.plan.taps;
    const taps = [...Array(T).keys()];
    // One stretch of positions [from, to): each tap's product tested against its range, or not.
    const sweep = (from: string, to: string, tested: boolean) => `{
        var s = srcRow + (${from}) * srcStep;
        var d = diffDstRow + (${from}) * diffDstStep;
        for (var px = ${from}; px < ${to}; px = px + 1) {
          let a = diffDst[d];
          ${taps.map(t => tested ? `if (px >= first${t} && px < end${t}) {
            sum${t} = sum${t} + a * src[s + tap${t}];
          }` : `sum${t} = sum${t} + a * src[s + tap${t}];`).join('\n          ')}
          s = s + srcStep;
          d = d + diffDstStep;
        }
      }`;
    return `
  ${COMMON_WGSL}
  fn main(index : i32) {
    let perSplit = uniforms.work.w * ${WORKGROUP_INVOCATIONS};
    let split = index / perSplit;
    var rest = index % perSplit;
    if (split >= uniforms.work.z || rest >= uniforms.blocks.w) {
      return;
    }
    let G = uniforms.strides.w;
    let SC = uniforms.dilations.w;
    let DC = uniforms.padsBegin.w;
    let g = rest % G;
    rest = rest / G;
    let dc = rest % DC;
    rest = rest / DC;
    let sc = rest % SC;
    rest = rest / SC;
    let kxBlock = rest % uniforms.blocks.y;
    rest = rest / uniforms.blocks.y;
    let ky = rest % uniforms.kernel.y;
    let kz = rest / uniforms.kernel.y;
    let outer = vec2<i32>(kz, ky) * uniforms.dilations.xy - uniforms.padsBegin.xy;

    // Per tap, the innermost positions px whose src coordinate px · stride + kx · dilation − pad lies inside.
    let stride = uniforms.strides.z;
    let width = uniforms.diffDstSpatial.z;
    ${taps.map(t => `let kx${t} = kxBlock * ${T} + ${t};
    let valid${t} = kx${t} < uniforms.kernel.z;
    let offset${t} = kx${t} * uniforms.dilations.z - uniforms.padsBegin.z;
    let first${t} = select(width, max(0, divCeil(-offset${t}, stride)), valid${t});
    let end${t} = select(0, min(width, divFloor(uniforms.srcSpatial.z - 1 - offset${t}, stride) + 1), valid${t});
    let tap${t} = select(0, ${t} * uniforms.dilations.z * uniforms.srcSteps.z, valid${t});
    var sum${t} = 0.0;`).join('\n    ')}
    // Positions where some tap is inside, and the middle stretch where every existing tap is
    // (taps beyond the kernel read tap 0's value there, and their sums are never stored).
    let firstX = ${taps.map(t => `first${t}`).reduce((a, b) => `min(${a}, ${b})`)};
    let endX = ${taps.map(t => `end${t}`).reduce((a, b) => `max(${a}, ${b})`)};
    let allFirst = ${taps.map(t => `select(0, first${t}, valid${t})`).reduce((a, b) => `max(${a}, ${b})`)};
    let allEnd = ${taps.map(t => `select(width, end${t}, valid${t})`).reduce((a, b) => `min(${a}, ${b})`)};
    let srcStep = stride * uniforms.srcSteps.z;
    let diffDstStep = uniforms.diffDstSteps.z;
    let srcChannel = (g * SC + sc) * uniforms.srcSteps.w + offset0 * uniforms.srcSteps.z;
    let diffDstChannel = (g * DC + dc) * uniforms.diffDstSteps.w;

    let rowStart = split * uniforms.work.y;
    let rowEnd = min(rowStart + uniforms.work.y, uniforms.work.x);
    for (var row = rowStart; row < rowEnd; row = row + 1) {
      let py = row % uniforms.diffDstSpatial.y;
      let rows = row / uniforms.diffDstSpatial.y;
      let pz = rows % uniforms.diffDstSpatial.x;
      let n = rows / uniforms.diffDstSpatial.x;
      let z = pz * uniforms.strides.x + outer.x;
      let y = py * uniforms.strides.y + outer.y;
      if (z < 0 || z >= uniforms.srcSpatial.x || y < 0 || y >= uniforms.srcSpatial.y) {
        continue;
      }
      let srcRow = n * uniforms.srcSpatial.w + z * uniforms.srcSteps.x + y * uniforms.srcSteps.y + srcChannel;
      let diffDstRow = n * uniforms.diffDstSpatial.w + pz * uniforms.diffDstSteps.x + py * uniforms.diffDstSteps.y + diffDstChannel;
      ${sweep('firstX', 'min(allFirst, endX)', true)}
      ${sweep('allFirst', 'allEnd', false)}
      ${sweep('max(allFirst, allEnd)', 'endX', true)}
    }
    let filterRow = split * uniforms.filterSteps.w + g * uniforms.filterChannels.x + dc * uniforms.filterChannels.y +
        sc * uniforms.filterChannels.z + kz * uniforms.filterSteps.x + ky * uniforms.filterSteps.y;
    ${taps.map(t => `if (kx${t} < uniforms.kernel.z) {
      result[filterRow + kx${t} * uniforms.filterSteps.z] = sum${t};
    }`).join('\n    ')}
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

import type {WebGPUProgram} from '@tensorflow/tfjs-backend-webgpu';

import {FilterGradientGeometry, spatialAxesAs3d} from '../../src/geometry';
import {textPerKey} from '../text_per_key';
import {BLOCK_COLUMNS, Neighbours, sweptAxes, WebgpuReductionPlan, WORKGROUP_INVOCATIONS} from './reduction_plan';

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
  const axes = spatialAxesAs3d(sweptAxes(geometry));
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
    vec4(plan.reductionRows, plan.rowsPerSplit, plan.splits, plan.invocationsPerWorkgroup),  // work
    // blocks: per group down and across (taps: blocks of kernel rows and of taps along the innermost kernel axis), all of one split
    plan.mode === 'taps' ?
        vec4(Math.ceil(axes[1].kernelSize / plan.tapRows), Math.ceil(axes[2].kernelSize / plan.taps),
             Math.ceil(axes[1].diffDstSize / plan.outputRows), plan.blocksPerSplit) :
        vec4(blocksM, blocksN, 0, plan.blocksPerSplit),
  ];
}

/**
 * WGSL for the inside ranges of a row's items (a block's columns, a filter plane's taps): per
 * item i, `insideFirst<i>` and `insideEnd<i>`, the innermost positions px whose src coordinate
 * px · `stride` + `offset(i)` lies inside src, and `first<i>`, `end<i>`, the same range emptied
 * where `valid<i>` is false; then `firstX` and `endX`, where some valid item is inside, and with
 * `middle`, `allFirst` and `allEnd`, the middle stretch where every valid item is. `width` holds
 * the row's length.
 */
function insideRanges(items: readonly number[], offset: (i: number) => string, stride: string, middle: boolean): string {
  return `${items.map(i => `let insideFirst${i} = max(0, divCeil(-${offset(i)}, ${stride}));
    let insideEnd${i} = min(width, divFloor(uniforms.srcSpatial.z - 1 - ${offset(i)}, ${stride}) + 1);
    let first${i} = select(width, insideFirst${i}, valid${i});
    let end${i} = select(0, insideEnd${i}, valid${i});`).join('\n    ')}
    let firstX = ${items.map(i => `first${i}`).reduce((a, b) => `min(${a}, ${b})`)};
    let endX = ${items.map(i => `end${i}`).reduce((a, b) => `max(${a}, ${b})`)};${middle ? `
    let allFirst = ${items.map(i => `select(0, first${i}, valid${i})`).reduce((a, b) => `max(${a}, ${b})`)};
    let allEnd = ${items.map(i => `select(width, end${i}, valid${i})`).reduce((a, b) => `min(${a}, ${b})`)};` : ''}`;
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
 * What both pass-1 programs share: src and diffDst as flat arrays, the geometry uniforms, the
 * plan's workgroups of WORKGROUP_INVOCATIONS and the splits' partial filters as the output.
 */
abstract class Pass1Program implements WebGPUProgram {
  readonly variableNames = ['src', 'diffDst'];
  readonly uniforms = GEOMETRY_UNIFORMS;
  readonly workgroupSize: [number, number, number] = [WORKGROUP_INVOCATIONS, 1, 1];
  readonly dispatchLayout = {x: [0]};
  readonly dispatch: [number, number, number];
  readonly outputShape: number[];
  abstract readonly shaderKey: string;

  protected constructor(geometry: FilterGradientGeometry, plan: WebgpuReductionPlan) {
    this.outputShape = [plan.splits * geometry.filterSize];
    this.dispatch = [plan.workgroups, 1, 1];
  }

  abstract getUserCode(): string;
}

/** All FilterGradientBlocksProgram's text is made from: its cache key. */
export interface BlocksKey {
  /** BM. */
  readonly blockRows: number;
  /** Columns ordered channels inner (NXC data), else kernel offsets inner. */
  readonly channelsInner: boolean;
  readonly rowSweep: boolean;
}

export function blocksKey(geometry: FilterGradientGeometry, plan: WebgpuReductionPlan): BlocksKey {
  return Object.freeze({blockRows: plan.blockRows, channelsInner: geometry.dataFormat === 'NXC', rowSweep: plan.rowSweep});
}

/** `ConvBackpropFiltersBlocks_<BM>x4_<column order>[_rows]`. */
export function blocksShaderKey(key: BlocksKey): string {
  return `ConvBackpropFiltersBlocks_${key.blockRows}x${BLOCK_COLUMNS}_${key.channelsInner ? 'channelsInner' : 'kernelInner'}${
      key.rowSweep ? '_rows' : ''}`;
}

/** All FilterGradientTapsProgram's text is made from (the plan's 'taps' fields, see WebgpuReductionPlan): its cache key. */
export type TapsKey = Pick<WebgpuReductionPlan, 'taps' | 'tapRows' | 'tapShift' | 'outputRows' | 'rowStride' | 'rowDilation' |
                                                'tapLanes' | 'diffDstComponents' | 'unmaskedFirst' | 'srcRowUnits' | 'unitStrides' |
                                                'unitBeginPads' | 'unitNeighbourRows' | 'neighbourPositions'>;

export function tapsKey(plan: WebgpuReductionPlan): TapsKey {
  const {taps, tapRows, tapShift, outputRows, rowStride, rowDilation, tapLanes, diffDstComponents, unmaskedFirst, srcRowUnits,
         unitStrides, unitBeginPads, unitNeighbourRows, neighbourPositions} = plan;
  return Object.freeze({taps, tapRows, tapShift, outputRows, rowStride, rowDilation, tapLanes, diffDstComponents, unmaskedFirst,
                        srcRowUnits, unitStrides, unitBeginPads, unitNeighbourRows, neighbourPositions});
}

/**
 * `ConvBackpropFiltersTaps<R>x<T>_shift<m>_rows<P>[s<stride>d<dilation>]_lanes<L>[_vec4DiffDst][_unmaskedFirst]`
 * `[_srcRowUnits_strides<s>_pads<p>_neighbourRows<n>_neighbourPositions<n>]`: every field of the
 * key, the rows' stride and dilation only where P > 1 and the units' fields only with units of
 * src rows (elsewhere the plan holds them at 1, 0 and 'none').
 */
export function tapsShaderKey(key: TapsKey): string {
  return `ConvBackpropFiltersTaps${key.tapRows}x${key.taps}_shift${key.tapShift}_rows${key.outputRows}${
      key.outputRows > 1 ? `s${key.rowStride}d${key.rowDilation}` : ''}_lanes${key.tapLanes}${
      key.diffDstComponents > 1 ? '_vec4DiffDst' : ''}${key.unmaskedFirst ? '_unmaskedFirst' : ''}${
      key.srcRowUnits ? `_srcRowUnits_strides${key.unitStrides.join('x')}_pads${key.unitBeginPads.join('x')}_neighbourRows${
                            key.unitNeighbourRows}_neighbourPositions${key.neighbourPositions}` : ''}`;
}

/**
 * Pass 1, 'blocks' (see WebgpuReductionPlan): one invocation per (split, group, BM × 4 block)
 * of the group's filter matrix, reading both operands straight from the tensors: no workgroup
 * memory and no barrier. Per position an invocation reads its BM diffDst values and its 4 src
 * values (one per column) and adds BM × 4 products with vec4 arithmetic. Columns are ordered
 * channels inner for NXC data (a block's 4 src reads are neighbouring addresses), kernel
 * offsets inner for NCX.
 *
 * It takes its split's positions in one of two ways (plan.rowSweep):
 *   - rows swept: per row of positions (batch × outer diffDst positions; the innermost axis,
 *     pointwise axes merged) the outer src coordinates of each column are tested once; each
 *     column's inside range along the row is solved once per invocation; the middle stretch,
 *     where every column is inside, runs without tests, and the ends (and rows where a column's
 *     src row is outside) test each column;
 *   - positions walked (short rows): one position at a time, stepped with carries (never
 *     divided), each column tested against the src bounds.
 * A tested term outside src reads element 0 instead (an index select, no branch) and is
 * skipped (a select on the product), as the definition does, so NaN or ±Inf in diffDst stay
 * exact; on SwiftShader a load under an `if` costs more than the select.
 *
 * Why no workgroup memory: where invocations run as 4-lane groups on CPU threads (SwiftShader),
 * a barrier switches between every lane group of the workgroup and workgroup memory is read
 * and written lane by lane, so staging operands there costs more than the reads it saves. Here
 * a block's BM + 4 reads serve 4 · BM products from registers, and invocations next to each
 * other (blocks along columns are fastest) read the same diffDst values and neighbouring src
 * values, which a GPU's caches serve. On a large GPU a workgroup tile staged in shared memory
 * would save more reads; this program keeps to what the CPU adapter runs well.
 *
 * Cache key: `ConvBackpropFiltersBlocks_<BM>x4_<column order>[_rows]` (plus tfjs's): BM, the
 * column order and the row sweep are baked in; sizes, strides, dilations, pads, groups, layouts
 * and the split are uniforms (geometryUniforms).
 */
export class FilterGradientBlocksProgram extends Pass1Program {
  readonly shaderKey: string;
  /** All the text is made from. */
  readonly key: BlocksKey;

  constructor(geometry: FilterGradientGeometry, plan: WebgpuReductionPlan) {
    super(geometry, plan);
    this.key = blocksKey(geometry, plan);
    this.shaderKey = blocksShaderKey(this.key);
  }

  getUserCode(): string {
    return blocksText(this.key);
  }
}

/**
 * Pass 1, 'taps' (see WebgpuReductionPlan): one invocation per (split, R neighbouring kernel
 * rows × T neighbouring taps along the innermost kernel axis) of the filter planes of L
 * neighbouring diffDst channels (WebgpuReductionPlan.tapLanes: 4, or 1), enumerated with the
 * group fastest so that neighbouring invocations of a depthwise problem read neighbouring
 * channels. An invocation walks its split's units of P neighbouring rows of positions (batch × outer
 * diffDst positions; WebgpuReductionPlan.outputRows); per unit it checks the window's src
 * rows once and sweeps the innermost positions, reading each diffDst value once for its R · T
 * sums. Output row p's kernel row r reads src row p · stride + r · dilation, so neighbouring
 * output rows share src rows (at stride and dilation 1, R − 1 of them).
 *
 * The src values sit in a window of (its src rows) × T registers that slides by m taps a position
 * (m = stride ÷ dilation, baked in): tap t at one position is tap t + m at the one before, so a
 * position reads (its src rows) · m new src values and P diffDst values for P · R · T products (10
 * reads for 36 at 3 × 3, stride 1). Each tap's inside range along the row is solved once per
 * invocation and each src row's once per unit; a window value outside src (a pad, a tap beyond
 * the kernel) is read from element 0 instead (an index select, no branch). Masked, its products
 * are skipped (a select, not a multiplication by zero), as the definition does, so NaN and ±Inf
 * stay exact. Unmasked first (WebgpuReductionPlan.unmaskedFirst), such a value and a diffDst
 * value past the last row are set to 0 and every product is added: a · 0 adds ±0, which leaves a
 * sum as it was, unless a factor is ±Inf or NaN, which leaves the sum non-finite; so when every
 * sum is finite it is the masked one bit for bit, and otherwise the split runs again masked. The
 * re-run is a second loop over the split's units, not a branch per unit: SwiftShader runs the
 * body of every `if` and the first iteration of every loop whatever the lanes' conditions (the
 * lanes it masks off still execute), so a re-run per unit would cost every unit a masked
 * position and set-up, where one per split costs that once. One loop body serves the whole row, ends and rows that reach into the pads included:
 * on SwiftShader a load costs far more than the tests and selects, so the window's reads are
 * what counts, and a second, unmasked body for the middle of the row only makes the shader
 * bigger and slower. The masks combine with `&`, not `&&`: a short-circuit operator inside the
 * loop is a branch on a loop-invariant condition, which SwiftShader's compiler unswitches into a
 * copy of the loop per combination, whose compile time grows with each combination.
 *
 * Cache key: `ConvBackpropFiltersTaps<R>x<T>_shift<m>_rows<P>[s<stride>d<dilation>]_lanes<L>[_vec4DiffDst][_unmaskedFirst]`
 * (plus tfjs's): R (1-16), T (1-4), m, P (with the rows' stride and dilation when P > 1), L, the
 * vec4 diffDst binding and the unmasked first pass are baked in; sizes, strides, dilations, pads, groups, layouts and the
 * split are uniforms.
 */
export class FilterGradientTapsProgram extends Pass1Program {
  readonly shaderKey: string;
  /** All the text is made from. */
  readonly key: TapsKey;

  /** diffDst bound as vec4s where the plan reads it so (src stays f32s). */
  readonly variableComponents?: number[];

  constructor(geometry: FilterGradientGeometry, plan: WebgpuReductionPlan) {
    super(geometry, plan);
    if (plan.diffDstComponents > 1) {
      this.variableComponents = [1, plan.diffDstComponents];
    }
    this.key = tapsKey(plan);
    this.shaderKey = tapsShaderKey(this.key);
  }

  getUserCode(): string {
    return tapsText(this.key);
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

/** FilterGradientBlocksProgram's text, from its key alone (once per key). */
const blocksText = textPerKey((key: BlocksKey): string => {
    const BM = key.blockRows;
    const rows = [...Array(BM).keys()];
    const cols = [...Array(BLOCK_COLUMNS).keys()];
    const columnOf = key.channelsInner ?
        (j: number) => `let sc${j} = column${j} % SC; let k${j} = column${j} / SC;` :
        (j: number) => `let k${j} = column${j} % uniforms.kernel.w; let sc${j} = column${j} / uniforms.kernel.w;`;
    // One position's products: the columns' src values b0…b3 (read above) times each row's
    // diffDst value, each column's term skipped where `inside<j>` is false (when tested).
    const products = (inside: string | null) => `let b = vec4<f32>(${cols.map(j => `b${j}`).join(', ')});${inside === null ? '' : `
          let inside = vec4<bool>(${cols.map(j => `${inside}${j}`).join(', ')});`}
          ${rows.map(i => `acc${i} = acc${i} + ${inside === null ? `diffDst[d + rowDiffDst${i}] * b` :
                                                               `select(vec4<f32>(0.0), diffDst[d + rowDiffDst${i}] * b, inside)`};`)
               .join('\n          ')}`;
    const header = `
  ${COMMON_WGSL}
  const FAR = -536870912;  // a position outside every tensor, for columns the group's matrix does not have
  fn main(index : i32) {
    let lane = index % ${WORKGROUP_INVOCATIONS};
    let item = index / ${WORKGROUP_INVOCATIONS} * uniforms.work.w + lane;
    let split = item / uniforms.blocks.w;
    var block = item % uniforms.blocks.w;
    if (lane >= uniforms.work.w || split >= uniforms.work.z) {
      return;
    }
    let blockN = block % uniforms.blocks.y;
    block = block / uniforms.blocks.y;
    let blockM = block % uniforms.blocks.x;
    let g = block / uniforms.blocks.x;
    let SC = uniforms.dilations.w;
    let DC = uniforms.padsBegin.w;
    let columns = SC * uniforms.kernel.w;

    ${cols.map(j => `let column${j} = blockN * ${BLOCK_COLUMNS} + ${j};
    let valid${j} = column${j} < columns;
    ${columnOf(j)}
    let kernel${j} = vec3<i32>(k${j} / (uniforms.kernel.z * uniforms.kernel.y), (k${j} / uniforms.kernel.z) % uniforms.kernel.y, k${j} % uniforms.kernel.z);`).join('\n    ')}
    ${rows.map(i => `let dc${i} = blockM * ${BM} + ${i};
    let rowDiffDst${i} = (g * DC + min(dc${i}, DC - 1)) * uniforms.diffDstSteps.w;`).join('\n    ')}
    ${rows.map(i => `var acc${i} = vec4<f32>(0.0);`).join('\n    ')}
    let rowStart = split * uniforms.work.y;
    let rowEnd = min(rowStart + uniforms.work.y, uniforms.work.x);`;
    const store = `
    let splitBase = split * uniforms.filterSteps.w + g * uniforms.filterChannels.x;
    ${cols.map(j => `let columnFilter${j} = sc${j} * uniforms.filterChannels.z + dot(kernel${j}, uniforms.filterSteps.xyz);`).join('\n    ')}
    ${rows.map(i => `if (dc${i} < DC) {
      ${cols.map(j => `if (valid${j}) {
        result[splitBase + dc${i} * uniforms.filterChannels.y + columnFilter${j}] = acc${i}[${j}];
      }`).join('\n      ')}
    }`).join('\n    ')}
  }
`;
    if (!key.rowSweep) {
      return `${header}
    ${cols.map(j => `let offset${j} = select(vec3<i32>(FAR), kernel${j} * uniforms.dilations.xyz, valid${j});
    let columnSrc${j} = (g * SC + sc${j}) * uniforms.srcSteps.w + dot(kernel${j} * uniforms.dilations.xyz, uniforms.srcSteps.xyz);`).join('\n    ')}
    var px = rowStart % uniforms.diffDstSpatial.z;
    var rest = rowStart / uniforms.diffDstSpatial.z;
    var py = rest % uniforms.diffDstSpatial.y;
    rest = rest / uniforms.diffDstSpatial.y;
    var pz = rest % uniforms.diffDstSpatial.x;
    var n = rest / uniforms.diffDstSpatial.x;
    for (var row = rowStart; row < rowEnd; row = row + 1) {
      let p = vec3<i32>(pz, py, px);
      let position = p * uniforms.strides.xyz - uniforms.padsBegin.xyz;
      let d = n * uniforms.diffDstSpatial.w + dot(p, uniforms.diffDstSteps.xyz);
      let s = n * uniforms.srcSpatial.w + dot(position, uniforms.srcSteps.xyz);
      ${cols.map(j => `let inside${j} = insideSrc(position + offset${j});
      let b${j} = src[select(0, s + columnSrc${j}, inside${j})];`).join('\n      ')}
      ${products('inside')}
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
${store}`;
    }
    // One stretch [from, to) of a row's positions: each column's read tested against its range, or not.
    const sweep = (from: string, to: string, tested: boolean) => `{
        var s = srcRow + (${from}) * srcStep;
        var d = diffDstRow + (${from}) * diffDstStep;
        for (var px = ${from}; px < ${to}; px = px + 1) {
          ${tested ? cols.map(j => `let in${j} = inRow${j} && px >= first${j} && px < end${j};
          let b${j} = src[select(0, s + columnSrc${j}, in${j})];`).join('\n          ') : cols.map(j => `let b${j} = src[s + columnSrc${j}];`).join('\n          ')}
          ${products(tested ? 'in' : null)}
          s = s + srcStep;
          d = d + diffDstStep;
        }
      }`;
    return `${header}
    let width = uniforms.diffDstSpatial.z;
    let strideX = uniforms.strides.z;
    ${cols.map(j => `let offset${j} = kernel${j} * uniforms.dilations.xyz - uniforms.padsBegin.xyz;
    let columnSrc${j} = ${j === 0 ? '' : 'select(columnSrc0, '}(g * SC + sc${j}) * uniforms.srcSteps.w + dot(offset${j}, uniforms.srcSteps.xyz)${
        j === 0 ? '' : `, valid${j})`};`).join('\n    ')}
    // In the middle stretch, columns beyond the matrix read column 0's value; their sums are never stored.
    ${insideRanges(cols, j => `offset${j}.z`, 'strideX', true)}
    let srcStep = strideX * uniforms.srcSteps.z;
    let diffDstStep = uniforms.diffDstSteps.z;
    for (var row = rowStart; row < rowEnd; row = row + 1) {
      let py = row % uniforms.diffDstSpatial.y;
      let rows = row / uniforms.diffDstSpatial.y;
      let pz = rows % uniforms.diffDstSpatial.x;
      let n = rows / uniforms.diffDstSpatial.x;
      let outer = vec2<i32>(pz, py) * uniforms.strides.xy;
      ${cols.map(j => `let inRow${j} = valid${j} && all(outer + offset${j}.xy >= vec2<i32>(0)) && all(outer + offset${j}.xy < uniforms.srcSpatial.xy);`).join('\n      ')}
      if (!(${cols.map(j => `inRow${j}`).join(' || ')})) {
        continue;
      }
      let rowAll = ${cols.map(j => `(inRow${j} || !valid${j})`).join(' && ')};
      let srcRow = n * uniforms.srcSpatial.w + outer.x * uniforms.srcSteps.x + outer.y * uniforms.srcSteps.y;
      let diffDstRow = n * uniforms.diffDstSpatial.w + pz * uniforms.diffDstSteps.x + py * uniforms.diffDstSteps.y;
      let middleFrom = select(endX, allFirst, rowAll);
      let middleTo = select(endX, allEnd, rowAll);
      ${sweep('middleFrom', 'middleTo', false)}
      // The ends: [firstX, middleFrom) and [middleTo, endX), through one tested body.
      for (var side = 0; side < 2; side = side + 1) {
        let sideFrom = select(max(middleFrom, middleTo), firstX, side == 0);
        let sideTo = select(endX, min(middleFrom, endX), side == 0);
        ${sweep('sideFrom', 'sideTo', true)}
      }
    }
${store}`;
});

/** FilterGradientTapsProgram's text, from its key alone (once per key). */
const tapsText = textPerKey((key: TapsKey): string => {
    const T = key.taps;
    const R = key.tapRows;
    const P = key.outputRows;
    const m = key.tapShift;
    // A diffDst value, a sum and a product hold the invocation's L neighbouring diffDst channels
    // (f32 for one, vecL for several: one vec4 read, element index / 4, where diffDst is bound as
    // vec4s, else L reads of neighbouring elements); src values are scalars.
    const L = key.tapLanes;
    const lanes = [...Array(L).keys()];
    const V = L === 1 ? 'f32' : `vec${L}<f32>`;
    const zero = `${V}(0.0)`;
    const taps = [...Array(T).keys()];
    const kernelRows = [...Array(R).keys()];
    const outputRows = [...Array(P).keys()];
    // The window's src rows: output row p's kernel row r reads src row p · stride + r · dilation,
    // rows of neighbouring output rows coinciding; windowRow(p, r) is its index. The plan bakes in
    // stride and dilation when P > 1; with P = 1 (both 1 in the plan) the offset of window row r
    // takes the dilation from the uniforms.
    const {rowStride, rowDilation} = key;
    const rowOffsets = [...new Set(outputRows.flatMap(p => kernelRows.map(r => p * rowStride + r * rowDilation)))].sort((a, b) => a - b);
    const srcRows = [...rowOffsets.keys()];
    const windowRow = (p: number, r: number) => rowOffsets.indexOf(p * rowStride + r * rowDilation);
    const rowOffset = (q: number) => P === 1 ? `${q} * uniforms.dilations.y` : `${rowOffsets[q]}`;
    const each = (f: (r: number, t: number) => string, separator = '\n          ') =>
        kernelRows.flatMap(r => taps.map(t => f(r, t))).join(separator);
    const products = (f: (p: number, r: number, t: number) => string, separator = '\n          ') =>
        outputRows.flatMap(p => kernelRows.flatMap(r => taps.map(t => f(p, r, t)))).join(separator);
    const windows = (f: (q: number, t: number) => string, tapList: number[], separator = '\n          ') =>
        srcRows.flatMap(q => tapList.map(t => f(q, t))).join(separator);
    // A window value read where `inside` holds; elsewhere element 0 is read instead, and set to 0
    // where products run untested.
    const windowRead = (q: number, t: number, inside: string, tested: boolean) => tested ?
        `window${q}_${t} = src[select(0, s + rowTap${q} + tap${t}, ${inside})];` :
        `window${q}_${t} = select(0.0, src[select(0, s + rowTap${q} + tap${t}, ${inside})], ${inside});`;
    // One pass over a unit's positions [firstX, end). A read outside src or past the last row
    // reads element 0 instead (an index select); `tested`, every product is then selected by its
    // row's and tap's masks, and untested, such a read is set to 0 and every product added.
    const unitPass = (end: string, tested: boolean) => `{
      var s = srcRow + firstX * srcStep;
      var d = diffDstRow + firstX * diffDstStep;
      ${windows((q, t) => windowRead(q, t, `inSrcRow${q} & (firstX >= insideFirst${t}) & (firstX < insideEnd${t})`, tested),
                taps.slice(0, T - m), '\n      ')}
      for (var px = firstX; px < ${end}; px = px + 1) {
        ${outputRows.map(p => tested ? `let a${p} = diffDstValues(select(0, d + ${p} * diffDstRowStep, validOut${p}));` :
                                       `let a${p} = select(${zero}, diffDstValues(select(0, d + ${p} * diffDstRowStep, validOut${p})), validOut${p});`).join('\n        ')}
        ${taps.map(t => `let inTap${t} = (px >= insideFirst${t}) & (px < insideEnd${t});`).join('\n        ')}
        ${windows((q, t) => windowRead(q, t, `inSrcRow${q} & inTap${t}`, tested), taps.slice(T - m), '\n        ')}
        ${products((p, r, t) => tested ? `sum${r}_${t} = sum${r}_${t} + select(${zero}, a${p} * window${windowRow(p, r)}_${t}, inRow${p}_${r} & inTap${t});` :
                                         `sum${r}_${t} = sum${r}_${t} + a${p} * window${windowRow(p, r)}_${t};`, '\n        ')}
        ${windows((q, t) => `window${q}_${t} = window${q}_${t + m};`, taps.slice(0, T - m), '\n        ')}
        s = s + srcStep;
        d = d + diffDstStep;
      }
    }`;
    // The split's units, each product tested or not (see unitPass), up to unit `end`.
    const unitLoop = (end: string, tested: boolean) => `for (var row = rowStart; row < ${end}; row = row + 1) {
      let py = (row % uniforms.blocks.z) * ${P};
      let rows = row / uniforms.blocks.z;
      let pz = rows % uniforms.diffDstSpatial.x;
      let n = rows / uniforms.diffDstSpatial.x;
      let z = pz * uniforms.strides.x + zOffset;
      let y = py * uniforms.strides.y + yOffset;
      ${outputRows.map(p => `let validOut${p} = py + ${p} < uniforms.diffDstSpatial.y;`).join('\n      ')}
      ${srcRows.map(q => `let inSrcRow${q} = (y + ${rowOffset(q)} >= 0) & (y + ${rowOffset(q)} < uniforms.srcSpatial.y);`).join('\n      ')}
      ${outputRows.flatMap(p => kernelRows.map(r => `let inRow${p}_${r} = validOut${p} & validRow${r} & inSrcRow${windowRow(p, r)};`)).join('\n      ')}
      if (z < 0 || z >= uniforms.srcSpatial.x || !(${outputRows.flatMap(p => kernelRows.map(r => `inRow${p}_${r}`)).join(' || ')})) {
        continue;
      }
      let srcRow = n * uniforms.srcSpatial.w + z * uniforms.srcSteps.x + y * uniforms.srcSteps.y + srcChannel;
      let diffDstRow = n * uniforms.diffDstSpatial.w + pz * uniforms.diffDstSteps.x + py * uniforms.diffDstSteps.y + diffDstChannel;
      ${unitPass('endX', tested)}
    }`;
    // Units of src rows (plan.srcRowUnits): src row q of the unit (from S · py) and column u of a
    // position (from positionStride · px) are kernel row r = q + padY − S · p of the unit's
    // diffDst row p and tap t = u + padX − positionStride · k of position px + k. The rows p are
    // the unit's P and its neighbouring ones (unitNeighbourRows: 'Prior' p = −1, 'Next' p = P),
    // each valid where the image has it (hasRowBefore, hasRowAfter); the positions k are the
    // position's own (a<p>) and its neighbours (neighbourPositions: the position before, carried
    // in left<p>, and the one after, read ahead into right<p> and carried into a<p>), which a
    // row's first and last positions do not have: those are written out apart from the loop,
    // without the products of the missing neighbour.
    const [S, positionStride] = key.unitStrides;
    const [padY, padX] = key.unitBeginPads;
    const before = (neighbours: Neighbours) => neighbours === 'before' || neighbours === 'both';
    const after = (neighbours: Neighbours) => neighbours === 'after' || neighbours === 'both';
    const {unitNeighbourRows, neighbourPositions} = key;
    const unitRows = [...(before(unitNeighbourRows) ? [-1] : []), ...outputRows, ...(after(unitNeighbourRows) ? [P] : [])];
    const rowName = (p: number) => p < 0 ? 'Prior' : p >= P ? 'Next' : `${p}`;
    const rowValid = (p: number) => p < 0 ? 'hasRowBefore' : p >= P ? 'hasRowAfter' : null;
    const positionOffsets = [...(before(neighbourPositions) ? [-1] : []), 0, ...(after(neighbourPositions) ? [1] : [])];
    const diffDstValue = (p: number, k: number) => `${k < 0 ? 'left' : k > 0 ? 'right' : 'a'}${rowName(p)}`;
    type Edge = 'first' | 'last' | null;
    const unitProducts = (q: number, u: number, edge: Edge) => unitRows.flatMap(p => {
      const r = q + padY - S * p;
      return r < 0 || r >= R ? [] : positionOffsets.flatMap(k => {
        const t = u + padX - positionStride * k;
        if (t < 0 || t >= T || (edge === 'first' && k < 0) || (edge === 'last' && k > 0)) {
          return [];
        }
        const product = `${diffDstValue(p, k)} * w${q}_${u}`;
        const valid = rowValid(p);
        return [`sum${r}_${t} = sum${r}_${t} + ${valid === null ? product : `select(${zero}, ${product}, ${valid})`};`];
      });
    });
    // A diffDst value of row p at `offset` positions from d; a neighbouring row's read from
    // element 0 where the image does not have it.
    const diffDstRead = (p: number, offset: string) => {
      const index = `d + unitDiffDstRow${rowName(p)}${offset}`;
      const valid = rowValid(p);
      return valid === null ? `diffDst[${index}]` : `diffDst[select(0, ${index}, ${valid})]`;
    };
    const eachUnitRow = (f: (name: string, p: number) => string) => unitRows.map(p => f(rowName(p), p)).join('\n        ');
    // A position's diffDst reads: the position after's (read ahead, none at a row's last), else its own.
    const positionReads = (edge: Edge) => !after(neighbourPositions) ? eachUnitRow((name, p) => `a${name} = ${diffDstRead(p, '')};`) :
        edge === 'last' ? '' : eachUnitRow((name, p) => `let right${name} = ${diffDstRead(p, ' + diffDstStep')};`);
    // What the next position takes over: this one's values as the position before, the read-ahead ones as its own.
    const positionCarry = (edge: Edge) => [
      ...(before(neighbourPositions) ? [eachUnitRow(name => `left${name} = a${name};`)] : []),
      ...(after(neighbourPositions) && edge !== 'last' ? [eachUnitRow(name => `a${name} = right${name};`)] : []),
    ].join('\n        ');
    const unitPosition = (edge: Edge) => `${positionReads(edge)}
        ${[...Array(positionStride).keys()].map(u => `let s${u} = s + unitSrcColumn${u};`).join(' ')}
        ${[...Array(S * P).keys()].flatMap(q => [...Array(positionStride).keys()].flatMap(u => {
          const products = unitProducts(q, u, edge);
          return products.length === 0 ? [] : [`let w${q}_${u} = src[s${u} + unitSrcRow${q}];`, ...products];
        })).join('\n        ')}
        ${positionCarry(edge)}
        s = s + srcStep;
        d = d + diffDstStep;`;
    const positionLoop = (from: string, to: string) => `for (var px = ${from}; px < ${to}; px = px + 1) {
        ${unitPosition(null)}
      }`;
    // The offsets of the unit's src rows, a position's src columns and the unit's diffDst rows.
    const srcRowUnitLoop = () => `${[...Array(S * P).keys()].map(q => `let unitSrcRow${q} = ${q} * uniforms.srcSteps.y;`).join('\n    ')}
    ${[...Array(positionStride).keys()].map(u => `let unitSrcColumn${u} = ${u} * uniforms.srcSteps.z;`).join('\n    ')}
    ${unitRows.map(p => `let unitDiffDstRow${rowName(p)} = ${p} * diffDstRowStep;`).join('\n    ')}
    for (var row = rowStart; row < rowEnd; row = row + 1) {
      let py = (row % uniforms.blocks.z) * ${P};
      let rows = row / uniforms.blocks.z;
      let pz = rows % uniforms.diffDstSpatial.x;
      let n = rows / uniforms.diffDstSpatial.x;
      let z = pz * uniforms.strides.x + zOffset;
      if (z < 0 || z >= uniforms.srcSpatial.x) {
        continue;
      }${before(unitNeighbourRows) ? `
      let hasRowBefore = py > 0;` : ''}${after(unitNeighbourRows) ? `
      let hasRowAfter = py + ${P} < uniforms.diffDstSpatial.y;` : ''}
      var s = n * uniforms.srcSpatial.w + z * uniforms.srcSteps.x + py * ${S} * uniforms.srcSteps.y + unitSrcChannel;
      var d = n * uniforms.diffDstSpatial.w + pz * uniforms.diffDstSteps.x + py * uniforms.diffDstSteps.y + diffDstChannel;
      ${unitRows.map(p => `var a${rowName(p)} = ${after(neighbourPositions) ? diffDstRead(p, '') : zero};${
          before(neighbourPositions) ? ` var left${rowName(p)} = ${zero};` : ''}`).join('\n      ')}${before(neighbourPositions) ? `
      {
        ${unitPosition('first')}
      }` : ''}
      ${positionLoop(before(neighbourPositions) ? '1' : '0', after(neighbourPositions) ? 'width - 1' : 'width')}${after(neighbourPositions) ? `
      {
        ${unitPosition('last')}
      }` : ''}
    }`;
    return `
  ${COMMON_WGSL}
  const MAX_FINITE = 3.4028234e38;  // just under f32's largest: a sum at the largest re-runs, which is only slower
  fn diffDstValues(i : i32) -> ${V} {
    return ${L === 1 ? 'diffDst[i]' : key.diffDstComponents === 4 ? 'diffDst[i >> 2u]' :
                                    `${V}(${lanes.map(j => `diffDst[i${j === 0 ? '' : ` + ${j}`}]`).join(', ')})`};
  }
  fn main(index : i32) {
    let lane = index % ${WORKGROUP_INVOCATIONS};
    let item = index / ${WORKGROUP_INVOCATIONS} * uniforms.work.w + lane;
    let split = item / uniforms.blocks.w;
    var rest = item % uniforms.blocks.w;
    if (lane >= uniforms.work.w || split >= uniforms.work.z) {
      return;
    }
    let G = uniforms.strides.w;
    let SC = uniforms.dilations.w;
    let DC = uniforms.padsBegin.w;
    let g = rest % G;
    rest = rest / G;
    let dc = (rest % (DC / ${L})) * ${L};
    rest = rest / (DC / ${L});
    let sc = rest % SC;
    rest = rest / SC;
    let kxBlock = rest % uniforms.blocks.y;
    rest = rest / uniforms.blocks.y;
    let kyBlock = rest % uniforms.blocks.x;
    let kz = rest / uniforms.blocks.x;
    let zOffset = kz * uniforms.dilations.x - uniforms.padsBegin.x;
    let yOffset = kyBlock * ${R} * uniforms.dilations.y - uniforms.padsBegin.y;

    let stride = uniforms.strides.z;
    let width = uniforms.diffDstSpatial.z;
    ${taps.map(t => `let kx${t} = kxBlock * ${T} + ${t};
    let valid${t} = kx${t} < uniforms.kernel.z;
    let offset${t} = kx${t} * uniforms.dilations.z - uniforms.padsBegin.z;
    let tap${t} = ${t} * uniforms.dilations.z * uniforms.srcSteps.z;`).join('\n    ')}
    ${kernelRows.map(r => `let ky${r} = kyBlock * ${R} + ${r};
    let validRow${r} = ky${r} < uniforms.kernel.y;`).join('\n    ')}
    ${srcRows.map(q => `let rowTap${q} = ${rowOffset(q)} * uniforms.srcSteps.y;`).join('\n    ')}
    ${each((r, t) => `var sum${r}_${t} = ${zero};`, '\n    ')}
    ${windows((q, t) => `var window${q}_${t} = 0.0;`, taps, '\n    ')}
    // The masks use insideFirst/insideEnd, taps beyond the kernel included: their window values
    // slide into real taps, so they are read as any other (their sums are never stored).
    ${insideRanges(taps, t => `offset${t}`, 'stride', false)}
    let srcStep = stride * uniforms.srcSteps.z;
    let diffDstStep = uniforms.diffDstSteps.z;
    let diffDstRowStep = uniforms.diffDstSteps.y;
    let unitSrcChannel = (g * SC + sc) * uniforms.srcSteps.w;
    let srcChannel = unitSrcChannel + offset0 * uniforms.srcSteps.z;
    let diffDstChannel = (g * DC + dc) * uniforms.diffDstSteps.w;

    // A unit of the reduction: ${P} neighbouring rows of positions (batch, outer diffDst positions).
    let rowStart = split * uniforms.work.y;
    let rowEnd = min(rowStart + uniforms.work.y, uniforms.work.x);
    ${key.srcRowUnits ? srcRowUnitLoop() : key.unmaskedFirst ? `${unitLoop('rowEnd', false)}
    // Pads and rows past the image added a · 0: exact unless a factor was ±Inf or NaN, which
    // leaves a sum non-finite (as does a large finite sum that overflowed): then the split runs
    // again, each product tested.
    let check = ${each((r, t) => `sum${r}_${t}`, ' + ')};
    let redo = !${L === 1 ? '(abs(check) <= MAX_FINITE)' : `all(abs(check) <= ${V}(MAX_FINITE))`};
    ${each((r, t) => `sum${r}_${t} = select(sum${r}_${t}, ${zero}, redo);`, '\n    ')}
    ${unitLoop('select(rowStart, rowEnd, redo)', true)}` : unitLoop('rowEnd', true)}
    let filterPlane = split * uniforms.filterSteps.w + g * uniforms.filterChannels.x + dc * uniforms.filterChannels.y +
        sc * uniforms.filterChannels.z + kz * uniforms.filterSteps.x;
    ${each((r, t) => `if (validRow${r} && valid${t}) {
      let tapFilter${r}_${t} = filterPlane + ky${r} * uniforms.filterSteps.y + kx${t} * uniforms.filterSteps.z;
      ${L === 1 ? `result[tapFilter${r}_${t}] = sum${r}_${t};` :
                  lanes.map(j => `result[tapFilter${r}_${t} + ${j} * uniforms.filterChannels.y] = sum${r}_${t}[${j}];`).join('\n      ')}
    }`, '\n    ')}
  }
`;
});

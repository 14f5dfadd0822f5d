/**
 * Every shader text the webgl and webgpu kernels make for a problem, with what the programs are
 * given besides (uniform names, types and values; tfjs program fields; webgpu cache keys), under
 * the input kinds the browser specs run: WebGL 2 multi-target with fresh inputs, inputs packed
 * by an earlier op (odd block rows), folded textures, 4 draw buffers and a small texture limit;
 * the single-target programs on WebGL 2 (direct reads or tfjs's samplers) and WebGL 1; webgpu.
 * Made in Node: the text builders need no GL context.
 */
import {computeGeometry, FilterGradientGeometry} from '../../src/geometry';
import {ArrangeChannelTexelsProgram, ArrangeTargetsProgram, channelsInnermost, TargetLocation} from '../../kernels/webgl/arrange_targets';
import {denseRowsProgram, denseRowsTargetLocation, planDenseRows} from '../../kernels/webgl/dense_rows';
import {depthwiseRowsProgram, depthwiseRowsTargetLocation, planDepthwiseRows} from '../../kernels/webgl/depthwise_rows';
import {ArrangeTilesProgram, FilterGradientProgram, SumSplitsProgram} from '../../kernels/webgl/filter_gradient_program';
import type {MultiTargetProgram} from '../../kernels/webgl/multi_target';
import type {PackedTexture} from '../../kernels/webgl/packed_reads';
import {planReduction} from '../../kernels/webgl/reduction_plan';
import {sumTargetSplitsProgram, TargetSplits} from '../../kernels/webgl/sum_target_splits';
import {planThinRows, THIN_ROWS_SRC_COLUMNS, thinRowsProgram, thinRowsTargetLocation} from '../../kernels/webgl/thin_rows';
import {planThinTaps, thinTapsProgram, thinTapsTargetLocation} from '../../kernels/webgl/thin_taps';
import {planWideTaps, wideTapsProgram, wideTapsTargetLocation} from '../../kernels/webgl/wide_taps';
import {planWideTiles, wideTilesProgram, wideTilesTargetLocation} from '../../kernels/webgl/wide_tiles';
import {FilterGradientBlocksProgram, FilterGradientTapsProgram, geometryUniforms, SumSplitsProgram as WebgpuSumSplitsProgram} from '../../kernels/webgpu/filter_gradient_program';
import {planWebgpuReduction} from '../../kernels/webgpu/reduction_plan';
import type {TextProblem} from './problems';

/** A program as recorded: everything its compiled form and its draw depend on. */
export type ProgramRecord = Readonly<Record<string, unknown>>;

/** How the inputs and the device look for one run of the multi-target planner. */
interface MultiTargetKind {
  readonly name: string;
  readonly maxTargets: number;
  readonly maxTextureSize: number;
  /** Inputs packed by an earlier op: tfjs's packed shape is the tensor's own. */
  readonly packedByOp: boolean;
  readonly folded: boolean;
}

const MULTI_TARGET_KINDS: readonly MultiTargetKind[] = [
  {name: 'webgl2/fresh', maxTargets: 8, maxTextureSize: 8192, packedByOp: false, folded: false},
  {name: 'webgl2/packedByOp', maxTargets: 8, maxTextureSize: 8192, packedByOp: true, folded: false},
  {name: 'webgl2/folded', maxTargets: 8, maxTextureSize: 8192, packedByOp: false, folded: true},
  {name: 'webgl2/targets4', maxTargets: 4, maxTextureSize: 8192, packedByOp: false, folded: false},
  {name: 'webgl2/texture512', maxTargets: 8, maxTextureSize: 512, packedByOp: true, folded: false},
];

/** oddBlockRows of the kernel for a packed texture tfjs made for the tensor's own shape. */
export function oddBlockRowsOfShape(shape: readonly number[]): number {
  if (shape.length < 3) return 0;
  const blockRows = shape[shape.length - 2];
  if (blockRows % 2 === 0) return 0;
  let positions = 1;
  for (let axis = shape.length - 2; axis >= 0; axis--) {
    positions *= shape[axis];
    if (positions === blockRows) return blockRows;
  }
  return 0;
}

/** A view's texture as the dump assumes tfjs made it: exact (row-major) or squarish (folded). */
export function viewTexture(elements: number, columns: number, blockRows: number, folded: boolean): PackedTexture {
  const rows = elements / columns;
  const viewRows = blockRows > 0 ? rows / blockRows * (blockRows + 1) : rows;
  if (!folded) return {texShape: [viewRows + viewRows % 2, columns + columns % 2], columns, folded, blockRows};
  const texels = Math.ceil(viewRows / 2) * Math.ceil(columns / 2);
  const side = Math.ceil(Math.sqrt(texels));
  return {texShape: [2 * Math.ceil(texels / side), 2 * side], columns, folded, blockRows};
}

function multiTargetRecord(program: MultiTargetProgram): ProgramRecord {
  return {name: program.name, text: program.source, inputNames: program.inputNames, uniforms: program.uniforms};
}

interface GpgpuLike {
  variableNames: string[];
  outputShape: number[];
  userCode: string;
  packedInputs?: boolean;
  packedOutput?: boolean;
  enableShapeUniforms?: boolean;
  customUniforms?: unknown;
  uniforms?: () => number[][];
}

function gpgpuRecord(program: GpgpuLike): ProgramRecord {
  return {
    name: program.constructor.name, text: program.userCode, variableNames: program.variableNames,
    outputShape: program.outputShape, packedInputs: program.packedInputs ?? false, packedOutput: program.packedOutput ?? false,
    enableShapeUniforms: program.enableShapeUniforms ?? false, customUniforms: program.customUniforms ?? [],
    uniforms: program.uniforms?.() ?? [],
  };
}

type Textures = {src: PackedTexture; diffDst: PackedTexture};

/** The multi-target programs of one kind: pass 1, the split sum, the arrangement (as the kernel at e22ce89 runs them). */
function multiTargetTexts(geometry: FilterGradientGeometry, kind: MultiTargetKind): Record<string, ProgramRecord> {
  const srcShape = geometry.src.shape;
  const diffDstShape = geometry.diffDst.shape;
  const blockRows = kind.packedByOp ? {src: oddBlockRowsOfShape(srcShape), diffDst: oddBlockRowsOfShape(diffDstShape)} :
                                      {src: 0, diffDst: 0};
  const paddedBlocks = blockRows.src > 0 || blockRows.diffDst > 0;
  const {maxTargets, maxTextureSize} = kind;
  type Pass = {name: string; targetSplits: TargetSplits; location: TargetLocation; channelTexels: boolean; srcColumns?: number;
               program: (t: Textures) => MultiTargetProgram};
  const plan = (): Pass | null => {
    const dense = planDenseRows(geometry, maxTargets, maxTextureSize, blockRows);
    if (dense !== null) return {name: 'dense rows', targetSplits: dense.targetSplits, location: denseRowsTargetLocation(dense), channelTexels: true, program: t => denseRowsProgram(geometry, dense, t)};
    const tiles = planWideTiles(geometry, maxTargets, maxTextureSize, paddedBlocks);
    if (tiles !== null) return {name: 'wide tiles', targetSplits: tiles.targetSplits, location: wideTilesTargetLocation(geometry, tiles), channelTexels: true, program: t => wideTilesProgram(geometry, tiles, t)};
    const rows = planDepthwiseRows(geometry, maxTargets, maxTextureSize, blockRows);
    if (rows !== null) return {name: 'depthwise rows', targetSplits: rows.targetSplits, location: depthwiseRowsTargetLocation(rows), channelTexels: false, program: t => depthwiseRowsProgram(geometry, rows, t)};
    const taps = planWideTaps(geometry, maxTargets, maxTextureSize, paddedBlocks);
    if (taps !== null) return {name: 'wide taps', targetSplits: taps.targetSplits, location: wideTapsTargetLocation(taps), channelTexels: false, program: t => wideTapsProgram(geometry, taps, t)};
    const thinRows = planThinRows(geometry, maxTargets, maxTextureSize, blockRows.diffDst);
    if (thinRows !== null) return {name: 'thin rows', targetSplits: thinRows.targetSplits, location: thinRowsTargetLocation(thinRows), channelTexels: false, srcColumns: THIN_ROWS_SRC_COLUMNS, program: t => thinRowsProgram(geometry, thinRows, t)};
    const thin = planThinTaps(geometry, maxTargets, maxTextureSize);
    if (thin !== null) return {name: 'thin taps', targetSplits: thin.targetSplits, location: thinTapsTargetLocation(thin), channelTexels: false, program: t => thinTapsProgram(geometry, thin, t)};
    return null;
  };
  const pass = plan();
  const prefix = `multiTarget/${kind.name}`;
  if (pass === null) return {[`${prefix}/pass`]: {pass: null}};
  const elements = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);
  const srcColumns = pass.srcColumns ?? srcShape[srcShape.length - 1];
  const srcBlockRows = pass.srcColumns !== undefined ? 0 : blockRows.src;
  const textures = {
    src: viewTexture(elements(srcShape), srcColumns, srcBlockRows, kind.folded),
    diffDst: viewTexture(elements(diffDstShape), diffDstShape[diffDstShape.length - 1], blockRows.diffDst, kind.folded),
  };
  const records: Record<string, ProgramRecord> = {
    [`${prefix}/pass`]: {pass: pass.name, splits: pass.targetSplits.splits, location: pass.location},
    [`${prefix}/pass1`]: multiTargetRecord(pass.program(textures)),
  };
  if (pass.targetSplits.splits > 1) {
    records[`${prefix}/sumTargetSplits`] = multiTargetRecord(sumTargetSplitsProgram(pass.location.targetCount, pass.targetSplits));
  }
  const arrange = pass.channelTexels && channelsInnermost(geometry) ? new ArrangeChannelTexelsProgram(geometry, pass.location) :
                                                                     new ArrangeTargetsProgram(geometry, pass.location);
  records[`${prefix}/arrange`] = gpgpuRecord(arrange as unknown as GpgpuLike);
  return records;
}

/** The single-target programs on WebGL 2 with direct reads, with tfjs's samplers, and on WebGL 1. */
function singleTargetTexts(geometry: FilterGradientGeometry): Record<string, ProgramRecord> {
  const plan = planReduction(geometry);
  const records: Record<string, ProgramRecord> = {'singleTarget/plan': {...plan}};
  for (const [name, webgl2, directReads] of [['webgl2/direct', true, true], ['webgl2/samplers', true, false],
                                              ['webgl1', false, false]] as const) {
    records[`singleTarget/${name}/pass1`] = gpgpuRecord(new FilterGradientProgram(geometry, plan, webgl2, directReads) as unknown as GpgpuLike);
    if (plan.mode !== 'single' || plan.splits > 1) {
      const finish = plan.mode !== 'single' ? new ArrangeTilesProgram(geometry, plan, webgl2) :
                                              new SumSplitsProgram(geometry.filterSize, plan.splits, webgl2);
      records[`singleTarget/${name}/finish`] = gpgpuRecord(finish as unknown as GpgpuLike);
    }
  }
  return records;
}

function webgpuTexts(geometry: FilterGradientGeometry): Record<string, ProgramRecord> {
  const plan = planWebgpuReduction(geometry);
  const program = plan.mode === 'blocks' ? new FilterGradientBlocksProgram(geometry, plan) : new FilterGradientTapsProgram(geometry, plan);
  const record = (p: object & {getUserCode(): string; shaderKey: string}) => {
    const {getUserCode: _, ...fields} = {...p, getUserCode: undefined} as Record<string, unknown>;
    delete fields.plan;
    return {...fields, name: p.constructor.name, shaderKey: p.shaderKey, text: p.getUserCode()};
  };
  const records: Record<string, ProgramRecord> = {
    'webgpu/plan': {...plan},
    'webgpu/pass1': {...record(program), programUniforms: geometryUniforms(geometry, plan)},
  };
  if (plan.splits > 1) {
    const sum = new WebgpuSumSplitsProgram(geometry.filterSize, plan.splits);
    records['webgpu/sumSplits'] = {...record(sum), programUniforms: sum.programUniforms()};
  }
  return records;
}

/** Every record of one problem, keyed `<program family>/<input kind>/<program>`. */
export function shaderTexts(problem: TextProblem): Record<string, ProgramRecord> {
  const geometry = computeGeometry(problem.op, {input: {shape: problem.inputShape, dtype: 'float32'},
                                                outputDelta: {shape: problem.outputDeltaShape, dtype: 'float32'}},
                                   problem.attrs);
  if (geometry.batch === 0) return {};
  return {
    ...Object.assign({}, ...MULTI_TARGET_KINDS.map(kind => multiTargetTexts(geometry, kind))),
    ...singleTargetTexts(geometry),
    ...webgpuTexts(geometry),
  };
}

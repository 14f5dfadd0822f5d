/**
 * Every shader text the webgl and webgpu kernels make for a problem, with what the programs are
 * given besides (uniform names, types and values; tfjs program fields; webgpu cache keys), under
 * the input kinds the browser specs run: WebGL 2 multi-target with fresh inputs, inputs packed
 * by an earlier op (odd block rows), folded textures, 4 draw buffers and a small texture limit;
 * the single-target programs on WebGL 2 (direct reads or tfjs's samplers) and WebGL 1; webgpu.
 * Made in Node: the text builders need no GL context.
 */
import {computeGeometry, FilterGradientGeometry} from '../../src/geometry';
import {ArrangeChannelTexelsProgram, ArrangeTargetsProgram} from '../../kernels/webgl/finish/arrange_targets';
import {ArrangeTilesProgram} from '../../kernels/webgl/finish/arrange_tiles';
import {FilterGradientProgram} from '../../kernels/webgl/passes/single_target';
import {SumSplitsProgram} from '../../kernels/webgl/finish/sum_splits';
import type {MultiTargetProgram} from '../../kernels/webgl/multi_target';
import type {PackedTexture} from '../../kernels/webgl/glsl/packed_reads';
import {tunedWebglProfile, WebglDevice} from '../../kernels/webgl/plan/device';
import {oddBlockRows, WebglInputs} from '../../kernels/webgl/plan/inputs';
import {passProgram} from '../../kernels/webgl/passes/pass';
import {multiTargetPass, planWebgl} from '../../kernels/webgl/plan/planner';
import {sumTargetSplitsProgram} from '../../kernels/webgl/finish/sum_target_splits';
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

/** oddBlockRows of a packed texture tfjs made for the tensor's own shape. */
export function oddBlockRowsOfShape(shape: readonly number[]): number {
  return oddBlockRows(shape, shape);
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

/** A multi-target program's record: runMultiTarget sets its uniforms by name, so they are recorded in name order. */
function multiTargetRecord(program: MultiTargetProgram): ProgramRecord {
  const uniforms = [...program.uniforms].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return {name: program.name, text: program.source, inputNames: program.inputNames, uniforms};
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

/** A device as the planner sees it, with today's profile. */
function device(webglVersion: 1 | 2, multiTarget: boolean, maxDrawBuffers = 8, maxTextureSize = 8192): WebglDevice {
  return {webglVersion, multiTarget, maxDrawBuffers, maxTextureSize, profile: tunedWebglProfile()};
}

/** Inputs already on the GPU, packed; packed by an earlier op for their own shape (odd block rows where they have them) or not. */
function packedInputs(geometry: FilterGradientGeometry, packedByOp: boolean): WebglInputs {
  const input = (shape: readonly number[]) => ({onGpu: true, packed: true, oddBlockRows: packedByOp ? oddBlockRowsOfShape(shape) : 0});
  return {src: input(geometry.src.shape), diffDst: input(geometry.diffDst.shape)};
}

/** The multi-target programs of one kind: pass 1, the split sum, the arrangement, as planWebgl plans them. */
function multiTargetTexts(geometry: FilterGradientGeometry, kind: MultiTargetKind): Record<string, ProgramRecord> {
  const plan = planWebgl(geometry, device(2, true, kind.maxTargets, kind.maxTextureSize), packedInputs(geometry, kind.packedByOp));
  const prefix = `multiTarget/${kind.name}`;
  if (plan.path !== 'multiTarget') return {[`${prefix}/pass`]: {pass: null}};
  const elements = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);
  const textures = {
    src: viewTexture(elements(geometry.src.shape), plan.views.src.columns, plan.views.src.blockRows, kind.folded),
    diffDst: viewTexture(elements(geometry.diffDst.shape), plan.views.diffDst.columns, plan.views.diffDst.blockRows, kind.folded),
  };
  const records: Record<string, ProgramRecord> = {
    [`${prefix}/pass`]: {pass: plan.pass, splits: plan.targetSplits.splits, location: plan.location},
    [`${prefix}/pass1`]: multiTargetRecord(passProgram(multiTargetPass(plan.pass), geometry, plan.params, textures)),
  };
  if (plan.targetSplits.splits > 1) {
    records[`${prefix}/sumTargetSplits`] = multiTargetRecord(sumTargetSplitsProgram(plan.location.targetCount, plan.targetSplits));
  }
  const arrange = plan.arrangement === 'channelTexels' ? new ArrangeChannelTexelsProgram(geometry, plan.location) :
                                                         new ArrangeTargetsProgram(geometry, plan.location);
  records[`${prefix}/arrange`] = gpgpuRecord(arrange as unknown as GpgpuLike);
  return records;
}

/** The single-target programs on WebGL 2 with direct reads, with tfjs's samplers, and on WebGL 1. */
function singleTargetTexts(geometry: FilterGradientGeometry): Record<string, ProgramRecord> {
  const records: Record<string, ProgramRecord> = {};
  for (const [name, webglVersion, directReads] of [['webgl2/direct', 2, true], ['webgl2/samplers', 2, false],
                                                   ['webgl1', 1, false]] as const) {
    const plan = planWebgl(geometry, device(webglVersion, false), packedInputs(geometry, false));
    if (plan.path !== 'singleTarget') throw new Error(`a single-target plan expected, got ${plan.path}`);
    records['singleTarget/plan'] = {...plan.reduction};
    const webgl2 = webglVersion === 2;
    records[`singleTarget/${name}/pass1`] = gpgpuRecord(new FilterGradientProgram(geometry, plan.reduction, webgl2, directReads) as unknown as GpgpuLike);
    if (plan.finish !== null) {
      const finish = plan.finish === 'arrangeTiles' ? new ArrangeTilesProgram(geometry, plan.reduction, webgl2) :
                                                      new SumSplitsProgram(geometry.filterSize, plan.reduction.splits, webgl2);
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
    // What the text is made from is the text's business (it is recorded whole).
    delete fields.key;
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

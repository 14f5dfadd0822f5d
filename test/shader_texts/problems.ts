/**
 * The problems whose shader texts test/shader_texts records: every geometry of the case table
 * (test/cases.ts), of the golden files (test/golden/golden.json, training.json) and of the
 * workload file conv/shapes_tfjs_training at its batch (read from the workloads folder when it
 * is there; the digest file keeps each problem's shapes and attributes, so the spec needs only
 * the digest).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import {ConvolutionBackpropFilters, ConvTransposeBackpropFilters, OpName} from '../../src/names';
import {CASES} from '../cases';

/** One problem as a kernel call sees it: shapes and attributes. */
export interface TextProblem {
  readonly id: string;
  readonly op: OpName;
  readonly inputShape: readonly number[];
  readonly outputDeltaShape: readonly number[];
  readonly attrs: Readonly<Record<string, unknown>>;
}

function caseTableProblems(): TextProblem[] {
  return CASES.map((c): TextProblem => ({
    id: `cases/${c.id}`, op: c.op, inputShape: c.inputShape, outputDeltaShape: c.outputDeltaShape,
    attrs: {...c.attrs, filterShape: c.filterShapeInput ?? c.attrs.filterShape},
  }));
}

function goldenProblems(): TextProblem[] {
  const dir = path.join(__dirname, '..', 'golden');
  const golden = JSON.parse(fs.readFileSync(path.join(dir, 'golden.json'), 'utf8')) as
      {cases: Array<{id: string; op: OpName; attrs: Record<string, unknown>; input: {shape: number[]}; outputDelta: {shape: number[]}}>};
  const training = JSON.parse(fs.readFileSync(path.join(dir, 'training.json'), 'utf8')) as
      {cases: Array<{id: string; op: 'convolution' | 'convTranspose'; attrs: Record<string, unknown>; input: {shape: number[]};
                     dy: {shape: number[]}; dw: {shape: number[]}}>};
  return [
    ...golden.cases.map((c): TextProblem => ({id: `golden/${c.id}`, op: c.op, inputShape: c.input.shape, outputDeltaShape: c.outputDelta.shape,
                               attrs: c.attrs})),
    ...training.cases.map((c): TextProblem => ({
      id: `training/${c.id}`, op: c.op === 'convolution' ? ConvolutionBackpropFilters : ConvTransposeBackpropFilters,
      inputShape: c.input.shape, outputDeltaShape: c.dy.shape, attrs: trainingAttrs(c.attrs, c.dw.shape, c.input.shape, c.dy.shape),
    })),
  ];
}

/**
 * A training case's attributes as the filter-gradient ops take them: its forward op's
 * outputShape becomes the output padding that gives outputDelta that size (one 1-D case).
 */
function trainingAttrs(attrs: Record<string, unknown>, filterShape: number[], inputShape: number[],
                       outputDeltaShape: number[]): Record<string, unknown> {
  const {outputShape, ...rest} = attrs as {outputShape?: number[]; strides: number[]; padsBegin: number[]; padsEnd: number[];
                                            dilations: number[]; filterFormat: string; dataFormat: string};
  if (outputShape === undefined) return {...rest, filterShape};
  const spatial = (shape: number[]) => rest.dataFormat === 'NXC' ? shape.slice(1, -1) : shape.slice(2);
  const kernel = rest.filterFormat.startsWith('X') ? filterShape.slice(0, -2) : filterShape.slice(2);
  const outputPadding = spatial(inputShape).map((size, i) => spatial(outputDeltaShape)[i] -
      ((size - 1) * rest.strides[i] - rest.padsBegin[i] - rest.padsEnd[i] + rest.dilations[i] * (kernel[i] - 1) + 1));
  return {...rest, filterShape, outputPadding};
}

/** shapes_tfjs_training at its file's batch; [] when the workloads folder is not there. */
async function trainingLayerProblems(): Promise<TextProblem[]> {
  const {loadWorkloadFile, toOpArguments} = await import('../../bench/workloads');
  let problems;
  try {
    problems = loadWorkloadFile('conv/shapes_tfjs_training');
  } catch {
    return [];
  }
  return problems.map((problem): TextProblem => {
    const call = toOpArguments(problem);
    return {
      id: `shapes_tfjs_training/${problem.name}`,
      op: call.kind === 'conv' ? ConvolutionBackpropFilters : ConvTransposeBackpropFilters,
      inputShape: call.inputShape, outputDeltaShape: call.outputDeltaShape, attrs: {...call.attrs},
    };
  });
}

export async function textProblems(): Promise<TextProblem[]> {
  return [...caseTableProblems(), ...goldenProblems(), ...await trainingLayerProblems()];
}

import type {ConvolutionBackpropFiltersAttrs} from '../kernels/index';
import {seededValues} from './helpers/util';
import {referenceFilterGradient} from './reference';

/**
 * Strides and dilations far past the input (2^30, with pads to match): valid problems no fuzzer
 * draws (it keeps strides ≤ 5), run on every backend (test/far_strides.spec.ts,
 * test/browser/far_strides.spec.ts). Kernels take these sizes as loop bounds, frame lengths,
 * uniforms or shader text (webgl's depthwise loops bake the stride and dilation along a row), so each
 * must neither overflow an int nor allocate or generate something the size of the stride.
 * Dense, depthwise and grouped channels, each in both data formats.
 */
const FAR = 2 ** 30;

export interface FarProblem {
  name: string;
  /** Channels-last shapes; see farProblemData. */
  input: number[];
  outputDelta: number[];
  attrs: ConvolutionBackpropFiltersAttrs & {filterShape: number[]};
}

const problems = (channels: number, outputChannels: number, groups: number): FarProblem[] => [
  {name: 'strides [2^30] on 5 positions, kernel 3', input: [2, 5, channels], outputDelta: [2, 1, outputChannels],
    attrs: {strides: [FAR], groups, filterShape: [3]}},
  {name: 'dilations [2^30], pads 2^30 ahead, kernel 2', input: [1, 5, channels], outputDelta: [1, 5, outputChannels],
    attrs: {strides: [1], dilations: [FAR], padsBegin: [FAR], padsEnd: [0], groups, filterShape: [2]}},
  {name: '2-D, strides [1, 2^30], kernel 3×3, same pads', input: [1, 4, 6, channels], outputDelta: [1, 4, 1, outputChannels],
    attrs: {strides: [1, FAR], padsBegin: [1, 1], padsEnd: [1, 1], groups, filterShape: [3, 3]}},
  {name: '2-D, dilations [2^30, 2^30], pads 2^30 ahead, kernel 2×2', input: [1, 3, 4, channels], outputDelta: [1, 3, 4, outputChannels],
    attrs: {strides: [1, 1], dilations: [FAR, FAR], padsBegin: [FAR, FAR], padsEnd: [0, 0], groups, filterShape: [2, 2]}},
];

export const FAR_PROBLEMS: readonly FarProblem[] = [
  ...problems(4, 8, 1).map(p => ({...p, name: `dense 4→8, ${p.name}`})),
  ...problems(6, 6, 6).map(p => ({...p, name: `depthwise 6, ${p.name}`})),
  ...problems(4, 8, 2).map(p => ({...p, name: `groups 2, ${p.name}`})),
];

/**
 * A problem in a data format: shapes, attributes, seeded values and the float64 reference
 * gradient.
 */
export function farProblemData(problem: FarProblem, dataFormat: 'NXC' | 'NCX') {
  const channelsFirst = (shape: number[]) => [shape[0], shape[shape.length - 1], ...shape.slice(1, -1)];
  const [inputShape, outputDeltaShape] = dataFormat === 'NXC' ? [problem.input, problem.outputDelta] :
      [channelsFirst(problem.input), channelsFirst(problem.outputDelta)];
  const attrs = {...problem.attrs, dataFormat};
  const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1);
  const inputValues = seededValues(size(inputShape), 11);
  const outputDeltaValues = seededValues(size(outputDeltaShape), 12);
  const expected = referenceFilterGradient(false, {shape: inputShape, values: inputValues},
      {shape: outputDeltaShape, values: outputDeltaValues}, {...attrs, kernel: attrs.filterShape});
  return {inputShape, outputDeltaShape, attrs, inputValues, outputDeltaValues, expected};
}

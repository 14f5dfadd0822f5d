/**
 * Strides and dilations far past the input (2^30, with pads to match), on webgl: valid
 * problems no fuzzer draws (it keeps strides ≤ 5). Shaders take these as uniforms or bake them
 * into their text (wide taps bake the stride and dilation along a row, deciding how many src
 * texels a step spans), so each must neither overflow an int nor generate a shader the size of
 * the stride; every result must match the TypeScript loops. Dense, depthwise and grouped
 * problems, channels-last (the multi-target passes on WebGL 2) and channels-first.
 */
import * as tf from '@tensorflow/tfjs-core';

import {computeFilterGradient} from '../../kernels/cpu/filter_gradient';
import {computeGeometry, ConvolutionBackpropFiltersAttrs, convolutionBackpropFilters} from '../../kernels/index';
import {expectClose, resourceCounts, seededValues} from '../helpers/util';
import {packing, useWebglBackend} from '../helpers/webgl_flags';

const FAR = 2 ** 30;

interface Problem {
  name: string;
  input: number[];
  outputDelta: number[];
  attrs: ConvolutionBackpropFiltersAttrs;
}

const problems = (channels: number, outputChannels: number, groups: number): Problem[] => [
  {name: `strides [2^30] on 5 positions, kernel 3`, input: [2, 5, channels], outputDelta: [2, 1, outputChannels],
    attrs: {strides: [FAR], groups, filterShape: [3]}},
  {name: `dilations [2^30], pads 2^30 ahead, kernel 2`, input: [1, 5, channels], outputDelta: [1, 5, outputChannels],
    attrs: {strides: [1], dilations: [FAR], padsBegin: [FAR], padsEnd: [0], groups, filterShape: [2]}},
  {name: `2-D, strides [1, 2^30], kernel 3×3, same pads`, input: [1, 4, 6, channels], outputDelta: [1, 4, 1, outputChannels],
    attrs: {strides: [1, FAR], padsBegin: [1, 1], padsEnd: [1, 1], groups, filterShape: [3, 3]}},
  {name: `2-D, dilations [2^30, 2^30], pads 2^30 ahead, kernel 2×2`, input: [1, 3, 4, channels], outputDelta: [1, 3, 4, outputChannels],
    attrs: {strides: [1, 1], dilations: [FAR, FAR], padsBegin: [FAR, FAR], padsEnd: [0, 0], groups, filterShape: [2, 2]}},
];

const PROBLEMS = [
  ...problems(4, 8, 1).map(p => ({...p, name: `dense 4→8, ${p.name}`})),
  ...problems(6, 6, 6).map(p => ({...p, name: `depthwise 6, ${p.name}`})),
  ...problems(4, 8, 2).map(p => ({...p, name: `groups 2, ${p.name}`})),
];

const ENVIRONMENTS = [
  {name: 'webgl2 packed', flags: {WEBGL_VERSION: 2, ...packing(true)}},
  {name: 'webgl1 unpacked', flags: {WEBGL_VERSION: 1, ...packing(false)}},
];

const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1);

for (const environment of ENVIRONMENTS) {
  describe(`webgl, strides and dilations of 2^30, ${environment.name}:`, () => {
    useWebglBackend(`webgl-far-${environment.name.replace(/\W+/g, '-')}`, environment.flags);

    for (const problem of PROBLEMS) {
      for (const dataFormat of ['NXC', 'NCX'] as const) {
        it(`${problem.name}, ${dataFormat}`, () => {
          const channelsFirst = (shape: number[]) => [shape[0], shape[shape.length - 1], ...shape.slice(1, -1)];
          const [inputShape, outputDeltaShape] = dataFormat === 'NXC' ? [problem.input, problem.outputDelta] :
              [channelsFirst(problem.input), channelsFirst(problem.outputDelta)];
          const attrs = {...problem.attrs, dataFormat};
          const geometry = computeGeometry('ConvolutionBackpropFilters',
              {input: {shape: inputShape, dtype: 'float32'}, outputDelta: {shape: outputDeltaShape, dtype: 'float32'}}, attrs);
          const inputValues = seededValues(size(inputShape), 11);
          const outputDeltaValues = seededValues(size(outputDeltaShape), 12);
          const expected = computeFilterGradient(geometry, inputValues, outputDeltaValues);
          // On the GPU before counting textures.
          const place = (values: Float32Array, shape: number[]) => tf.tidy(() => tf.mul(tf.tensor(values, shape), 1));
          const input = place(inputValues, inputShape);
          const outputDelta = place(outputDeltaValues, outputDeltaShape);
          const before = resourceCounts();
          const result = convolutionBackpropFilters(input, outputDelta, attrs);
          expectClose(result.dataSync(), expected, problem.name, 1e-5, 1e-5);
          result.dispose();
          expect(resourceCounts()).toEqual(before);
          tf.dispose([input, outputDelta]);
        });
      }
    }
  });
}

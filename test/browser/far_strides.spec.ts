/**
 * test/far_strides_cases.ts on webgl: WebGL 2 packed (channels-last problems run the
 * multi-target passes) and WebGL 1 unpacked, against the float64 reference, with no texture or
 * tensor left behind.
 */
import * as tf from '@tensorflow/tfjs-core';

import {convolutionBackpropFilters} from '../../kernels/index';
import {FAR_PROBLEMS, inDataFormat} from '../far_strides_cases';
import {referenceFilterGradient} from '../reference';
import {expectClose, resourceCounts, seededValues} from '../helpers/util';
import {packing, useWebglBackend} from '../helpers/webgl_flags';

const ENVIRONMENTS = [
  {name: 'webgl2 packed', flags: {WEBGL_VERSION: 2, ...packing(true)}},
  {name: 'webgl1 unpacked', flags: {WEBGL_VERSION: 1, ...packing(false)}},
];

const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1);

for (const environment of ENVIRONMENTS) {
  describe(`webgl, strides and dilations of 2^30, ${environment.name}:`, () => {
    useWebglBackend(`webgl-far-${environment.name.replace(/\W+/g, '-')}`, environment.flags);

    for (const problem of FAR_PROBLEMS) {
      for (const dataFormat of ['NXC', 'NCX'] as const) {
        it(`${problem.name}, ${dataFormat}`, () => {
          const {inputShape, outputDeltaShape, attrs} = inDataFormat(problem, dataFormat);
          const inputValues = seededValues(size(inputShape), 11);
          const outputDeltaValues = seededValues(size(outputDeltaShape), 12);
          const expected = referenceFilterGradient(false, {shape: inputShape, values: inputValues},
              {shape: outputDeltaShape, values: outputDeltaValues}, {...attrs, kernel: attrs.filterShape});
          // On the GPU before counting textures.
          const place = (values: Float32Array, shape: number[]) => tf.tidy(() => tf.mul(tf.tensor(values, shape), 1));
          const input = place(inputValues, inputShape);
          const outputDelta = place(outputDeltaValues, outputDeltaShape);
          const before = resourceCounts();
          const result = convolutionBackpropFilters(input, outputDelta, attrs);
          expect(result.shape).toEqual(expected.shape);
          expectClose(result.dataSync(), expected.values, problem.name, 1e-5, 1e-5);
          result.dispose();
          expect(resourceCounts()).toEqual(before);
          tf.dispose([input, outputDelta]);
        });
      }
    }
  });
}

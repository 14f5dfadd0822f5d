/**
 * test/far_strides_cases.ts on webgl: WebGL 2 packed (channels-last problems run the
 * multi-target passes) and WebGL 1 unpacked, against the float64 reference, with no texture or
 * tensor left behind.
 */
import * as tf from '@tensorflow/tfjs-core';

import {convolutionBackpropFilters} from '../../kernels/index';
import {FAR_PROBLEMS, farProblemData} from '../far_strides_cases';
import {expectClose, resourceCounts} from '../helpers/util';
import {packing, useWebglBackend} from '../helpers/webgl_flags';

const ENVIRONMENTS = [
  {name: 'webgl2 packed', flags: {WEBGL_VERSION: 2, ...packing(true)}},
  {name: 'webgl1 unpacked', flags: {WEBGL_VERSION: 1, ...packing(false)}},
];

for (const environment of ENVIRONMENTS) {
  describe(`webgl, strides and dilations of 2^30, ${environment.name}:`, () => {
    useWebglBackend(`webgl-far-${environment.name.replace(/\W+/g, '-')}`, environment.flags);

    for (const problem of FAR_PROBLEMS) {
      for (const dataFormat of ['NXC', 'NCX'] as const) {
        it(`${problem.name}, ${dataFormat}`, () => {
          const {inputShape, outputDeltaShape, attrs, inputValues, outputDeltaValues, expected} = farProblemData(problem, dataFormat);
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

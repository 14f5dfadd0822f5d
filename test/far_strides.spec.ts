import * as tf from '@tensorflow/tfjs-core';

import {convolutionBackpropFilters} from '../kernels/index';
import {NODE_BACKENDS} from './backends';
import {FAR_PROBLEMS, farProblemData} from './far_strides_cases';
import {expectClose} from './helpers/util';

/** test/far_strides_cases.ts on every Node backend, against the float64 reference. */

for (const backend of NODE_BACKENDS) {
  describe(`strides and dilations of 2^30 on ${backend.name}:`, () => {
    beforeAll(async () => {
      expect(await tf.setBackend(backend.name)).toBe(true);
    });
    afterAll(async () => {
      await tf.setBackend('cpu');  // specs that pick no backend run on cpu
    });

    for (const problem of FAR_PROBLEMS) {
      for (const dataFormat of ['NXC', 'NCX'] as const) {
        it(`${problem.name}, ${dataFormat}`, () => {
          const {inputShape, outputDeltaShape, attrs, inputValues, outputDeltaValues, expected} = farProblemData(problem, dataFormat);
          const before = tf.memory().numTensors;
          const result = tf.tidy(() => convolutionBackpropFilters(tf.tensor(inputValues, inputShape),
              tf.tensor(outputDeltaValues, outputDeltaShape), attrs));
          expect(result.shape).toEqual(expected.shape);
          const {atol, rtol} = backend.tolerance ?? {atol: 1e-5, rtol: 1e-5};
          expectClose(result.dataSync(), expected.values, problem.name, atol, rtol);
          result.dispose();
          expect(tf.memory().numTensors).toBe(before);
        });
      }
    }
  });
}

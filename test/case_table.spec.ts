import * as tf from '@tensorflow/tfjs-core';

import {NODE_BACKENDS} from './backends';
import {CASES} from './cases';
import {runCaseEverywhere} from './helpers/run_case';
import {seededValues} from './helpers/util';
import {ReferenceAttrs, referenceFilterGradient} from './reference';

for (const backend of NODE_BACKENDS) {
  describe(`case table on ${backend.name}:`, () => {
    beforeAll(async () => {
      expect(await tf.setBackend(backend.name)).toBe(true);
    });
    // Specs that pick no backend run on cpu, so put it back.
    afterAll(async () => {
      await tf.setBackend('cpu');
    });

    for (const c of CASES) {
      const skipReason = backend.skips?.[c.id];
      if (skipReason !== undefined) {
        it(c.id, () => pending(`skipped on ${backend.name}: ${skipReason}`));
        continue;
      }
      it(c.id, () => {
        const input = {shape: c.inputShape, values: seededValues(size(c.inputShape), c.seed)};
        const outputDelta = {shape: c.outputDeltaShape, values: seededValues(size(c.outputDeltaShape), c.seed + 1000)};
        const expected = referenceFilterGradient(
            c.op === 'ConvTransposeBackpropFilters', input, outputDelta, {...(c.attrs as Omit<ReferenceAttrs, 'kernel'>), kernel: c.kernel});
        runCaseEverywhere({...c, input, outputDelta, expected}, backend.tolerance);
      });
    }
  });
}

function size(shape: number[]) {
  return shape.reduce((a, b) => a * b, 1);
}

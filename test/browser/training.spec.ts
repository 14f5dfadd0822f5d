/**
 * Training through `convolution` / `convTranspose` on webgl: the PyTorch golden table of
 * test/golden/training.json (y, dx, dw, and the second order of both filter-gradient kernels),
 * through tfjs's native conv ops where they fit and through the composite forward, plus the
 * finite-difference check; tensors and textures must be back where they were after each case.
 *
 * Every case runs with the forward as it is chosen ('auto'). The composite forward and the
 * finite differences, whose webgl-specific part is tfjs's webgl ops under our kernels (Node runs
 * both on every case: test/training.spec.ts), run the first case of each op and rank: the file
 * opens with one per op and rank with groups, dilations, strides, asymmetric pads, NCX and OIX.
 */
import '@tensorflow/tfjs-backend-webgl';
import '@tensorflow/tfjs-core/dist/register_all_gradients';  // gradients of tfjs's own ops (sum, mul) in the losses

import * as tf from '@tensorflow/tfjs-core';

import {setForwardImplementation} from '../../src/training/raw_convolution';
import golden from '../golden/training.json';
import {checkTrainingCase, runTrainingCase, TrainingDocument} from '../helpers/training_cases';
import {resourceCounts} from '../helpers/util';

const doc = golden as unknown as TrainingDocument;
const ONE_PER_OP_AND_RANK = doc.cases.filter(
    (c, i) => doc.cases.findIndex(other => other.op === c.op && other.input.shape.length === c.input.shape.length) === i);

function withoutResourceLeaks(f: () => void) {
  const before = resourceCounts();
  f();
  expect(resourceCounts()).toEqual(before);
}

for (const implementation of ['auto', 'composite'] as const) {
  describe(`training on webgl (${implementation} forward), PyTorch ${doc.torch} golden:`, () => {
    let previous: ReturnType<typeof setForwardImplementation>;
    beforeAll(async () => {
      expect(await tf.setBackend('webgl')).toBe(true);
      previous = setForwardImplementation(implementation);
    });
    afterAll(() => {
      setForwardImplementation(previous);
    });
    for (const c of implementation === 'auto' ? doc.cases : ONE_PER_OP_AND_RANK) {
      it(`${c.id}: y, first and second order`, () => withoutResourceLeaks(() => runTrainingCase(c, 1e-4, 1e-4)));
    }
  });
}

describe('training on webgl, finite differences (checkGradients):', () => {
  beforeAll(async () => {
    expect(await tf.setBackend('webgl')).toBe(true);
  });
  for (const c of ONE_PER_OP_AND_RANK) {
    it(`${c.id}: first order and second order`, () => withoutResourceLeaks(() => checkTrainingCase(c, 8)));
  }
});

/**
 * tf.layers models trained through the drop-in gradients on webgl (this package's webgl filter
 * kernels, tfjs's data kernels or the composite transposed convolution): the PyTorch golden
 * table of test/golden/layers.json, as test/layers.spec.ts runs it on cpu.
 */
import '@tensorflow/tfjs-backend-webgl';
import '@tensorflow/tfjs-core/dist/register_all_gradients';  // gradients of tfjs's own ops in the losses

import * as tf from '@tensorflow/tfjs-core';

import {installDropInGradients, uninstallDropInGradients} from '../../kernels/index';
import golden from '../golden/layers.json';
import {checkLayerFit, checkLayerGradients, LayerDocument} from '../helpers/layer_cases';

const doc = golden as unknown as LayerDocument;

describe(`tf.layers with the drop-in gradients on webgl, PyTorch ${doc.torch} golden:`, () => {
  beforeAll(async () => {
    expect(await tf.setBackend('webgl')).toBe(true);
    installDropInGradients();
  });
  afterAll(() => uninstallDropInGradients());

  for (const c of doc.cases) {
    // Sums of ~100 float32 products in another order than cpu's, through shaders.
    it(`${c.name}: loss and weight gradients`, () => checkLayerGradients(c, 1e-4, 1e-4));
    it(`${c.name}: model.fit`, () => checkLayerFit(c, 1e-5, 1e-4));
  }
});

import * as fs from 'node:fs';
import * as path from 'node:path';

import {withDropInGradientsOnCpu} from './helpers/dropin';
import {checkLayerFit, checkLayerGradients, LayerDocument} from './helpers/layer_cases';

/**
 * tf.layers models whose convolutions tfjs cannot train (dilationRate > 1: tfjs#7906; a
 * conv3dTranspose: tfjs#6323) trained through the drop-in gradients, on cpu: the layer's output,
 * loss and weight gradients against PyTorch autograd (test/golden/generate_layers.py), then
 * model.fit: its first SGD step moves every weight by −lr·gradient, and the loss falls.
 * test/browser/layers.spec.ts runs the same cases on webgl.
 */
const golden = JSON.parse(fs.readFileSync(path.join(__dirname, 'golden', 'layers.json'), 'utf8')) as LayerDocument;

/** float32 forward and backward passes over sums of up to ~100 products of values in [-1, 1]. */
const ATOL = 1e-5;
const RTOL = 1e-4;

describe(`tf.layers with the drop-in gradients (cpu, against PyTorch ${golden.torch})`, () => {
  withDropInGradientsOnCpu();

  for (const c of golden.cases) {
    describe(c.name, () => {
      it('has the loss and weight gradients PyTorch computes', () => checkLayerGradients(c, ATOL, RTOL));
      it('trains with model.fit: the first SGD step is −lr·gradient, and the loss falls', () => checkLayerFit(c, 1e-6, 1e-5));
    });
  }
});

import '@tensorflow/tfjs-core/dist/register_all_gradients';  // tfjs's own gradients: the models' other ops

import * as tf from '@tensorflow/tfjs-core';
import * as fs from 'node:fs';
import * as path from 'node:path';

import {ConvolutionBackpropFilters, ConvolutionBackwardWeights, ConvTransposeBackpropFilters, ConvTransposeBackwardWeights, installDropInGradients, uninstallDropInGradients} from '../kernels/index';
import {CASES} from './cases';
import {registerForeignCpuBackend} from './helpers/composite_backends';
import {checkLayerFit, checkLayerGradients, LayerDocument} from './helpers/layer_cases';
import {runCaseEverywhere} from './helpers/run_case';
import {checkStackedFit, STACKED_MODELS} from './helpers/stacked_models';
import {runTrainingCase, TrainingDocument} from './helpers/training_cases';
import {expectClose, seededValues} from './helpers/util';
import {ReferenceAttrs, referenceFilterGradient} from './reference';

/**
 * Importing the package never takes a capability away (issue 16). On a backend this package
 * has no kernel for (a user's own, a future tfjs backend: here tfjs's cpu kernels registered
 * under another name), the op functions, the differentiable convolutions and the drop-in
 * gradients run the composite of tfjs ops; where the backend also lacks tfjs's data-gradient
 * kernels the drop-in would reuse, dx comes from this package's transposed convolution. Both
 * decided per call, so a backend registered after the import (as these are) is covered. On wasm,
 * which has no DepthwiseConv2dNativeBackpropInput, depthwise models train with the drop-in.
 */
const layers = JSON.parse(fs.readFileSync(path.join(__dirname, 'golden', 'layers.json'), 'utf8')) as LayerDocument;
const training = JSON.parse(fs.readFileSync(path.join(__dirname, 'golden', 'training.json'), 'utf8')) as TrainingDocument;

const OUR_KERNELS = [ConvolutionBackpropFilters, ConvolutionBackwardWeights, ConvTransposeBackpropFilters, ConvTransposeBackwardWeights];
/** tfjs's data-gradient kernels the drop-in gradients reuse where tfjs's own gradient handles the case. */
const TFJS_DATA_GRADIENT_KERNELS = ['Conv2DBackpropInput', 'Conv3DBackpropInputV2', 'DepthwiseConv2dNativeBackpropInput'];

/** Composite sums (float32 matMuls) against the float64 reference and PyTorch. */
const ATOL = 1e-4;
const RTOL = 1e-4;

const FOREIGN_BACKENDS = [
  {name: 'cpu-foreign', without: [] as string[], what: 'tfjs\'s cpu kernels, none of this package\'s'},
  {
    name: 'cpu-foreign-bare', without: TFJS_DATA_GRADIENT_KERNELS,
    what: `tfjs's cpu kernels but ${TFJS_DATA_GRADIENT_KERNELS.join(', ')}, none of this package's`,
  },
];

function size(shape: number[]) {
  return shape.reduce((a, b) => a * b, 1);
}

for (const backend of FOREIGN_BACKENDS) {
  describe(`on a backend registered after the import with ${backend.what} (${backend.name}):`, () => {
    beforeAll(async () => {
      registerForeignCpuBackend(backend.name, backend.without);
      expect(await tf.setBackend(backend.name)).toBe(true);
    });
    afterAll(async () => {
      await tf.setBackend('cpu');  // specs that pick no backend run on cpu
    });

    it('has no kernel of this package (nor the tfjs kernels left out)', () => {
      for (const name of OUR_KERNELS) expect(tf.getKernel(name, backend.name)).withContext(name).toBeUndefined();
      for (const name of backend.without) expect(tf.getKernel(name, backend.name)).withContext(name).toBeUndefined();
    });

    describe('the op functions match the reference on the case table:', () => {
      for (const c of CASES) {
        it(c.id, () => {
          const input = {shape: c.inputShape, values: seededValues(size(c.inputShape), c.seed)};
          const outputDelta = {shape: c.outputDeltaShape, values: seededValues(size(c.outputDeltaShape), c.seed + 1000)};
          const expected = referenceFilterGradient(
              c.op === ConvTransposeBackpropFilters, input, outputDelta,
              {...(c.attrs as Omit<ReferenceAttrs, 'kernel'>), kernel: c.kernel});
          runCaseEverywhere({...c, input, outputDelta, expected}, {atol: ATOL, rtol: RTOL, opsOnly: true});
          for (const name of OUR_KERNELS) expect(tf.getKernel(name, backend.name)).withContext(name).toBeUndefined();
        });
      }
    });

    describe(`convolution and convTranspose train (PyTorch ${training.torch} golden):`, () => {
      for (const c of training.cases) {
        it(`${c.id}: y, first and second order`, () => runTrainingCase(c, ATOL, RTOL));
      }
    });

    describe(`tf.layers models train with model.fit through the drop-in gradients (PyTorch ${layers.torch} golden):`, () => {
      beforeAll(() => installDropInGradients());
      afterAll(() => uninstallDropInGradients());
      for (const c of layers.cases) {
        if (c.config.layer === 'conv3dTranspose' && backend.without.includes('Conv3DBackpropInputV2')) {
          const reason = `skipped on ${backend.name}: the layer's forward op is the Conv3DBackpropInputV2 kernel it lacks`;
          it(`${c.name}: loss and weight gradients`, () => pending(reason));
          it(`${c.name}: model.fit`, () => pending(reason));
          continue;
        }
        it(`${c.name}: loss and weight gradients`, () => checkLayerGradients(c, ATOL, RTOL));
        it(`${c.name}: model.fit`, () => checkLayerFit(c, 1e-5, 1e-4));
      }
      // Stacked layers: fit needs dx of every layer but the first (the golden models have one).
      for (const m of STACKED_MODELS) {
        it(`${m.name}: model.fit as on cpu`, () => checkStackedFit(m, backend.name, ATOL, RTOL));
      }
    });
  });
}

/**
 * tfjs-backend-wasm has no DepthwiseConv2dNativeBackpropInput: the drop-in's depthwise dx comes
 * from this package's transposed convolution there. The golden depthwiseConv2d layer is
 * undilated (tfjs-layers ignores its dilationRate); separableConv2d's depthwise part is dilated.
 */
describe('on wasm, depthwise tf.layers models train with model.fit through the drop-in gradients:', () => {
  let leakCheck: boolean;
  beforeAll(async () => {
    expect(await tf.setBackend('wasm')).toBe(true);
    expect(tf.getKernel('DepthwiseConv2dNativeBackpropInput', 'wasm')).toBeUndefined();
    // customGrad's save() (in convTranspose) clones through wasm's copying Identity kernel, which
    // tfjs's IS_TEST check counts as a leak; each spec checks the tensor count itself.
    leakCheck = tf.env().getBool('IS_TEST');
    tf.env().set('IS_TEST', false);
    installDropInGradients();
  });
  afterAll(async () => {
    uninstallDropInGradients();
    tf.env().set('IS_TEST', leakCheck);
    await tf.setBackend('cpu');
  });

  for (const c of layers.cases.filter(k => /^(depthwiseConv2d|separableConv2d)/.test(k.name))) {
    it(`${c.name}: loss and weight gradients`, () => checkLayerGradients(c, ATOL, RTOL));
    it(`${c.name}: model.fit`, () => checkLayerFit(c, 1e-5, 1e-4));
  }
  // A depthwise layer after another layer: fit needs its dx.
  for (const m of STACKED_MODELS.filter(k => /depthwise|separable/.test(k.name))) {
    it(`${m.name}: model.fit as on cpu`, () => checkStackedFit(m, 'wasm', ATOL, RTOL));
  }

  it('a depthwise convolution with dilations 2 and its drop-in gradients equal cpu\'s', async () => {
    const grads = () => tf.tidy(() => {
      const x = tf.tensor(seededValues(2 * 9 * 9 * 3, 5), [2, 9, 9, 3]);
      const w = tf.tensor(seededValues(3 * 3 * 3 * 2, 6), [3, 3, 3, 2]);
      const f = (a: tf.Tensor, b: tf.Tensor) =>
          tf.sum(tf.square(tf.depthwiseConv2d(a as tf.Tensor4D, b as tf.Tensor4D, 1, 'same', 'NHWC', 2)));
      return tf.grads(f)([x, w]).map(g => Array.from(g.dataSync()));
    });
    const onWasm = grads();
    await tf.setBackend('cpu');
    const onCpu = grads();
    await tf.setBackend('wasm');
    expectClose(onWasm[0], onCpu[0], 'dx', ATOL, RTOL);
    expectClose(onWasm[1], onCpu[1], 'dW', ATOL, RTOL);
  });
});

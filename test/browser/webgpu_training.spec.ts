/**
 * Training on webgpu with this package's webgpu kernels: a tf.layers model whose dilated
 * conv2d and depthwiseConv2d and MobileNet's stride-2 depthwiseConv2d take their filter
 * gradients from the drop-in gradients trains with model.fit, and its weights after two epochs
 * match the same training on cpu; the differentiable `convolution` / `convTranspose` give the
 * same filter gradients as on cpu.
 */
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-core/dist/register_all_gradients';  // gradients of tfjs's own ops

import * as tf from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';

import {computeGeometry, convolution, convTranspose, installDropInGradients, uninstallDropInGradients} from '../../kernels/index';
import {planWebgpuReduction} from '../../kernels/webgpu/reduction_plan';
import {expectClose, seededValues} from '../helpers/util';
import {useWebgpuBackend} from '../helpers/webgpu_backend';

/** Counts the calls of this package's webgpu kernels while `f` runs. */
async function countingWebgpuKernelCalls<T>(f: () => Promise<T>): Promise<{value: T; calls: number}> {
  const names = ['ConvolutionBackpropFilters', 'ConvTransposeBackpropFilters'];
  const originals = names.map(name => tf.getKernel(name, 'webgpu')!);
  let calls = 0;
  for (const kernel of originals) {
    tf.unregisterKernel(kernel.kernelName, 'webgpu');
    tf.registerKernel({...kernel, kernelFunc: args => (calls++, kernel.kernelFunc(args))});
  }
  try {
    return {value: await f(), calls};
  } finally {
    for (const kernel of originals) {
      tf.unregisterKernel(kernel.kernelName, 'webgpu');
      tf.registerKernel(kernel);
    }
  }
}

async function trainedWeights(backend: string): Promise<{weights: Float32Array[]; losses: number[]}> {
  expect(await tf.setBackend(backend)).toBe(true);
  const model = tfl.sequential({
    layers: [
      tfl.layers.conv2d({inputShape: [10, 10, 3], filters: 4, kernelSize: 3, dilationRate: 2, padding: 'same', activation: 'relu'}),
      tfl.layers.depthwiseConv2d({kernelSize: 3, depthMultiplier: 2, padding: 'same', dilationRate: 2}),
      // MobileNet's stride-2 depthwise layer: 10 × 10 into 5 × 5, in units of src rows on webgpu.
      tfl.layers.depthwiseConv2d({kernelSize: 3, strides: 2, padding: 'same'}),
      tfl.layers.conv2d({filters: 3, kernelSize: 3, strides: 2}),
      tfl.layers.flatten(),
      tfl.layers.dense({units: 2}),
    ],
  });
  const initial = model.getWeights().map((w, i) => tf.tensor(seededValues(w.size, 100 + i).map(v => v * 0.3), w.shape));
  model.setWeights(initial);
  tf.dispose(initial);
  const optimizer = tf.train.sgd(0.05);
  model.compile({optimizer, loss: 'meanSquaredError'});
  const x = tf.tensor(seededValues(8 * 10 * 10 * 3, 1), [8, 10, 10, 3]);
  const y = tf.tensor(seededValues(8 * 2, 2), [8, 2]);
  const history = await model.fit(x, y, {epochs: 2, batchSize: 4, shuffle: false, verbose: 0});
  const weights = await Promise.all(model.getWeights().map(async w => (await w.data()) as Float32Array));
  tf.dispose([x, y]);
  model.dispose();
  optimizer.dispose();
  return {weights, losses: history.history.loss as number[]};
}

describe('training on webgpu:', () => {
  useWebgpuBackend();
  beforeAll(() => installDropInGradients());
  afterAll(() => uninstallDropInGradients());

  it('a tf.layers model (dilated conv2d, dilated depthwiseConv2d, stride-2 depthwiseConv2d) trains with model.fit as on cpu, through our webgpu kernels', async () => {
    const stride2Depthwise = computeGeometry('ConvolutionBackpropFilters', {input: {shape: [4, 10, 10, 8], dtype: 'float32'},
        outputDelta: {shape: [4, 5, 5, 8], dtype: 'float32'}}, {strides: [2, 2], autoPad: 'same_upper', groups: 8, filterShape: [3, 3]});
    expect(planWebgpuReduction(stride2Depthwise).srcRowUnits).withContext('the stride-2 layer in units of src rows').toBe(true);
    const reference = await trainedWeights('cpu');
    const before = tf.memory().numTensors;
    const {value: trained, calls} = await countingWebgpuKernelCalls(() => trainedWeights('webgpu'));
    expect(tf.getBackend()).toBe('webgpu');
    expect(calls).withContext('calls of our webgpu kernels during fit').toBeGreaterThan(0);
    expect(tf.memory().numTensors).withContext('tensors left behind by fit').toBe(before);
    trained.weights.forEach((w, i) => expectClose(w, reference.weights[i], `weight ${i} after fit`, 1e-4, 1e-3));
    expectClose(trained.losses, reference.losses, 'losses', 1e-5, 1e-4);
  });

  it('differentiable convolution and convTranspose give cpu\'s filter gradients', async () => {
    const x = seededValues(2 * 7 * 7 * 4, 3);
    const w = seededValues(3 * 3 * 2 * 6, 4);
    const gradients = async (backend: string) => {
      expect(await tf.setBackend(backend)).toBe(true);
      return tf.tidy(() => {
        const input = tf.tensor(x, [2, 7, 7, 4]);
        const attrs = {strides: [2, 1], padsBegin: [1, 0], padsEnd: [0, 1], dilations: [1, 2], groups: 2};
        const conv = tf.grad((filter: tf.Tensor) => tf.sum(tf.square(convolution(input, filter, attrs as never))));
        const transposed = tf.grad((filter: tf.Tensor) => tf.sum(tf.square(convTranspose(input, filter, {...attrs, groups: 1} as never))));
        return [conv(tf.tensor(w, [3, 3, 2, 6])), transposed(tf.tensor(seededValues(3 * 3 * 4 * 5, 5), [3, 3, 4, 5]))];
      });
    };
    const reference = await Promise.all((await gradients('cpu')).map(async t => {
      const values = await t.data();
      t.dispose();
      return values;
    }));
    const {value: results, calls} = await countingWebgpuKernelCalls(async () => {
      const ts = await gradients('webgpu');
      const values = await Promise.all(ts.map(t => t.data()));
      tf.dispose(ts);
      return values;
    });
    expect(calls).toBeGreaterThan(0);
    results.forEach((values, i) => expectClose(values, reference[i], `gradient ${i}`, 1e-4, 1e-4));
  });
});

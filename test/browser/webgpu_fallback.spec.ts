/**
 * Importing the drop-in gradients never takes a capability away, on WebGPU too (issue 16):
 * tf.layers convolution models train with model.fit on tfjs-backend-webgpu (SwiftShader's
 * Vulkan in headless Chromium) where this package's filter gradient runs tfjs-webgpu's own
 * filter-gradient kernels where they compute the case and the composite of tfjs ops elsewhere,
 * on the device. 'webgpu-fallback' is a second webgpu backend with tfjs's webgpu kernels
 * and none of this package's, so the fallback stays tested whatever this package registers for
 * 'webgpu' itself. If WebGPU does not start (no adapter), every spec here fails.
 */
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-webgl';
import '@tensorflow/tfjs-backend-webgpu';
import '@tensorflow/tfjs-core/dist/register_all_gradients';  // gradients of tfjs's own ops in the models

import * as tf from '@tensorflow/tfjs-core';

import {ConvolutionBackpropFilters, convolutionBackpropFilters, ConvolutionBackwardWeights, ConvTransposeBackpropFilters, convTransposeBackpropFilters, ConvTransposeBackwardWeights, installDropInGradients, uninstallDropInGradients} from '../../kernels/index';
import golden from '../golden/layers.json';
import {checkLayerFit, LayerDocument} from '../helpers/layer_cases';
import {checkStackedFit, STACKED_MODELS} from '../helpers/stacked_models';
import {expectClose, seededTensor} from '../helpers/util';
import {referenceFilterGradient} from '../reference';

const doc = golden as unknown as LayerDocument;
const FALLBACK = 'webgpu-fallback';
const OUR_KERNELS = [ConvolutionBackpropFilters, ConvolutionBackwardWeights, ConvTransposeBackpropFilters, ConvTransposeBackwardWeights];
/** float32 sums on the GPU in another order than PyTorch's and cpu's. */
const ATOL = 1e-4;
const RTOL = 1e-4;

/** A backend under another name, made by the webgpu backend's own factory, with tfjs's webgpu kernels only. */
function registerFallbackBackend() {
  const factory = tf.findBackendFactory('webgpu');
  expect(factory).withContext('tfjs-backend-webgpu registers its backend factory').toBeDefined();
  tf.registerBackend(FALLBACK, factory as () => Promise<tf.KernelBackend>);
  for (const kernel of tf.getKernelsForBackend('webgpu')) {
    if (!OUR_KERNELS.includes(kernel.kernelName)) tf.registerKernel({...kernel, backendName: FALLBACK});
  }
}

function removeFallbackBackend() {
  for (const kernel of tf.getKernelsForBackend(FALLBACK)) tf.unregisterKernel(kernel.kernelName, FALLBACK);
  tf.removeBackend(FALLBACK);
}

describe('webgpu (SwiftShader) without this package\'s kernels, with the drop-in gradients:', () => {
  beforeAll(async () => {
    expect(typeof navigator !== 'undefined' && 'gpu' in navigator)
        .withContext('navigator.gpu: Chromium needs --enable-unsafe-webgpu --use-webgpu-adapter=swiftshader').toBe(true);
    registerFallbackBackend();
    expect(await tf.setBackend(FALLBACK)).withContext('WebGPU started (an adapter and a device)').toBe(true);
    installDropInGradients();
  });
  afterAll(async () => {
    uninstallDropInGradients();
    await tf.setBackend('webgl');
    removeFallbackBackend();
  });

  it('runs on WebGPU, with no kernel of this package', () => {
    expect(tf.getBackend()).toBe(FALLBACK);
    expect((tf.backend() as {device?: unknown}).device).withContext('a GPUDevice').toBeDefined();
    for (const name of OUR_KERNELS) expect(tf.getKernel(name, FALLBACK)).withContext(name).toBeUndefined();
  });

  it('computes the filter gradient on the device: no read-back, the reference\'s values', async () => {
    const x = seededTensor([2, 7, 6, 4], 5);
    const dy = seededTensor([2, 4, 3, 6], 6);
    const attrs = {strides: [2, 2], padsBegin: [1, 1], padsEnd: [1, 0], dilations: [1, 2], groups: 2, filterShape: [3, 2]};
    const backend = tf.backend();
    const reads = [spyOn(backend, 'readSync').and.callThrough(), spyOn(backend, 'read').and.callThrough()];
    const before = tf.memory().numTensors;
    const dW = convolutionBackpropFilters(x, dy, attrs);
    expect(reads.map(spy => spy.calls.count())).withContext('readSync, read calls').toEqual([0, 0]);
    const expected = referenceFilterGradient(
        false, {shape: x.shape, values: await x.data()}, {shape: dy.shape, values: await dy.data()}, {...attrs, kernel: [3, 2]});
    expect(dW.shape).toEqual(expected.shape);
    expectClose(await dW.data(), expected.values, 'dW', ATOL, RTOL);
    dW.dispose();
    expect(tf.memory().numTensors).toBe(before);
    tf.dispose([x, dy]);
  });

  it('takes tfjs-webgpu\'s own filter-gradient kernels where they compute the case (NCX, transposed roles): no read-back', async () => {
    const problems = [
      {op: convolutionBackpropFilters, transposed: false, kernel: 'Conv2DBackpropFilter', input: [2, 3, 7, 6], outputDelta: [2, 4, 3, 2],
       attrs: {strides: [2, 2], dataFormat: 'NCX', filterFormat: 'OIX', filterShape: [3, 3]}},
      {op: convTransposeBackpropFilters, transposed: true, kernel: 'DepthwiseConv2dNativeBackpropFilter', input: [2, 3, 3, 2], outputDelta: [2, 6, 6, 2],
       attrs: {strides: [2, 2], groups: 2, filterFormat: 'XOI', filterShape: [2, 2]}},
    ];
    const backend = tf.backend();
    const reads = [spyOn(backend, 'readSync').and.callThrough(), spyOn(backend, 'read').and.callThrough()];
    for (const p of problems) {
      const native = spyOn(tf.getKernel(p.kernel, FALLBACK)!, 'kernelFunc').and.callThrough();
      const x = seededTensor(p.input, 7);
      const dy = seededTensor(p.outputDelta, 8);
      reads.forEach(spy => spy.calls.reset());
      const dW = p.op(x, dy, p.attrs as never);
      expect(native.calls.count()).withContext(`${p.kernel} calls`).toBe(1);
      expect(reads.map(spy => spy.calls.count())).withContext('readSync, read calls').toEqual([0, 0]);
      const expected = referenceFilterGradient(
          p.transposed, {shape: x.shape, values: await x.data()}, {shape: dy.shape, values: await dy.data()},
          {...p.attrs, kernel: p.attrs.filterShape} as never);
      expect(dW.shape).toEqual(expected.shape);
      expectClose(await dW.data(), expected.values, `${p.kernel}: dW`, ATOL, RTOL);
      tf.dispose([x, dy, dW]);
    }
  });

  // Only model.fit, read asynchronously: tfjs-webgpu 4.22's synchronous read (dataSync) of a
  // thousand floats returns zeros on SwiftShader and destroys the device.
  for (const c of doc.cases.filter(k => k.config.layer === 'conv2d')) {
    it(`${c.name}: model.fit`, () => checkLayerFit(c, ATOL, RTOL));
  }
  for (const m of STACKED_MODELS.filter(k => k.inputShape.length === 4 && !/separable/.test(k.name))) {
    it(`${m.name}: model.fit as on cpu`, () => checkStackedFit(m, FALLBACK, ATOL, RTOL));
  }
});

/**
 * The bug as a user meets it: importing the drop-in made a tf.layers conv2d model throw
 * "Kernel 'ConvolutionBackpropFilters' not registered for backend 'webgpu'" in fit. Whatever
 * runs there now (this package's webgpu kernel, or the composite), fit trains as on cpu.
 */
describe('webgpu (SwiftShader), the backend tfjs-backend-webgpu registers, with the drop-in gradients:', () => {
  beforeAll(async () => {
    expect(await tf.setBackend('webgpu')).withContext('WebGPU started (an adapter and a device)').toBe(true);
    installDropInGradients();
  });
  afterAll(async () => {
    uninstallDropInGradients();
    await tf.setBackend('webgl');
  });

  const model = STACKED_MODELS.find(m => m.name.startsWith('conv2d dilationRate 2'))!;
  it(`${model.name}: model.fit as on cpu`, () => checkStackedFit(model, 'webgpu', ATOL, RTOL));
});

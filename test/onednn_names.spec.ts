import '@tensorflow/tfjs-core/dist/register_all_gradients';  // gradients of tfjs's own ops (sum, mul) in the loss
import * as tf from '@tensorflow/tfjs-core';

import {ConvolutionBackpropFilters, ConvolutionBackwardWeights, ConvTransposeBackpropFilters, convTransposeBackpropFilters, ConvTransposeBackwardWeights, fromSpecAttrs} from '../kernels/index';
import {NODE_BACKENDS} from './backends';
import {referenceFilterGradient} from './reference';
import {expectClose, resourceCounts, selectBackend} from './helpers/util';

/**
 * Defaults by kernel name (DESIGN.md §1): the spec names take the spec's defaults (filterFormat
 * XIO); oneDNN v3's ConvTransposeBackwardWeights takes oneDNN v3's (weights_format XOI, its op
 * schema's default), ConvolutionBackwardWeights keeps XIO. The problem: C = 2 input channels,
 * O = 3 outputDelta channels, a 3×3 kernel, so XIO (K…, C, O/G) is [3,3,2,3] and XOI
 * (K…, O/G, C) is [3,3,3,2].
 */
describe('defaults by kernel name', () => {
  const seeded = (shape: number[], seed: number) =>
      Float32Array.from({length: shape.reduce((a, b) => a * b, 1)}, (_, i) => Math.sin(seed * 1000 + i * 1.7));
  // Transposed: input [1,4,4,2] (C = 2) maps to outputDelta [1,6,6,3] (O = 3) with a 3×3 kernel, stride 1.
  const transposed = {inputShape: [1, 4, 4, 2], outputDeltaShape: [1, 6, 6, 3]};
  // Plain: input [1,6,6,2] (C = 2) to outputDelta [1,4,4,3] (O = 3), 3×3, stride 1.
  const plain = {inputShape: [1, 6, 6, 2], outputDeltaShape: [1, 4, 4, 3]};
  const attrs = {strides: [1, 1], filterShape: [3, 3]};

  function expected(op: string, shapes: typeof plain, filterFormat: 'XIO' | 'XOI') {
    return referenceFilterGradient(
        op === ConvTransposeBackpropFilters, {shape: shapes.inputShape, values: seeded(shapes.inputShape, 1)},
        {shape: shapes.outputDeltaShape, values: seeded(shapes.outputDeltaShape, 2)},
        {strides: [1, 1], kernel: [3, 3], filterFormat});
  }

  for (const backend of NODE_BACKENDS) {
    describe(`on ${backend.name}`, () => {
      beforeAll(async () => {
        await selectBackend(backend.name);
      });
      afterAll(async () => {
        await tf.setBackend('cpu');
      });

      const table = [
        {name: ConvolutionBackpropFilters, op: ConvolutionBackpropFilters, shapes: plain, format: 'XIO', shape: [3, 3, 2, 3]},
        {name: ConvolutionBackwardWeights, op: ConvolutionBackpropFilters, shapes: plain, format: 'XIO', shape: [3, 3, 2, 3]},
        {name: ConvTransposeBackpropFilters, op: ConvTransposeBackpropFilters, shapes: transposed, format: 'XIO', shape: [3, 3, 2, 3]},
        {name: ConvTransposeBackwardWeights, op: ConvTransposeBackpropFilters, shapes: transposed, format: 'XOI', shape: [3, 3, 3, 2]},
      ] as const;
      for (const {name, op, shapes, format, shape} of table) {
        it(`${name} without filterFormat gives ${format} ${JSON.stringify(shape)}`, () => {
          const input = tf.tensor(seeded(shapes.inputShape, 1), shapes.inputShape);
          const outputDelta = tf.tensor(seeded(shapes.outputDeltaShape, 2), shapes.outputDeltaShape);
          const before = resourceCounts();
          const dW = tf.engine().runKernel(name, {input, outputDelta}, attrs) as tf.Tensor;
          const want = expected(op, shapes, format);
          expect(dW.shape).toEqual([...shape]);
          expect(want.shape).toEqual([...shape]);
          expectClose(dW.dataSync(), want.values, `${name} on ${backend.name}`, 1e-4, 1e-4);
          dW.dispose();
          expect(resourceCounts()).toEqual(before);
          tf.dispose([input, outputDelta]);
        });
      }

      it('ConvTransposeBackwardWeights keeps a filterFormat that is given', () => {
        const input = tf.tensor(seeded(transposed.inputShape, 1), transposed.inputShape);
        const outputDelta = tf.tensor(seeded(transposed.outputDeltaShape, 2), transposed.outputDeltaShape);
        for (const filterFormat of ['XIO', 'IOX'] as const) {
          const dW = tf.engine().runKernel(ConvTransposeBackwardWeights, {input, outputDelta}, {...attrs, filterFormat}) as tf.Tensor;
          expect(dW.shape).withContext(filterFormat).toEqual(filterFormat === 'XIO' ? [3, 3, 2, 3] : [2, 3, 3, 3]);
          dW.dispose();
        }
        tf.dispose([input, outputDelta]);
      });
    });
  }

  it('the gradient of ConvTransposeBackwardWeights (second order) reads the XOI default', () => {
    const input = tf.tensor(seeded(transposed.inputShape, 1), transposed.inputShape);
    const outputDelta = tf.tensor(seeded(transposed.outputDeltaShape, 2), transposed.outputDeltaShape);
    const weights = tf.tensor(seeded([3, 3, 3, 2], 3), [3, 3, 3, 2]);
    const loss = (a: tf.Tensor, b: tf.Tensor) =>
        tf.sum(tf.mul(tf.engine().runKernel(ConvTransposeBackwardWeights, {input: a, outputDelta: b}, attrs) as tf.Tensor, weights));
    const viaAlias = tf.grads(loss)([input, outputDelta]);
    // The same through the spec name with the format spelt out.
    const viaSpecName = tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(
        tf.engine().runKernel(ConvTransposeBackpropFilters, {input: a, outputDelta: b}, {...attrs, filterFormat: 'XOI'}) as tf.Tensor,
        weights)))([input, outputDelta]);
    for (let i = 0; i < 2; i++) expectClose(viaAlias[i].dataSync(), viaSpecName[i].dataSync(), `input ${i}`, 1e-5, 1e-5);
    tf.dispose([input, outputDelta, weights, ...viaAlias, ...viaSpecName]);
  });

  describe('fromSpecAttrs', () => {
    it('fills in the defaults of the kernel name it is given', () => {
      const spec = {strides: [1, 1], weights_shape: [3, 3]};
      expect(fromSpecAttrs(spec)).toEqual({strides: [1, 1], filterShape: [3, 3]});
      expect(fromSpecAttrs(spec, ConvTransposeBackwardWeights)).toEqual({strides: [1, 1], filterShape: [3, 3], filterFormat: 'XOI'});
      expect(fromSpecAttrs(spec, ConvTransposeBackpropFilters)).toEqual({strides: [1, 1], filterShape: [3, 3]});
      expect(fromSpecAttrs(spec, ConvolutionBackwardWeights)).toEqual({strides: [1, 1], filterShape: [3, 3]});
      expect(fromSpecAttrs({...spec, weights_format: 'IOX'}, ConvTransposeBackwardWeights).filterFormat).toBe('IOX');
    });

    it('gives an op function oneDNN v3\'s layout when told the name', () => {
      const input = tf.tensor(seeded(transposed.inputShape, 1), transposed.inputShape);
      const outputDelta = tf.tensor(seeded(transposed.outputDeltaShape, 2), transposed.outputDeltaShape);
      const dW = convTransposeBackpropFilters(input, outputDelta, fromSpecAttrs({strides: [1, 1], weights_shape: [3, 3]}, ConvTransposeBackwardWeights));
      expect(dW.shape).toEqual([3, 3, 3, 2]);
      expectClose(dW.dataSync(), expected(ConvTransposeBackpropFilters, transposed, 'XOI').values, 'op function', 1e-5, 1e-5);
      tf.dispose([input, outputDelta, dW]);
    });

    it('rejects an unknown kernel name', () => {
      expect(() => fromSpecAttrs({strides: [1]}, 'Conv2DBackpropFilter'))
          .toThrowError(`fromSpecAttrs: kernel name 'Conv2DBackpropFilter' is not one of 'ConvolutionBackpropFilters', 'ConvolutionBackwardWeights', 'ConvTransposeBackpropFilters', 'ConvTransposeBackwardWeights'`);
    });
  });
});

/**
 * Defaults by kernel name on webgl (test/onednn_names.spec.ts runs the Node backends): an
 * omitted filterFormat is XIO under the spec names and ConvolutionBackwardWeights, and XOI under
 * oneDNN v3's ConvTransposeBackwardWeights. C = 2, O = 3, a 3×3 kernel: [3,3,2,3] and [3,3,3,2].
 */
import * as tf from '@tensorflow/tfjs-core';

import {ConvolutionBackpropFilters, ConvolutionBackwardWeights, ConvTransposeBackpropFilters, ConvTransposeBackwardWeights} from '../../kernels/index';
import {referenceFilterGradient} from '../reference';
import {expectClose, resourceCounts} from '../helpers/util';
import {packing, useWebglBackend} from '../helpers/webgl_flags';

describe('webgl, defaults by kernel name:', () => {
  useWebglBackend('webgl-onednn-names', {WEBGL_VERSION: 2, ...packing(true)});

  const seeded = (shape: number[], seed: number) =>
      Float32Array.from({length: shape.reduce((a, b) => a * b, 1)}, (_, i) => Math.sin(seed * 1000 + i * 1.7));
  const plain = {inputShape: [1, 6, 6, 2], outputDeltaShape: [1, 4, 4, 3]};
  const transposed = {inputShape: [1, 4, 4, 2], outputDeltaShape: [1, 6, 6, 3]};
  const table = [
    {name: ConvolutionBackpropFilters, shapes: plain, format: 'XIO', shape: [3, 3, 2, 3]},
    {name: ConvolutionBackwardWeights, shapes: plain, format: 'XIO', shape: [3, 3, 2, 3]},
    {name: ConvTransposeBackpropFilters, shapes: transposed, format: 'XIO', shape: [3, 3, 2, 3]},
    {name: ConvTransposeBackwardWeights, shapes: transposed, format: 'XOI', shape: [3, 3, 3, 2]},
  ] as const;
  for (const {name, shapes, format, shape} of table) {
    it(`${name} without filterFormat gives ${format} ${JSON.stringify(shape)}`, () => {
      const inputValues = seeded(shapes.inputShape, 1);
      const outputDeltaValues = seeded(shapes.outputDeltaShape, 2);
      // On the GPU before counting textures.
      const place = (values: Float32Array, shape: readonly number[]) => tf.tidy(() => tf.mul(tf.tensor(values, [...shape]), 1));
      const input = place(inputValues, shapes.inputShape);
      const outputDelta = place(outputDeltaValues, shapes.outputDeltaShape);
      const before = resourceCounts();
      const dW = tf.engine().runKernel(name, {input, outputDelta}, {strides: [1, 1], filterShape: [3, 3]}) as tf.Tensor;
      const want = referenceFilterGradient(
          shapes === transposed, {shape: shapes.inputShape, values: inputValues},
          {shape: shapes.outputDeltaShape, values: outputDeltaValues}, {strides: [1, 1], kernel: [3, 3], filterFormat: format});
      expect(dW.shape).toEqual([...shape]);
      expectClose(dW.dataSync(), want.values, name, 1e-5, 1e-5);
      dW.dispose();
      expect(resourceCounts()).toEqual(before);
      tf.dispose([input, outputDelta]);
    });
  }
});

import * as tf from '@tensorflow/tfjs-core';

import {convolutionBackpropFilters, convTransposeBackpropFilters} from '../kernels/index';
import {ForwardProblem, forwardConvolution, forwardTransposedConvolution} from './forward';
import {expectClose, seededTensor, seededValues, withoutLeaks} from './helpers/util';

/**
 * dW is the derivative of L(W) = Σ forward(x, W)·dy. L is linear in W, so central differences
 * are exact up to rounding: each filter element of our result must match them.
 */
function centralDifferences(loss: (w: Float64Array) => number, w: Float64Array, epsilon: number): Float64Array {
  const gradient = new Float64Array(w.length);
  for (let i = 0; i < w.length; i++) {
    const saved = w[i];
    w[i] = saved + epsilon;
    const up = loss(w);
    w[i] = saved - epsilon;
    const down = loss(w);
    w[i] = saved;
    gradient[i] = (up - down) / (2 * epsilon);
  }
  return gradient;
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>) {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}

interface FdCase extends ForwardProblem {
  id: string;
  transposed: boolean;
  padsEnd: number[];
  outputPadding?: number[];
}

const FD_CASES: FdCase[] = [
  {
    id: 'conv 1-D groups 2, dilation 2, stride 2, asymmetric pads', transposed: false, batch: 2, inputChannels: 4,
    outputChannels: 6, groups: 2, inputSpatial: [11], outputSpatial: [5], kernel: [3], strides: [2], dilations: [2],
    padsBegin: [1], padsEnd: [2],
  },
  {
    id: 'conv 2-D groups 2, dilations, strides, asymmetric pads', transposed: false, batch: 2, inputChannels: 4,
    outputChannels: 4, groups: 2, inputSpatial: [8, 7], outputSpatial: [5, 6], kernel: [3, 2], strides: [2, 1],
    dilations: [1, 2], padsBegin: [1, 0], padsEnd: [2, 1],
  },
  {
    id: 'conv 3-D depthwise, stride 2', transposed: false, batch: 1, inputChannels: 3, outputChannels: 3, groups: 3,
    inputSpatial: [5, 4, 5], outputSpatial: [2, 2, 3], kernel: [2, 2, 2], strides: [2, 2, 2], dilations: [1, 1, 1],
    padsBegin: [0, 1, 1], padsEnd: [0, 0, 1],
  },
  {
    id: 'transposed 1-D groups 2, dilation 2, output padding', transposed: true, batch: 2, inputChannels: 4,
    outputChannels: 2, groups: 2, inputSpatial: [5], outputSpatial: [12], kernel: [3], strides: [2], dilations: [2],
    padsBegin: [1], padsEnd: [1], outputPadding: [1],
  },
  {
    id: 'transposed 2-D groups 2, strides, asymmetric pads', transposed: true, batch: 2, inputChannels: 4,
    outputChannels: 6, groups: 2, inputSpatial: [3, 4], outputSpatial: [7, 5], kernel: [3, 2], strides: [2, 1],
    dilations: [1, 2], padsBegin: [1, 0], padsEnd: [0, 1], outputPadding: [1, 0],
  },
  {
    id: 'transposed 3-D channel multiplier', transposed: true, batch: 1, inputChannels: 2, outputChannels: 4, groups: 2,
    inputSpatial: [2, 3, 2], outputSpatial: [4, 5, 4], kernel: [2, 3, 2], strides: [2, 1, 2], dilations: [1, 1, 2],
    padsBegin: [0, 0, 1], padsEnd: [0, 0, 0], outputPadding: [0, 0, 0],
  },
];

describe('finite differences of a forward convolution', () => {
  for (const c of FD_CASES) {
    it(c.id, () => {
      const inputShape = [c.batch, c.inputChannels, ...c.inputSpatial];
      const outputShape = [c.batch, c.outputChannels, ...c.outputSpatial];
      const x = seededValues(inputShape.reduce((a, b) => a * b, 1), 11);
      const dy = seededValues(outputShape.reduce((a, b) => a * b, 1), 12);
      const filterShape = c.transposed ? [c.outputChannels / c.groups, c.inputChannels, ...c.kernel] :
                                         [c.outputChannels, c.inputChannels / c.groups, ...c.kernel];
      const w = Float64Array.from(seededValues(filterShape.reduce((a, b) => a * b, 1), 13));
      const forward = c.transposed ? forwardTransposedConvolution : forwardConvolution;
      const expected = centralDifferences(weights => dot(forward(c, x, weights), dy), w, 0.5);

      const attrs = {
        strides: c.strides, dilations: c.dilations, padsBegin: c.padsBegin, padsEnd: c.padsEnd, groups: c.groups,
        dataFormat: 'NCX' as const, filterFormat: 'OIX' as const, filterShape: c.kernel,
        ...(c.transposed ? {outputPadding: c.outputPadding} : {}),
      };
      const input = tf.tensor(x, inputShape);
      const outputDelta = tf.tensor(dy, outputShape);
      const result = withoutLeaks(
          () => c.transposed ? convTransposeBackpropFilters(input, outputDelta, attrs) :
                               convolutionBackpropFilters(input, outputDelta, attrs),
          1);
      expect(result.shape).toEqual(filterShape);
      expectClose(result.dataSync(), expected, c.id, 1e-5, 1e-5);
      tf.dispose([input, outputDelta, result]);
    });
  }

  it("matches finite differences of tfjs's own conv2d (NHWC, HWIO, dilation 2, explicit asymmetric pads)", () => {
    const x = seededTensor([2, 7, 6, 3], 21);
    const dy = seededTensor([2, 6, 5, 4], 22);
    const w = seededTensor([3, 2, 3, 4], 23);
    // out: h = 7 + 1 + 2 − 5 + 1 = 6, w = 6 + 0 + 1 − 3 + 1 = 5
    const pad: [[number, number], [number, number], [number, number], [number, number]] =
        [[0, 0], [1, 2], [0, 1], [0, 0]];
    const loss = (weights: Float64Array) => tf.tidy(() => {
      const y = tf.conv2d(x as tf.Tensor4D, tf.tensor(Float32Array.from(weights), w.shape as [number, number, number, number]) as tf.Tensor4D, 1, pad, 'NHWC', [2, 2]);
      return tf.sum(tf.mul(y, dy)).dataSync()[0];
    });
    const expected = centralDifferences(loss, Float64Array.from(w.dataSync()), 1);
    const result = withoutLeaks(
        () => convolutionBackpropFilters(x, dy, {
          strides: [1, 1], dilations: [2, 2], padsBegin: [1, 0], padsEnd: [2, 1], filterShape: [3, 2],
        }),
        1);
    expect(result.shape).toEqual([3, 2, 3, 4]);
    // The forward runs in float32: differences carry its rounding, hence the looser bound.
    expectClose(result.dataSync(), expected, 'tf.conv2d finite differences', 2e-3, 2e-3);
    tf.dispose([x, dy, w, result]);
  });
});

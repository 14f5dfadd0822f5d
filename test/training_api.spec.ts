import '@tensorflow/tfjs-core/dist/register_all_gradients';  // gradients of tfjs's own ops in the losses

import * as tf from '@tensorflow/tfjs-core';
import {execFileSync} from 'node:child_process';
import * as path from 'node:path';

import {convolution, convTranspose} from '../kernels/index';
import {seededTensor} from './helpers/util';

const root = path.resolve(__dirname, '..');

describe('training API of the built package', () => {
  it('exports convolution, convTranspose and checkGradients through require(), with gradients registered', () => {
    // @tensorflow/tfjs-core's CommonJS build has no gradients of its own ops registered: the
    // loss below is the op's output itself (its sum is taken by tf.grads' default dy of ones).
    const out = execFileSync(process.execPath, ['-e', `
      const tf = require('@tensorflow/tfjs-core'); require('@tensorflow/tfjs-backend-cpu');
      const p = require('tfjs-conv-backprop-filters');
      const x = tf.tensor([1, 2, 3, 4], [1, 4, 1]);
      const w = tf.tensor([1, -1], [2, 1, 1]);
      const [dx, dw] = tf.grads((a, b) => p.convolution(a, b, {strides: [1]}))([x, w]);
      const [tx, tw] = tf.grads((a, b) => p.convTranspose(a, b, {strides: [2]}))([x, w]);
      console.log(JSON.stringify({
        exports: ['convolution', 'convTranspose', 'checkGradients'].map(name => typeof p[name]),
        gradients: ['ConvolutionBackpropFilters', 'ConvTransposeBackwardWeights'].map(name => tf.getGradient(name) !== undefined),
        dx: Array.from(dx.dataSync()), dw: Array.from(dw.dataSync()),
        tx: Array.from(tx.dataSync()), tw: Array.from(tw.dataSync()),
      }));`], {cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']});
    expect(JSON.parse(out)).toEqual({
      exports: ['function', 'function', 'function'],
      gradients: [true, true],
      // y[p] = x[p] - x[p+1], p = 0..2: dx = [1, 0, 0, -1], dw = [x0+x1+x2, x1+x2+x3]
      dx: [1, 0, 0, -1], dw: [6, 9],
      // every x[i] reaches y through both taps: dx = w0 + w1 = 0; dw = [Σx, Σx]
      tx: [0, 0, 0, 0], tw: [10, 10],
    });
  });
});

describe('training with a tfjs optimizer', () => {
  for (const op of ['convolution', 'convTranspose'] as const) {
    it(`fits a ${op} with groups 2, dilation 2, stride 2, asymmetric pads and NCX to a target (loss falls 100x)`, () => {
      const attrs = {
        strides: [2, 2], dilations: [2, 2], padsBegin: [1, 0], padsEnd: [0, 1], groups: 2, dataFormat: 'NCX' as const,
        filterFormat: 'OIX' as const,
      };
      const forward = (x: tf.Tensor, w: tf.Tensor) =>
          op === 'convolution' ? convolution(x, w, attrs) : convTranspose(x, w, {...attrs, outputPadding: [1, 1]});
      const x = seededTensor(op === 'convolution' ? [4, 4, 9, 8] : [4, 4, 4, 5], 31);
      const filterShape = op === 'convolution' ? [4, 2, 3, 2] : [2, 4, 3, 2];
      const target = tf.tidy(() => forward(x, seededTensor(filterShape, 32)));
      const w = tf.variable(tf.zeros(filterShape));
      const optimizer = tf.train.adam(0.05);
      const loss = () => tf.mean(tf.square(tf.sub(forward(x, w), target))) as tf.Scalar;
      const before = tf.memory().numTensors;
      const first = tf.tidy(() => loss().dataSync()[0]);
      for (let step = 0; step < 150; step++) optimizer.minimize(loss, true)?.dispose();
      const last = tf.tidy(() => loss().dataSync()[0]);
      expect(last).toBeLessThan(first / 100);
      // adam's two moment variables for w stay; nothing else
      expect(tf.memory().numTensors).toBe(before + 2);
      optimizer.dispose();
      tf.dispose([x, target, w]);
    });
  }
});

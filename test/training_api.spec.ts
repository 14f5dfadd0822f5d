import '@tensorflow/tfjs-core/dist/register_all_gradients';  // gradients of tfjs's own ops in the losses

import * as tf from '@tensorflow/tfjs-core';
import {execFileSync} from 'node:child_process';
import * as path from 'node:path';

import {checkGradients, convolution, convTranspose} from '../kernels/index';
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

describe('the gradient of tfjs\'s Conv3DBackpropInputV2 (registered by this package)', () => {
  for (const pad of ['same', 'valid'] as const) {
    it(`makes tf.conv3dTranspose differentiable (pad '${pad}'), matching finite differences and convTranspose`, () => {
      const x = seededTensor([2, 2, 3, 2, 4], 41);   // NDHWC, 4 channels
      const w = seededTensor([2, 3, 2, 3, 4], 42);   // (K…, out 3, in 4) as tf.conv3dTranspose takes it
      const outputShape: [number, number, number, number, number] =
          pad === 'same' ? [2, 4, 6, 4, 3] : [2, 4, 7, 4, 3];
      const f = (a: tf.Tensor, b: tf.Tensor) =>
          tf.conv3dTranspose(a as tf.Tensor5D, b as tf.Tensor5D, outputShape, 2, pad);
      const report = checkGradients(f, [x, w], {maxElementsPerInput: 24});
      expect(report.maxError).toBeLessThan(1e-3);
      // The same through convTranspose, whose XOI filter (K…, O/G, C) is tfjs's layout.
      const g = (a: tf.Tensor, b: tf.Tensor) => convTranspose(
          a, b, {strides: [2, 2, 2], autoPad: pad === 'same' ? 'same_upper' : 'valid', filterFormat: 'XOI',
                 outputShape: outputShape.slice(1, 4)});
      const dy = seededTensor(outputShape, 43);
      const ours = tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(g(a, b), dy)))([x, w]);
      const theirs = tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(f(a, b), dy)))([x, w]);
      for (let i = 0; i < 2; i++) {
        const [a, b] = [ours[i].dataSync(), theirs[i].dataSync()];
        let worst = 0;
        for (let j = 0; j < a.length; j++) worst = Math.max(worst, Math.abs(a[j] - b[j]));
        expect(worst).toBeLessThan(1e-4);
      }
      tf.dispose([x, w, dy, ...ours, ...theirs]);
    });
  }
});

describe('second order through tf.engine().runKernel', () => {
  for (const [name, transposed] of [
         ['ConvolutionBackwardWeights', false], ['ConvTransposeBackpropFilters', true],
       ] as const) {
    it(`${name} with the filterShape input tensor: tf.grads passes the gradient check`, () => {
      // 1-D NXC, groups 2, stride 2, dilation 2, asymmetric pads; XIO filter.
      const attrs = {strides: [2], dilations: [2], padsBegin: [1], padsEnd: [0], groups: 2};
      const input = seededTensor(transposed ? [2, 4, 4] : [2, 11, 4], 51);
      const outputDelta = seededTensor(transposed ? [2, 10, 6] : [2, 4, 6], 52);
      const filterShape = tf.tensor1d(transposed ? [3, 4, 3] : [3, 2, 6], 'int32');
      const before = tf.memory().numTensors;
      const f = (a: tf.Tensor, b: tf.Tensor) =>
          tf.engine().runKernel(name, {input: a, outputDelta: b, filterShape}, attrs as never) as tf.Tensor;
      const report = checkGradients(f, [input, outputDelta], {maxElementsPerInput: 24});
      expect(report.maxError).toBeLessThan(1e-3);
      expect(tf.memory().numTensors).toBe(before);
      tf.dispose([input, outputDelta, filterShape]);
    });
  }
});

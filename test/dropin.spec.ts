import '@tensorflow/tfjs-core/dist/register_all_gradients';  // tfjs's own gradients: what the drop-in replaces

import * as tf from '@tensorflow/tfjs-core';
import {execFileSync} from 'node:child_process';
import * as path from 'node:path';

import {checkGradients, DROP_IN_GRADIENT_KERNELS, dropInGradientsInstalled, installDropInGradients, uninstallDropInGradients} from '../kernels/index';
import {withDropInGradientsOnCpu} from './helpers/dropin';
import {seededTensor} from './helpers/util';

type Grads = (x: tf.Tensor, w: tf.Tensor) => tf.Tensor;

/** A convolution tfjs can differentiate itself (all dilations 1): the drop-in must give tfjs's results. */
interface SupportedCase {
  name: string;
  x: number[];
  w: number[];
  f: Grads;
}

const t4 = (t: tf.Tensor) => t as tf.Tensor4D;
const t5 = (t: tf.Tensor) => t as tf.Tensor5D;

const SUPPORTED: SupportedCase[] = [
  {name: 'conv2d NHWC, same, stride 2', x: [2, 9, 8, 3], w: [3, 3, 3, 4], f: (x, w) => tf.conv2d(t4(x), t4(w), 2, 'same')},
  {name: 'conv2d NCHW, valid, stride [1,2]', x: [2, 3, 9, 8], w: [3, 2, 3, 4], f: (x, w) => tf.conv2d(t4(x), t4(w), [1, 2], 'valid', 'NCHW')},
  {
    name: 'conv2d, explicit pads', x: [1, 7, 6, 2], w: [2, 3, 2, 3],
    f: (x, w) => tf.conv2d(t4(x), t4(w), 1, [[0, 0], [1, 0], [2, 1], [0, 0]]),
  },
  {name: 'conv1d, stride 2, same', x: [2, 11, 3], w: [3, 3, 4], f: (x, w) => tf.conv1d(x as tf.Tensor3D, w as tf.Tensor3D, 2, 'same')},
  {name: 'conv3d, same, stride 2', x: [1, 5, 6, 5, 2], w: [3, 3, 2, 2, 3], f: (x, w) => tf.conv3d(t5(x), t5(w), 2, 'same')},
  {name: 'depthwiseConv2d, multiplier 2, stride 2, valid', x: [2, 9, 9, 3], w: [3, 3, 3, 2], f: (x, w) => tf.depthwiseConv2d(t4(x), t4(w), 2, 'valid')},
  {
    name: 'conv2dTranspose (Conv2DBackpropInput), stride 2, same', x: [2, 4, 5, 4], w: [3, 3, 3, 4],
    f: (x, w) => tf.conv2dTranspose(t4(x), t4(w), [2, 8, 10, 3], 2, 'same'),
  },
  {
    name: 'fused conv2d, bias, linear', x: [2, 7, 7, 3], w: [3, 3, 3, 4],
    f: (x, w) => tf.fused.conv2d({x: t4(x), filter: t4(w), strides: 1, pad: 'same', bias: tf.div(tf.range(0, 4), 4)}),
  },
  {
    name: 'fused depthwiseConv2d, bias, linear', x: [2, 7, 7, 3], w: [3, 3, 3, 2],
    f: (x, w) => tf.fused.depthwiseConv2d({x: t4(x), filter: t4(w), strides: 1, pad: 'valid', bias: tf.div(tf.range(0, 6), 6)}),
  },
];

/** dL/dx and dL/dw of L = Σ f(x, w)·r for fixed weights r. */
function gradients(c: SupportedCase): Float32Array[] {
  return tf.tidy(() => {
    const x = seededTensor(c.x, 1);
    const w = seededTensor(c.w, 2);
    const outputShape = tf.tidy(() => c.f(x, w).shape);
    const r = seededTensor(outputShape, 3);
    return tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(c.f(a, b), r)))([x, w]).map(g => g.dataSync() as Float32Array);
  });
}

function maxAbsDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

describe('drop-in gradients for tfjs\'s convolutions', () => {
  withDropInGradientsOnCpu();

  describe('where tfjs\'s own gradient handles the case (cpu)', () => {
    for (const c of SUPPORTED) {
      it(`${c.name}: the same dx as tfjs's (its own kernel), dW as tfjs's within 4 float32 ulps of its largest element`, () => {
        const ours = gradients(c);
        uninstallDropInGradients();
        let theirs: Float32Array[];
        try {
          theirs = gradients(c);
        } finally {
          installDropInGradients();
        }
        expect(Array.from(ours[0])).withContext('dx').toEqual(Array.from(theirs[0]));
        // ConvolutionBackpropFilters and tfjs's filter kernel sum in different orders: the float32
        // results may differ in their last bits.
        const scale = Math.max(...Array.from(theirs[1], Math.abs));
        expect(maxAbsDifference(ours[1], theirs[1])).withContext('dW').toBeLessThanOrEqual(scale * 2 ** -21);
      });
    }
  });

  describe('where tfjs throws: finite differences (cpu)', () => {
    const cases: Array<{name: string; x: number[]; w: number[]; f: Grads}> = [
      {name: 'conv2d, dilation [2,3], same', x: [2, 9, 10, 2], w: [3, 2, 2, 3], f: (x, w) => tf.conv2d(t4(x), t4(w), 1, 'same', 'NHWC', [2, 3])},
      {name: 'conv2d NCHW, dilation 2, valid', x: [1, 2, 9, 9], w: [3, 3, 2, 3], f: (x, w) => tf.conv2d(t4(x), t4(w), 1, 'valid', 'NCHW', 2)},
      {name: 'conv1d, dilation 3, valid', x: [2, 13, 2], w: [3, 2, 3], f: (x, w) => tf.conv1d(x as tf.Tensor3D, w as tf.Tensor3D, 1, 'valid', 'NWC', 3)},
      {name: 'conv3d, dilation 2, same', x: [1, 5, 6, 6, 2], w: [2, 3, 2, 2, 2], f: (x, w) => tf.conv3d(t5(x), t5(w), 1, 'same', 'NDHWC', 2)},
      {name: 'depthwiseConv2d, dilation 2, multiplier 2', x: [1, 8, 9, 2], w: [3, 3, 2, 2], f: (x, w) => tf.depthwiseConv2d(t4(x), t4(w), 1, 'same', 'NHWC', 2)},
      {
        name: 'separableConv2d, dilation 2', x: [1, 8, 8, 2], w: [3, 3, 2, 2],
        f: (x, w) => tf.separableConv2d(t4(x), t4(w), tf.div(tf.ones([1, 1, 4, 3]), 3) as tf.Tensor4D, 1, 'valid', 2),
      },
      {
        name: 'fused conv2d, dilation 2, bias, linear', x: [2, 8, 8, 2], w: [3, 3, 2, 3],
        f: (x, w) => tf.fused.conv2d({x: t4(x), filter: t4(w), strides: 1, pad: 'same', dilations: 2, bias: tf.ones([3])}),
      },
      {
        // tfjs's own gradient drops dimRoundingMode, and with it the fifth output row: wrong dx.
        name: 'conv2d, numeric pad 1 with rounding ceil, stride 2', x: [1, 8, 8, 2], w: [3, 3, 2, 2],
        f: (x, w) => tf.conv2d(t4(x), t4(w), 2, 1, 'NHWC', 1, 'ceil'),
      },
      {
        name: 'conv3dTranspose (Conv3DBackpropInputV2), stride 2', x: [1, 3, 3, 2, 3], w: [3, 3, 3, 2, 3],
        f: (x, w) => tf.conv3dTranspose(t5(x), t5(w), [1, 7, 7, 5, 2], 2, 'valid'),
      },
    ];
    for (const c of cases) {
      it(`${c.name}: dx and dW match finite differences, nothing leaks`, () => {
        const x = seededTensor(c.x, 4);
        const w = seededTensor(c.w, 5);
        const before = tf.memory().numTensors;
        const report = checkGradients(c.f, [x, w], {maxElementsPerInput: 24});
        expect(report.maxError).toBeLessThan(1e-3);
        expect(tf.memory().numTensors).withContext('tensors left behind').toBe(before);
        tf.dispose([x, w]);
      });
    }

    it('second order: the gradient of a dilated conv2d\'s filter gradient (gradient penalty) matches finite differences', () => {
      const x = seededTensor([1, 7, 7, 2], 6);
      const w = seededTensor([3, 3, 2, 2], 7);
      const penalty = (wIn: tf.Tensor) => {
        const dW = tf.grad((v: tf.Tensor) => tf.sum(tf.square(tf.conv2d(t4(x), t4(v), 1, 'same', 'NHWC', 2))))(wIn);
        return tf.sum(tf.square(dW));
      };
      expect(checkGradients(penalty, [w], {maxElementsPerInput: 18}).maxError).toBeLessThan(1e-3);
      tf.dispose([x, w]);
    });
  });

  describe('on wasm (tensor clones are copies there)', () => {
    // tfjs's IS_TEST leak check counts the tensors customGrad's save() keeps as a leak on wasm,
    // whose Identity kernel copies (as test/training.spec.ts explains); off for this describe.
    let isTest: boolean;
    beforeAll(async () => {
      isTest = tf.env().getBool('IS_TEST');
      tf.env().set('IS_TEST', false);
      await tf.setBackend('wasm');
    });
    afterAll(async () => {
      tf.env().set('IS_TEST', isTest);
      await tf.setBackend('cpu');
    });

    it('fused conv2d with dilation 2 and a bias matches finite differences', () => {
      const x = seededTensor([1, 7, 7, 2], 8);
      const w = seededTensor([3, 3, 2, 3], 9);
      const f = (a: tf.Tensor, b: tf.Tensor) =>
          tf.fused.conv2d({x: t4(a), filter: t4(b), strides: 1, pad: 'same', dilations: 2, bias: tf.ones([3])});
      expect(checkGradients(f, [x, w], {maxElementsPerInput: 18}).maxError).toBeLessThan(1e-3);
      tf.dispose([x, w]);
    });
  });

  describe('registration', () => {
    const dilated = () => tf.tidy(() => {
      const x = seededTensor([1, 7, 7, 1], 1);
      return tf.grad((w: tf.Tensor) => tf.sum(tf.conv2d(t4(x), t4(w), 1, 'valid', 'NHWC', 2)))(seededTensor([3, 3, 1, 1], 2)).shape;
    });

    it('without it tfjs rejects dilated gradients (tfjs#7906); with it they work', () => {
      uninstallDropInGradients();
      try {
        expect(dropInGradientsInstalled()).toBe(false);
        expect(dilated).toThrowError(/dilation rates greater than 1/);
      } finally {
        installDropInGradients();
      }
      expect(dilated()).toEqual([3, 3, 1, 1]);
    });

    it('is idempotent, keeps its gradients when tfjs registers its own afterwards, and puts tfjs\'s back when uninstalled', () => {
      const tfjsConv2D = (() => {
        uninstallDropInGradients();
        const config = tf.getGradient('Conv2D');
        installDropInGradients();
        return config;
      })();
      const dropIn = tf.getGradient('Conv2D');
      installDropInGradients();
      expect(tf.getGradient('Conv2D')).toBe(dropIn);
      // What importing @tensorflow/tfjs after this package does:
      tf.registerGradient(tfjsConv2D);
      expect(tf.getGradient('Conv2D')).toBe(dropIn);
      expect(dilated()).toEqual([3, 3, 1, 1]);
      uninstallDropInGradients();
      expect(tf.getGradient('Conv2D')).toBe(tfjsConv2D);
      expect(tf.getGradient('fusedConv2d__op')).toBeUndefined();
      installDropInGradients();
      expect(DROP_IN_GRADIENT_KERNELS.every(name => tf.getGradient(name) !== undefined)).toBe(true);
    });
  });
});

describe('the built package\'s tfjs-conv-backprop-filters/gradients entry', () => {
  const root = path.resolve(__dirname, '..');
  /** Fits a tf.layers.conv2d with dilationRate 2 (tf.fused.conv2d) in a fresh Node process. */
  const FIT = `
    tf.env().set('IS_TEST', true);
    const model = tf.sequential({layers: [
      tf.layers.conv2d({filters: 2, kernelSize: 3, dilationRate: 2, inputShape: [8, 8, 1]}),
      tf.layers.flatten(), tf.layers.dense({units: 1})]});
    model.compile({optimizer: 'sgd', loss: 'meanSquaredError'});
    model.fit(tf.ones([2, 8, 8, 1]), tf.ones([2, 1]), {epochs: 2, verbose: 0})
      .then(h => console.log(JSON.stringify({epochs: h.history.loss.length})), e => console.log(JSON.stringify({error: e.message})));
  `;
  const run = (args: string[]) => JSON.parse(execFileSync(
      process.execPath, args, {cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']}).trim().split('\n').pop()!);

  it('require(): works imported before @tensorflow/tfjs, after it, and twice', () => {
    const orders = [
      `require('tfjs-conv-backprop-filters/gradients'); const tf = require('@tensorflow/tfjs');`,
      `const tf = require('@tensorflow/tfjs'); require('tfjs-conv-backprop-filters/gradients'); require('tfjs-conv-backprop-filters/gradients');`,
      `const tf = require('@tensorflow/tfjs'); require('tfjs-conv-backprop-filters'); require('tfjs-conv-backprop-filters/gradients');`,
    ];
    for (const order of orders) expect(run(['-e', order + FIT])).withContext(order).toEqual({epochs: 2});
  });

  it('ESM import: works before and after @tensorflow/tfjs; without it tfjs throws', () => {
    const orders = [
      `import 'tfjs-conv-backprop-filters/gradients'; import * as tf from '@tensorflow/tfjs';`,
      `import * as tf from '@tensorflow/tfjs'; import 'tfjs-conv-backprop-filters/gradients';`,
    ];
    for (const order of orders) expect(run(['--input-type=module', '-e', order + FIT])).withContext(order).toEqual({epochs: 2});
    const without = run(['--input-type=module', '-e', `import * as tf from '@tensorflow/tfjs';` + FIT]);
    expect(without.error).toMatch(/dilation rates greater than 1/);
  });
});

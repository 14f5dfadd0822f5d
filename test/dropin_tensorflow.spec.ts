import '@tensorflow/tfjs-core/dist/register_all_gradients';  // tfjs's own gradients: what the drop-in keeps or replaces

import * as tf from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';
import * as fs from 'node:fs';
import * as path from 'node:path';

import {checkGradients, ConvolutionBackpropFilters, installDropInGradients, uninstallDropInGradients} from '../kernels/index';
import {TENSORFLOW_BACKEND} from './backends';
import {checkLayerFit, checkLayerGradients, LayerDocument} from './helpers/layer_cases';
import {seededTensor, seededValues} from './helpers/util';

/**
 * The drop-in gradients on `tensorflow` (tfjs-node when it loads, else the test backend of that
 * name): a backend without a dedicated kernel of this package, where tfjs's own gradient runs
 * TensorFlow's native kernels. Where tfjs's gradient works (every dilation 1, pad 'valid' or
 * 'same') the drop-in gives it, bit for bit, and runs no kernel of this package; only the rest
 * (dilations) comes to ConvolutionBackpropFilters.
 */
const TENSORFLOW = 'tensorflow';
const TFJS_FILTER_KERNELS = ['Conv2DBackpropFilter', 'DepthwiseConv2dNativeBackpropFilter', 'Conv3DBackpropFilterV2'];

const t4 = (t: tf.Tensor) => t as tf.Tensor4D;
const t5 = (t: tf.Tensor) => t as tf.Tensor5D;

interface Case {
  name: string;
  x: number[];
  w: number[];
  f: (x: tf.Tensor, w: tf.Tensor) => tf.Tensor;
  /** The tfjs filter-gradient kernel tfjs's own gradient runs. */
  kernel: string;
}

const PLAIN: Case[] = [
  {name: 'conv2d, same, stride 2', x: [2, 9, 8, 3], w: [3, 3, 3, 4], f: (x, w) => tf.conv2d(t4(x), t4(w), 2, 'same'), kernel: 'Conv2DBackpropFilter'},
  {name: 'conv2d, valid, strides [1, 2]', x: [2, 7, 8, 2], w: [2, 3, 2, 3], f: (x, w) => tf.conv2d(t4(x), t4(w), [1, 2], 'valid'), kernel: 'Conv2DBackpropFilter'},
  {name: 'conv1d, same, stride 2', x: [2, 11, 3], w: [3, 3, 4], f: (x, w) => tf.conv1d(x as tf.Tensor3D, w as tf.Tensor3D, 2, 'same'), kernel: 'Conv2DBackpropFilter'},
  {name: 'conv3d, same, stride 2', x: [1, 5, 6, 5, 2], w: [3, 3, 2, 2, 3], f: (x, w) => tf.conv3d(t5(x), t5(w), 2, 'same'), kernel: 'Conv3DBackpropFilterV2'},
  {
    name: 'depthwiseConv2d, multiplier 2, stride 2, valid', x: [2, 9, 9, 3], w: [3, 3, 3, 2],
    f: (x, w) => tf.depthwiseConv2d(t4(x), t4(w), 2, 'valid'), kernel: 'DepthwiseConv2dNativeBackpropFilter',
  },
  {
    name: 'conv2dTranspose (Conv2DBackpropInput), stride 2, same', x: [2, 4, 5, 4], w: [3, 3, 3, 4],
    f: (x, w) => tf.conv2dTranspose(t4(x), t4(w), [2, 8, 10, 3], 2, 'same'), kernel: 'Conv2DBackpropFilter',
  },
  {
    name: 'fused conv2d, bias, same', x: [2, 7, 7, 3], w: [3, 3, 3, 4],
    f: (x, w) => tf.fused.conv2d({x: t4(x), filter: t4(w), strides: 1, pad: 'same', bias: tf.div(tf.range(0, 4), 4)}),
    kernel: 'Conv2DBackpropFilter',
  },
  {
    name: 'fused depthwiseConv2d, bias, same', x: [2, 7, 7, 3], w: [3, 3, 3, 2],
    f: (x, w) => tf.fused.depthwiseConv2d({x: t4(x), filter: t4(w), strides: 1, pad: 'same', bias: tf.div(tf.range(0, 6), 6)}),
    kernel: 'DepthwiseConv2dNativeBackpropFilter',
  },
];

/** dL/dx and dL/dw of L = Σ f(x, w)·r for fixed weights r. */
function gradients(c: Case): number[][] {
  return tf.tidy(() => {
    const x = seededTensor(c.x, 1);
    const w = seededTensor(c.w, 2);
    const r = seededTensor(tf.tidy(() => c.f(x, w).shape), 3);
    return tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(c.f(a, b), r)))([x, w]).map(g => Array.from(g.dataSync()));
  });
}

/** Spies on this package's kernel and tfjs's filter-gradient kernels on `tensorflow`. */
function spies() {
  const ours = spyOn(tf.getKernel(ConvolutionBackpropFilters, TENSORFLOW)!, 'kernelFunc').and.callThrough();
  const tfjs = new Map(TFJS_FILTER_KERNELS.map(name => [name, spyOn(tf.getKernel(name, TENSORFLOW)!, 'kernelFunc').and.callThrough()]));
  return {ours, tfjs};
}

describe(`drop-in gradients on tensorflow (${TENSORFLOW_BACKEND.loaded ? 'tfjs-node' : 'the test backend of tfjs-cpu kernels'}):`, () => {
  beforeAll(async () => {
    expect(await tf.setBackend(TENSORFLOW)).toBe(true);
    installDropInGradients();
  });
  afterAll(async () => {
    uninstallDropInGradients();
    await tf.setBackend('cpu');
  });

  describe('where tfjs\'s own gradient works: tfjs\'s gradient, bit for bit, through its kernels, none of ours', () => {
    for (const c of PLAIN) {
      it(c.name, () => {
        const spied = spies();
        const ours = gradients(c);
        expect(spied.ours.calls.count()).withContext('ConvolutionBackpropFilters calls').toBe(0);
        expect(spied.tfjs.get(c.kernel)!.calls.count()).withContext(`${c.kernel} calls`).toBeGreaterThan(0);
        uninstallDropInGradients();
        let theirs: number[][];
        try {
          theirs = gradients(c);
        } finally {
          installDropInGradients();
        }
        expect(ours[0]).withContext('dx').toEqual(theirs[0]);
        expect(ours[1]).withContext('dW').toEqual(theirs[1]);
      });
    }
  });

  describe('where it does not (dilations): ConvolutionBackpropFilters, matching finite differences', () => {
    const dilated: Array<Omit<Case, 'kernel'>> = [
      {name: 'conv2d, dilation [2, 1], same', x: [1, 7, 6, 2], w: [3, 2, 2, 2], f: (x, w) => tf.conv2d(t4(x), t4(w), 1, 'same', 'NHWC', [2, 1])},
      {name: 'conv3d, dilation 2, valid', x: [1, 5, 5, 5, 1], w: [2, 2, 2, 1, 2], f: (x, w) => tf.conv3d(t5(x), t5(w), 1, 'valid', 'NDHWC', 2)},
      {name: 'depthwiseConv2d, dilation 2, valid', x: [1, 7, 7, 2], w: [2, 2, 2, 2], f: (x, w) => tf.depthwiseConv2d(t4(x), t4(w), 1, 'valid', 'NHWC', 2)},
    ];
    for (const c of dilated) {
      it(c.name, () => {
        const spied = spies();
        const x = seededTensor(c.x, 4);
        const w = seededTensor(c.w, 5);
        expect(checkGradients(c.f, [x, w], {maxElementsPerInput: 16}).maxError).toBeLessThan(1e-3);
        expect(spied.ours.calls.count()).withContext('ConvolutionBackpropFilters calls').toBeGreaterThan(0);
        tf.dispose([x, w]);
      });
    }
  });

  describe('the PyTorch golden layers (test/golden/layers.json: dilated, conv3dTranspose) as on cpu:', () => {
    const golden = JSON.parse(fs.readFileSync(path.join(__dirname, 'golden', 'layers.json'), 'utf8')) as LayerDocument;
    for (const c of golden.cases) {
      it(`${c.name}: loss and weight gradients`, () => checkLayerGradients(c, 1e-4, 1e-4));
      it(`${c.name}: model.fit`, () => checkLayerFit(c, 1e-5, 1e-4));
    }
  });

  describe('tf.layers models: plain layers train through tfjs\'s kernels as without the import, dilated ones through ours', () => {
    const LAYERS: Array<{name: string; input: number[]; layer: () => tfl.layers.Layer; ours: boolean}> = [
      {name: 'conv2d 3×3 same', input: [2, 6, 6, 2], layer: () => tfl.layers.conv2d({filters: 3, kernelSize: 3, padding: 'same', inputShape: [6, 6, 2]}), ours: false},
      {name: 'depthwiseConv2d 3×3 valid', input: [2, 6, 6, 2], layer: () => tfl.layers.depthwiseConv2d({kernelSize: 3, depthMultiplier: 2, inputShape: [6, 6, 2]}), ours: false},
      {name: 'conv3d 2×2×2 same', input: [1, 4, 4, 4, 2], layer: () => tfl.layers.conv3d({filters: 2, kernelSize: 2, padding: 'same', inputShape: [4, 4, 4, 2]}), ours: false},
      {name: 'conv2d 3×3 dilationRate 2', input: [2, 7, 7, 2], layer: () => tfl.layers.conv2d({filters: 3, kernelSize: 3, dilationRate: 2, inputShape: [7, 7, 2]}), ours: true},
    ];

    /** The weights after one SGD step from seeded weights and data. */
    async function fitOnce(l: (typeof LAYERS)[number]): Promise<number[][]> {
      const model = tfl.sequential({layers: [l.layer(), tfl.layers.flatten(), tfl.layers.dense({units: 1})]});
      model.setWeights(model.getWeights().map((w, i) => tf.tensor(seededValues(w.size, 10 + i), w.shape)));
      model.compile({optimizer: tf.train.sgd(0.05), loss: 'meanSquaredError'});
      const x = seededTensor(l.input, 20);
      const y = seededTensor([l.input[0], 1], 21);
      await model.fit(x, y, {epochs: 1, batchSize: l.input[0], shuffle: false, verbose: 0});
      const weights = await Promise.all(model.getWeights().map(async w => Array.from(await w.data())));
      tf.dispose([x, y]);
      model.dispose();
      return weights;
    }

    for (const l of LAYERS) {
      it(`${l.name}: ${l.ours ? 'ConvolutionBackpropFilters' : 'no kernel of this package, the weights of tfjs\'s own step bit for bit'}`, async () => {
        const spied = spies();
        const withDropIn = await fitOnce(l);
        const tfjsCalls = [...spied.tfjs.values()].reduce((n, spy) => n + spy.calls.count(), 0);
        if (l.ours) {
          expect(spied.ours.calls.count()).withContext('ConvolutionBackpropFilters calls').toBeGreaterThan(0);
          return;
        }
        expect(spied.ours.calls.count()).withContext('ConvolutionBackpropFilters calls').toBe(0);
        expect(tfjsCalls).withContext('tfjs filter-gradient kernel calls').toBeGreaterThan(0);
        uninstallDropInGradients();
        let without: number[][];
        try {
          without = await fitOnce(l);
        } finally {
          installDropInGradients();
        }
        expect(withDropIn).toEqual(without);
      });
    }
  });
});

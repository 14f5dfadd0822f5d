import * as tf from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';

import {expectClose, seededValues} from './util';

/**
 * Models of two or three convolution layers, so that model.fit needs the data gradient (dx) of
 * every layer but the first as well as each filter gradient: one-layer models (the golden
 * table) never ask for dx. Trained on the backend under test and on cpu from the same seeded
 * weights and data; the weights after each step and the losses must agree, and the loss fall.
 */
export interface StackedModel {
  name: string;
  /** The input's shape, batch first. */
  inputShape: number[];
  layers: Array<{layer: string} & Record<string, unknown>>;
}

export const STACKED_MODELS: readonly StackedModel[] = [
  {
    name: 'conv2d dilationRate 2 → conv2d dilationRate 2, stride 1',
    inputShape: [2, 9, 8, 3],
    layers: [
      {layer: 'conv2d', filters: 4, kernelSize: 3, dilationRate: 2, padding: 'same', activation: 'relu'},
      {layer: 'conv2d', filters: 2, kernelSize: [3, 2], dilationRate: [2, 1]},
    ],
  },
  {
    name: 'conv2d → depthwiseConv2d (multiplier 2) → conv2d stride 2',
    inputShape: [2, 9, 9, 3],
    layers: [
      {layer: 'conv2d', filters: 4, kernelSize: 3, padding: 'same'},
      {layer: 'depthwiseConv2d', kernelSize: 3, depthMultiplier: 2, padding: 'same'},
      {layer: 'conv2d', filters: 2, kernelSize: 3, strides: 2},
    ],
  },
  {
    name: 'conv2d → separableConv2d dilationRate 2 (a dilated depthwise convolution)',
    inputShape: [2, 9, 9, 2],
    layers: [
      {layer: 'conv2d', filters: 3, kernelSize: 2, padding: 'same'},
      {layer: 'separableConv2d', filters: 4, kernelSize: 3, dilationRate: 2, depthMultiplier: 2, padding: 'same'},
    ],
  },
  {
    name: 'conv3d dilationRate 2 → conv3d',
    inputShape: [1, 6, 6, 5, 2],
    layers: [
      {layer: 'conv3d', filters: 3, kernelSize: 3, dilationRate: 2, padding: 'same'},
      {layer: 'conv3d', filters: 2, kernelSize: 2},
    ],
  },
  {
    name: 'conv1d dilationRate 2 → conv1d stride 2',
    inputShape: [2, 12, 3],
    layers: [
      {layer: 'conv1d', filters: 4, kernelSize: 3, dilationRate: 2, padding: 'same'},
      {layer: 'conv1d', filters: 2, kernelSize: 3, strides: 2},
    ],
  },
];

const LEARNING_RATE = 0.05;
const STEPS = 3;

function build(m: StackedModel): tfl.Sequential {
  const model = tfl.sequential();
  m.layers.forEach(({layer, ...config}, i) => {
    const factory = (tfl.layers as unknown as Record<string, (args: object) => tfl.layers.Layer>)[layer];
    model.add(factory(i === 0 ? {...config, inputShape: m.inputShape.slice(1)} : config));
  });
  const weights = model.getWeights().map(
      (w, i) => tf.tensor(seededValues(w.size, 100 + i).map(v => v * 0.5), w.shape, 'float32'));
  model.setWeights(weights);  // copies them into the layers' variables
  tf.dispose(weights);
  return model;
}

/** Losses of STEPS full-batch SGD steps and the weights after them, on the current backend. */
async function train(m: StackedModel): Promise<{losses: number[]; weights: Float32Array[]}> {
  const before = tf.memory().numTensors;
  const model = build(m);
  const optimizer = tf.train.sgd(LEARNING_RATE);
  model.compile({optimizer, loss: 'meanSquaredError'});
  const x = tf.tensor(seededValues(m.inputShape.reduce((a, b) => a * b, 1), 1), m.inputShape, 'float32');
  const outputShape = (model.outputs[0].shape as number[]).map((size, i) => i === 0 ? m.inputShape[0] : size);
  const target = tf.tensor(seededValues(outputShape.reduce((a, b) => a * b, 1), 2), outputShape, 'float32');
  const losses: number[] = [];
  for (let step = 0; step < STEPS; step++) {
    const history = await model.fit(x, target, {epochs: 1, batchSize: m.inputShape[0], shuffle: false, verbose: 0});
    losses.push(history.history.loss[0] as number);
  }
  // Read asynchronously: tfjs-webgpu's synchronous read returns zeros for larger tensors on SwiftShader.
  const weights = await Promise.all(model.getWeights().map(async w => await w.data() as Float32Array));
  tf.dispose([x, target]);
  model.dispose();
  optimizer.dispose();
  expect(tf.memory().numTensors).withContext(`${m.name}: tensors left behind`).toBe(before);
  return {losses, weights};
}

/**
 * model.fit on `backendName` against the same training on cpu (whose kernels the golden
 * specs check against PyTorch): the same losses and weights within tolerance, a falling loss.
 */
export async function checkStackedFit(m: StackedModel, backendName: string, atol: number, rtol: number): Promise<void> {
  await tf.setBackend('cpu');
  const reference = await train(m);
  expect(await tf.setBackend(backendName)).toBe(true);
  const ours = await train(m);
  expectClose(ours.losses, reference.losses, `${m.name}: losses`, atol, rtol);
  ours.weights.forEach((w, i) => expectClose(w, reference.weights[i], `${m.name}: weight ${i} after ${STEPS} steps`, atol, rtol));
  for (let i = 1; i < ours.losses.length; i++) {
    expect(ours.losses[i]).withContext(`${m.name}: losses ${ours.losses}`).toBeLessThan(ours.losses[i - 1]);
  }
}

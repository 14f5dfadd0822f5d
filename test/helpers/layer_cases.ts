import * as tf from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';

import {FlatTensor, tensorOf} from './training_cases';
import {expectClose, resourceCounts} from './util';

/**
 * A case of test/golden/layers.json (test/golden/generate_layers.py): a tf.layers layer, its
 * weights, an input and a target, and PyTorch autograd's output, MSE loss and weight gradients.
 */
export interface LayerCase {
  name: string;
  config: {layer: string} & Record<string, unknown>;
  x: FlatTensor;
  target: FlatTensor;
  weights: Array<FlatTensor & {name: string}>;
  y: FlatTensor;
  loss: number;
  grads: Array<FlatTensor & {name: string}>;
}

export interface LayerDocument {
  torch: string;
  cases: LayerCase[];
}

const LEARNING_RATE = 0.05;

function buildModel(c: LayerCase): tfl.Sequential {
  const {layer, ...config} = c.config;
  const factory = (tfl.layers as unknown as Record<string, (args: object) => tfl.layers.Layer>)[layer];
  const model = tfl.sequential({layers: [factory({...config, inputShape: c.x.shape.slice(1)})]});
  model.setWeights(c.weights.map(tensorOf));
  return model;
}

/** The layer's output, MSE loss and weight gradients (tf.variableGrads) against PyTorch's; nothing left behind. */
export function checkLayerGradients(c: LayerCase, atol: number, rtol: number): void {
  const model = buildModel(c);
  const [x, target] = [tensorOf(c.x), tensorOf(c.target)];
  const weights = model.trainableWeights.map(w => w.read() as tf.Variable);
  expect(model.trainableWeights.map(w => w.originalName.split('/').pop())).toEqual(c.grads.map(g => g.name));
  const lossAndGradients = () => tf.variableGrads(
      () => tf.losses.meanSquaredError(target, model.apply(x, {training: true}) as tf.Tensor) as tf.Scalar, weights);
  // A first pass uploads weights, inputs and tfjs's cached constants (textures on webgl) before counting.
  const warmUp = lossAndGradients();
  tf.dispose([warmUp.value, ...Object.values(warmUp.grads), model.predict(x) as tf.Tensor]);
  const before = resourceCounts();
  const y = model.predict(x) as tf.Tensor;
  expectClose(y.dataSync(), c.y.values, `${c.name}: y`, atol, rtol);
  const {value, grads} = lossAndGradients();
  expect(value.dataSync()[0]).toBeCloseTo(c.loss, 4);
  weights.forEach((w, i) => {
    expect(grads[w.name].shape).toEqual(c.grads[i].shape);
    expectClose(grads[w.name].dataSync(), c.grads[i].values, `${c.name}: d loss / d ${c.grads[i].name}`, atol, rtol);
  });
  tf.dispose([y, value, ...Object.values(grads)]);
  expect(resourceCounts()).withContext('tensors (and textures) left behind').toEqual(before);
  tf.dispose([x, target]);
  model.dispose();
}

/**
 * model.fit with SGD: the first step moves every weight by −lr·(PyTorch's gradient), and the
 * loss falls over the next steps.
 */
export async function checkLayerFit(c: LayerCase, atol: number, rtol: number): Promise<void> {
  const model = buildModel(c);
  model.compile({optimizer: tf.train.sgd(LEARNING_RATE), loss: 'meanSquaredError'});
  const [x, target] = [tensorOf(c.x), tensorOf(c.target)];
  const fitOnce = () => model.fit(x, target, {epochs: 1, batchSize: c.x.shape[0], shuffle: false, verbose: 0});
  const first = await fitOnce();
  expect(first.history.loss[0] as number).toBeCloseTo(c.loss, 4);
  // Read asynchronously: tfjs-webgpu's synchronous read returns zeros for larger tensors on SwiftShader.
  const weights = await Promise.all(model.getWeights().map(w => w.data()));
  weights.forEach((values, i) => {
    const expected = c.weights[i].values.map((v, j) => v - LEARNING_RATE * c.grads[i].values[j]);
    expectClose(values, expected, `${c.name}: ${c.weights[i].name} after one step`, atol, rtol);
  });
  const losses = [first.history.loss[0] as number];
  for (let step = 0; step < 3; step++) losses.push((await fitOnce()).history.loss[0] as number);
  for (let i = 1; i < losses.length; i++) expect(losses[i]).withContext(`losses ${losses}`).toBeLessThan(losses[i - 1]);
  tf.dispose([x, target]);
  model.dispose();
}

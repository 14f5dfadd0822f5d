import * as tf from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';
import * as fs from 'node:fs';
import * as path from 'node:path';

import {withDropInGradientsOnCpu} from './helpers/dropin';
import {FlatTensor, tensorOf} from './helpers/training_cases';
import {expectClose} from './helpers/util';

/**
 * tf.layers models whose convolutions tfjs cannot train (dilationRate > 1: tfjs#7906; a
 * conv3dTranspose: tfjs#6323) trained through the drop-in gradients, on cpu: the layer's output,
 * loss and weight gradients against PyTorch autograd (test/golden/generate_layers.py), then
 * model.fit: its first SGD step moves every weight by −lr·gradient, and the loss falls.
 */
interface LayerCase {
  name: string;
  config: {layer: string} & Record<string, unknown>;
  x: FlatTensor;
  target: FlatTensor;
  weights: Array<FlatTensor & {name: string}>;
  y: FlatTensor;
  loss: number;
  grads: Array<FlatTensor & {name: string}>;
}

const golden = JSON.parse(fs.readFileSync(path.join(__dirname, 'golden', 'layers.json'), 'utf8')) as {cases: LayerCase[]};

/** float32 forward and backward passes over sums of up to ~100 products of values in [-1, 1]. */
const ATOL = 1e-5;
const RTOL = 1e-4;
const LEARNING_RATE = 0.05;

function buildModel(c: LayerCase): tfl.Sequential {
  const {layer, ...config} = c.config;
  const factory = (tfl.layers as unknown as Record<string, (args: object) => tfl.layers.Layer>)[layer];
  const model = tfl.sequential({layers: [factory({...config, inputShape: c.x.shape.slice(1)})]});
  model.setWeights(c.weights.map(tensorOf));
  return model;
}

describe('tf.layers with the drop-in gradients (cpu, against PyTorch)', () => {
  withDropInGradientsOnCpu();

  for (const c of golden.cases) {
    describe(c.name, () => {
      it('has the loss and weight gradients PyTorch computes', () => {
        const model = buildModel(c);
        const before = tf.memory().numTensors;
        const [x, target] = [tensorOf(c.x), tensorOf(c.target)];
        const weights = model.trainableWeights.map(w => w.read() as tf.Variable);
        expect(model.trainableWeights.map(w => w.originalName.split('/').pop()))
            .toEqual(c.grads.map(g => g.name));
        const y = model.predict(x) as tf.Tensor;
        expectClose(y.dataSync(), c.y.values, `${c.name}: y`, ATOL, RTOL);
        const {value, grads} = tf.variableGrads(
            () => tf.losses.meanSquaredError(target, model.apply(x, {training: true}) as tf.Tensor) as tf.Scalar, weights);
        expect(value.dataSync()[0]).toBeCloseTo(c.loss, 5);
        weights.forEach((w, i) => {
          expect(grads[w.name].shape).toEqual(c.grads[i].shape);
          expectClose(grads[w.name].dataSync(), c.grads[i].values, `${c.name}: d loss / d ${c.grads[i].name}`, ATOL, RTOL);
        });
        tf.dispose([x, target, y, value, ...Object.values(grads)]);
        expect(tf.memory().numTensors).withContext('tensors left behind').toBe(before);
        model.dispose();
      });

      it('trains with model.fit: the first SGD step is −lr·gradient, and the loss falls', async () => {
        const model = buildModel(c);
        model.compile({optimizer: tf.train.sgd(LEARNING_RATE), loss: 'meanSquaredError'});
        const [x, target] = [tensorOf(c.x), tensorOf(c.target)];
        const fitOnce = () => model.fit(x, target, {epochs: 1, batchSize: c.x.shape[0], shuffle: false, verbose: 0});
        const first = await fitOnce();
        expect(first.history.loss[0] as number).toBeCloseTo(c.loss, 5);
        model.getWeights().forEach((w, i) => {
          const expected = c.weights[i].values.map((v, j) => v - LEARNING_RATE * c.grads[i].values[j]);
          expectClose(w.dataSync(), expected, `${c.name}: ${c.weights[i].name} after one step`, 1e-6, 1e-5);
        });
        const losses = [first.history.loss[0] as number];
        for (let step = 0; step < 3; step++) losses.push((await fitOnce()).history.loss[0] as number);
        for (let i = 1; i < losses.length; i++) expect(losses[i]).withContext(`losses ${losses}`).toBeLessThan(losses[i - 1]);
        tf.dispose([x, target]);
        model.dispose();
      });
    });
  }
});

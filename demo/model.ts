/**
 * The demo's model and data, shared by `npm start` (Node, cpu) and `npm run demo:web` (browser,
 * webgl). A student learns to imitate a teacher of the same architecture on random inputs made
 * on the fly; both are
 *
 *   x [N, 16, 16, 4]
 *   → conv1: this package's `convolution`, 3×3, 4→8 channels, groups 2, dilation 2, same pads, + bias, tanh
 *   → conv2: tf.layers.conv2d, 3×3, 8 filters, dilationRate 2, same (tfjs trains it through the drop-in gradients), tanh
 *   → conv3: `convolution`, 3×3, 8→2 channels, groups 2, stride 1, dilation [1, 2], pads [1, 2] + bias
 *
 * so every parameter's gradient is one of this package's filter-gradient kernels, and the data
 * gradients run through dilations tfjs's own gradients reject.
 */
import * as tf from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';
import {convolution, ConvolutionAttrs} from 'tfjs-conv-backprop-filters';
import 'tfjs-conv-backprop-filters/gradients';

export const INPUT_SHAPE = [16, 16, 4];

const CONV1: ConvolutionAttrs = {strides: [1, 1], dilations: [2, 2], groups: 2, autoPad: 'same_upper'};
const CONV2 = {filters: 8, kernelSize: 3, dilationRate: 2, padding: 'same' as const};
const CONV3: ConvolutionAttrs = {strides: [1, 1], dilations: [1, 2], padsBegin: [1, 2], padsEnd: [1, 2], groups: 2};

export interface DemoParameter {
  name: string;
  what: string;
  variable: tf.Variable;
}

export class DemoModel {
  readonly layer: tfl.layers.Layer;
  readonly parameters: DemoParameter[];

  constructor(seed: number) {
    const init = (shape: number[], offset: number, scale: number) =>
        tf.variable(tf.mul(tf.randomNormal(shape, 0, 1, 'float32', seed + offset), scale));
    this.layer = tfl.layers.conv2d({
      ...CONV2,
      kernelInitializer: tfl.initializers.glorotNormal({seed: seed + 2}),
      biasInitializer: tfl.initializers.randomNormal({stddev: 0.1, seed: seed + 3}),
    });
    this.layer.build([null, ...INPUT_SHAPE.slice(0, 2), 8]);
    const [kernel, bias] = this.layer.trainableWeights.map(w => w.read() as tf.Variable);
    this.parameters = [
      {name: 'conv1.W', what: 'convolution, groups 2, dilation 2', variable: init([3, 3, 2, 8], 0, 0.4)},
      {name: 'conv1.b', what: 'bias', variable: init([8], 1, 0.1)},
      {name: 'conv2.kernel', what: 'tf.layers.conv2d, dilationRate 2', variable: kernel},
      {name: 'conv2.bias', what: 'tf.layers.conv2d bias', variable: bias},
      {name: 'conv3.W', what: 'convolution, groups 2, dilation [1,2]', variable: init([3, 3, 4, 2], 4, 0.3)},
      {name: 'conv3.b', what: 'bias', variable: init([2], 5, 0.1)},
    ];
  }

  /** The model's output, through the tf.layers layer itself (what training runs). */
  predict(x: tf.Tensor): tf.Tensor {
    return tf.tidy(() => {
      const [w1, b1, , , w3, b3] = this.parameters.map(p => p.variable);
      const h1 = tf.tanh(tf.add(convolution(x, w1, CONV1), b1));
      const h2 = tf.tanh(this.layer.apply(h1) as tf.Tensor);
      return tf.add(convolution(h2, w3, CONV3), b3);
    });
  }

  /**
   * The same function of explicit parameter values (for the gradient check): the layer's part is
   * the op tf.layers.conv2d runs, tf.fused.conv2d with the layer's attributes.
   */
  predictWith(values: tf.Tensor[], x: tf.Tensor): tf.Tensor {
    const [w1, b1, kernel, bias, w3, b3] = values;
    const h1 = tf.tanh(tf.add(convolution(x, w1, CONV1), b1));
    const h2 = tf.tanh(tf.fused.conv2d({
      x: h1 as tf.Tensor4D, filter: kernel as tf.Tensor4D, bias, strides: 1, pad: CONV2.padding,
      dilations: CONV2.dilationRate,
    }));
    return tf.add(convolution(h2, w3, CONV3), b3);
  }

  /** Disposes every parameter, the layer's included (Layer.dispose refuses a layer used outside a model). */
  dispose(): void {
    for (const p of this.parameters) p.variable.dispose();
  }
}

/** A batch of the task: random inputs and the teacher's outputs for them. */
export function makeBatch(teacher: DemoModel, batchSize: number, seed: number): {x: tf.Tensor; y: tf.Tensor} {
  const x = tf.randomNormal([batchSize, ...INPUT_SHAPE], 0, 1, 'float32', seed);
  return {x, y: teacher.predict(x)};
}

export function meanSquaredError(prediction: tf.Tensor, target: tf.Tensor): tf.Scalar {
  return tf.mean(tf.square(tf.sub(prediction, target)));
}

/**
 * A training run: Adam steps of the student on fresh batches; `step` returns the batch loss
 * (read back, so the caller can report progress as it goes).
 */
export class DemoTraining {
  readonly teacher = new DemoModel(1000);
  readonly student = new DemoModel(1);
  private readonly optimizer: tf.Optimizer;
  private batches = 0;

  constructor(readonly batchSize: number, learningRate = 0.01) {
    this.optimizer = tf.train.adam(learningRate);
  }

  async step(): Promise<number> {
    const {x, y} = makeBatch(this.teacher, this.batchSize, 7 + this.batches++);
    const loss = this.optimizer.minimize(
        () => meanSquaredError(this.student.predict(x), y), true, this.student.parameters.map(p => p.variable))!;
    const value = (await loss.data())[0];
    tf.dispose([x, y, loss]);
    return value;
  }

  dispose(): void {
    this.teacher.dispose();
    this.student.dispose();
    this.optimizer.dispose();
  }
}

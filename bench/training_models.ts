/**
 * The models of `npm run bench:training`, as data: the small convnets tfjs users train, each
 * layer of them a line of `workloads/conv/shapes_tfjs_training` (the bench checks that the
 * convolutions of the built models are those lines). Shared by the Node half (bench/training.ts:
 * cpu, wasm), the browser half (bench/training_page.ts: webgl, webgpu) and the spec that keeps
 * them building and training (test/training_bench.spec.ts), so it imports no Node module.
 *
 * Dropout layers of the originals are left out: they cost the same with either gradient and
 * would only add noise to the step times.
 */
import * as tf from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';

/** One tf.layers layer: the factory's name in `tf.layers` and its arguments. */
export interface LayerSpec {
  readonly layer: 'conv2d' | 'depthwiseConv2d' | 'maxPooling2d' | 'batchNormalization' | 'reLU' | 'flatten' |
      'globalAveragePooling2d' | 'dense';
  readonly args: Readonly<Record<string, unknown>>;
}

export interface TrainingModel {
  /** Short id, used on the command line (--models) and in the JSON. */
  readonly id: string;
  /** What the model is, for tables. */
  readonly label: string;
  /** Where the architecture comes from. */
  readonly origin: string;
  /** The name prefix of its layers in workloads/conv/shapes_tfjs_training, e.g. 'tfjs-mnist:'. */
  readonly workloadPrefix: string;
  /** Set when the model is the first layers of another (a lighter subset where the whole is too slow). */
  readonly subsetOf?: string;
  /** The training batch of the workload file. */
  readonly batch: number;
  /** One example's shape (height, width, channels). */
  readonly inputShape: readonly [number, number, number];
  /**
   * A smaller example shape the same layers still fit (every conv and pool keeps ≥ 1 pixel), for
   * test/training_bench.spec.ts: a step at the real size takes seconds with tfjs's cpu gradients.
   */
  readonly smallInputShape: readonly [number, number, number];
  readonly classes: number;
  readonly layers: readonly LayerSpec[];
}

const conv = (filters: number, kernelSize: number | [number, number], extra: Record<string, unknown> = {}): LayerSpec =>
    ({layer: 'conv2d', args: {filters, kernelSize, activation: 'relu', kernelInitializer: 'varianceScaling', ...extra}});
const pool = (poolSize: [number, number] = [2, 2], strides: [number, number] = [2, 2]): LayerSpec =>
    ({layer: 'maxPooling2d', args: {poolSize, strides}});
const flatten: LayerSpec = {layer: 'flatten', args: {}};
const dense = (units: number, activation: string): LayerSpec =>
    ({layer: 'dense', args: {units, activation, kernelInitializer: 'varianceScaling'}});

/** MobileNet v1's separable block: 3×3 depthwise, BN, ReLU6, 1×1 pointwise, BN, ReLU6 (Keras applications' layout). */
function mobileNetBlock(pointwiseFilters: number, stride: 1 | 2): LayerSpec[] {
  return [
    {layer: 'depthwiseConv2d', args: {kernelSize: 3, strides: stride, padding: 'same', useBias: false}},
    {layer: 'batchNormalization', args: {}},
    {layer: 'reLU', args: {maxValue: 6}},
    {layer: 'conv2d', args: {filters: pointwiseFilters, kernelSize: 1, padding: 'same', useBias: false}},
    {layer: 'batchNormalization', args: {}},
    {layer: 'reLU', args: {maxValue: 6}},
  ];
}

/**
 * MobileNet v1 at width multiplier α, its first `blockCount` separable blocks (13 in all): the
 * stride-2 layers pad only at the end ('same' here, ZeroPadding + 'valid' in Keras: the same pads).
 */
function mobileNetV1(alpha: number, blockCount = 13): LayerSpec[] {
  const width = (filters: number) => Math.round(filters * alpha);
  const blocks: Array<[number, 1 | 2]> = [
    [64, 1], [128, 2], [128, 1], [256, 2], [256, 1], [512, 2], [512, 1], [512, 1], [512, 1], [512, 1], [512, 1],
    [1024, 2], [1024, 1],
  ];
  return [
    {layer: 'conv2d', args: {filters: width(32), kernelSize: 3, strides: 2, padding: 'same', useBias: false}},
    {layer: 'batchNormalization', args: {}},
    {layer: 'reLU', args: {maxValue: 6}},
    ...blocks.slice(0, blockCount).flatMap(([filters, stride]) => mobileNetBlock(width(filters), stride)),
  ];
}

export const TRAINING_MODELS: readonly TrainingModel[] = [
  {
    id: 'mnist',
    label: 'MNIST convnet (tfjs tutorial)',
    origin: "tfjs's MNIST tutorial: 5×5 conv 8, pool, 5×5 conv 16, pool, dense 10",
    workloadPrefix: 'tfjs-mnist:',
    batch: 64,
    inputShape: [28, 28, 1],
    smallInputShape: [16, 16, 1],
    classes: 10,
    layers: [conv(8, 5), pool(), conv(16, 5), pool(), flatten, dense(10, 'softmax')],
  },
  {
    id: 'mnist3x3',
    label: 'MNIST 3×3 convnet',
    origin: 'tfjs-examples/mnist createConvModel: 3×3 conv 16, pool, 3×3 conv 32, pool, 3×3 conv 32, dense 64, dense 10',
    workloadPrefix: 'tfjs-mnist3x3:',
    batch: 64,
    inputShape: [28, 28, 1],
    smallInputShape: [20, 20, 1],
    classes: 10,
    layers: [conv(16, 3), pool(), conv(32, 3), pool(), conv(32, 3), flatten, dense(64, 'relu'), dense(10, 'softmax')],
  },
  {
    id: 'cifar',
    label: 'CIFAR-10 convnet',
    origin: "Keras' cifar10_cnn, every conv 'same': 3×3 conv 32, 32, pool, 64, 64, pool, dense 512, dense 10",
    workloadPrefix: 'tfjs-cifar:',
    batch: 32,
    inputShape: [32, 32, 3],
    smallInputShape: [8, 8, 3],
    classes: 10,
    layers: [
      conv(32, 3, {padding: 'same'}), conv(32, 3, {padding: 'same'}), pool(), conv(64, 3, {padding: 'same'}),
      conv(64, 3, {padding: 'same'}), pool(), flatten, dense(512, 'relu'), dense(10, 'softmax'),
    ],
  },
  {
    id: 'speech',
    label: 'Speech commands (spectrogram)',
    origin: 'tfjs-models speech-commands (browser FFT): 2×8 conv 8 over [43,232], three 2×4 conv 32 with pools, dense 2000, dense 20',
    workloadPrefix: 'tfjs-speech:',
    batch: 32,
    inputShape: [43, 232, 1],
    smallInputShape: [35, 80, 1],
    classes: 20,
    layers: [
      conv(8, [2, 8]), pool(), conv(32, [2, 4]), pool(), conv(32, [2, 4]), pool(), conv(32, [2, 4]), pool([2, 2], [1, 2]),
      flatten, dense(2000, 'relu'), dense(20, 'softmax'),
    ],
  },
  {
    id: 'mobilenet',
    label: 'MobileNet v1 α 0.25, 128 px',
    origin: 'MobileNet v1 (Keras applications) at α 0.25 on 128×128 images, BN + ReLU6, global pool, dense 10 (a transfer-learning head)',
    workloadPrefix: 'tfjs-mobilenet025:',
    batch: 16,
    inputShape: [128, 128, 3],
    smallInputShape: [32, 32, 3],
    classes: 10,
    layers: [...mobileNetV1(0.25), {layer: 'globalAveragePooling2d', args: {}}, dense(10, 'softmax')],
  },
  {
    id: 'mobilenet-lite',
    label: 'MobileNet v1 α 0.25, 128 px, first 4 blocks',
    origin: 'the MobileNet above up to conv3_2 (conv1 and 4 separable blocks: the layers at 64 and 32 px), global pool, dense 10',
    workloadPrefix: 'tfjs-mobilenet025:',
    subsetOf: 'mobilenet',
    batch: 16,
    inputShape: [128, 128, 3],
    smallInputShape: [16, 16, 3],
    classes: 10,
    layers: [...mobileNetV1(0.25, 4), {layer: 'globalAveragePooling2d', args: {}}, dense(10, 'softmax')],
  },
];

export function findTrainingModel(id: string): TrainingModel {
  const model = TRAINING_MODELS.find(m => m.id === id);
  if (model === undefined) throw new Error(`no training model '${id}' (${TRAINING_MODELS.map(m => m.id).join(', ')})`);
  return model;
}

/** The model built with tf.layers and compiled as the tutorials do (Adam, categorical cross-entropy). */
export function buildTrainingModel(spec: TrainingModel, inputShape: readonly number[] = spec.inputShape): tfl.Sequential {
  const factories = tfl.layers as unknown as Record<string, (args: object) => tfl.layers.Layer>;
  const model = tfl.sequential();
  spec.layers.forEach((layer, i) => {
    model.add(factories[layer.layer](i === 0 ? {...layer.args, inputShape: [...inputShape]} : layer.args));
  });
  model.compile({optimizer: tf.train.adam(), loss: 'categoricalCrossentropy'});
  return model;
}

/** A batch of random inputs and one-hot labels (seeded: the same data for every configuration). */
export function trainingBatch(
    spec: TrainingModel, batch: number, inputShape: readonly number[] = spec.inputShape, seed = 1): {x: tf.Tensor; y: tf.Tensor} {
  return tf.tidy(() => {
    const x = tf.randomUniform([batch, ...inputShape], 0, 1, 'float32', seed);
    const labels = tf.tensor1d(Array.from({length: batch}, (_, i) => (i * 7 + seed) % spec.classes), 'int32');
    return {x, y: tf.cast(tf.oneHot(labels, spec.classes), 'float32')};
  });
}

/** A convolution of a built model, as the workload grammar describes one (NHWC, XIO filters). */
export interface ModelConvolution {
  readonly layer: string;
  readonly groups: number;
  readonly inputShape: readonly number[];
  readonly outputShape: readonly number[];
  readonly kernel: readonly number[];
  readonly strides: readonly number[];
}

/** The conv2d and depthwiseConv2d layers of a built model with their shapes at `batch`. */
export function modelConvolutions(model: tfl.LayersModel, batch: number): ModelConvolution[] {
  const out: ModelConvolution[] = [];
  for (const layer of model.layers) {
    const config = layer.getConfig() as {kernelSize?: number[]; strides?: number[]};
    const className = layer.getClassName();
    if (className !== 'Conv2D' && className !== 'DepthwiseConv2D') continue;
    const shapeOf = (t: tfl.SymbolicTensor | tfl.SymbolicTensor[]) => (Array.isArray(t) ? t[0] : t).shape.slice(1) as number[];
    const inputShape = [batch, ...shapeOf(layer.input)];
    const outputShape = [batch, ...shapeOf(layer.output)];
    out.push({
      layer: layer.name,
      groups: className === 'DepthwiseConv2D' ? inputShape[3] : 1,
      inputShape,
      outputShape,
      kernel: config.kernelSize!,
      strides: config.strides!,
    });
  }
  return out;
}

import * as tf from '@tensorflow/tfjs-core';

import {checkGradients, convolution, convolutionBackpropFilters, convTranspose, convTransposeBackpropFilters} from '../../kernels/index';
import {expectClose} from './util';

/** One case of test/golden/training.json (made by test/golden/generate_training.py with PyTorch). */
export interface TrainingCase {
  id: string;
  op: 'convolution' | 'convTranspose';
  attrs: Record<string, unknown>;
  input: FlatTensor;
  filter: FlatTensor;
  dy: FlatTensor;
  y: FlatTensor;
  dx: FlatTensor;
  dw: FlatTensor;
  second: {upstream: FlatTensor; dInput: FlatTensor; dOutputDelta: FlatTensor};
}

export interface FlatTensor {
  shape: number[];
  values: number[];
}

export interface TrainingDocument {
  torch: string;
  cases: TrainingCase[];
}

export function tensorOf(t: FlatTensor): tf.Tensor {
  return tf.tensor(Float32Array.from(t.values), t.shape, 'float32');
}

export function forwardOf(c: TrainingCase): (x: tf.Tensor, w: tf.Tensor) => tf.Tensor {
  return c.op === 'convolution' ? (x, w) => convolution(x, w, c.attrs as never) :
                                  (x, w) => convTranspose(x, w, c.attrs as never);
}

/**
 * The filter-gradient kernel of the case's op, with the case's attributes: the filter shape
 * from the filter, and for an `outputShape` case the output padding it stands for.
 */
export function filterGradientOf(c: TrainingCase): (x: tf.Tensor, dy: tf.Tensor) => tf.Tensor {
  const {outputShape, ...attrs} = c.attrs as Record<string, unknown> & {outputShape?: number[]};
  const full: Record<string, unknown> = {...attrs, filterShape: c.filter.shape};
  if (outputShape !== undefined) {
    const r = c.input.shape.length - 2;
    const spatial = (shape: number[]) => attrs.dataFormat === 'NXC' ? shape.slice(1, 1 + r) : shape.slice(2);
    const inSpatial = spatial(c.input.shape);
    const letters = String(attrs.filterFormat ?? 'XIO').replace('X', 'X'.repeat(r)).split('');
    const kernel = c.filter.shape.filter((_, i) => letters[i] === 'X');
    const s = attrs.strides as number[];
    const d = (attrs.dilations as number[] | undefined) ?? kernel.map(() => 1);
    const pb = (attrs.padsBegin as number[] | undefined) ?? kernel.map(() => 0);
    const pe = (attrs.padsEnd as number[] | undefined) ?? kernel.map(() => 0);
    full.outputPadding =
        outputShape.map((size, i) => size - ((inSpatial[i] - 1) * s[i] - pb[i] - pe[i] + d[i] * (kernel[i] - 1) + 1));
  }
  return c.op === 'convolution' ? (x, dy) => convolutionBackpropFilters(x, dy, full as never) :
                                  (x, dy) => convTransposeBackpropFilters(x, dy, full as never);
}

/**
 * The case through `op`, tf.grads of sum(y · dy) and, second order, tf.grads of
 * sum(filterGradient(x, dy) · G), each compared with PyTorch's values; every tensor made is
 * disposed and the tensor count must be back where it was.
 */
export function runTrainingCase(c: TrainingCase, atol: number, rtol: number) {
  const before = tf.memory().numTensors;
  const [x, w, dy, upstream] = [c.input, c.filter, c.dy, c.second.upstream].map(tensorOf);
  try {
    const forward = forwardOf(c);
    const y = forward(x, w);
    expect(y.shape).withContext(`${c.id}: y shape`).toEqual(c.y.shape);
    expectClose(y.dataSync(), c.y.values, `${c.id}: y`, atol, rtol);
    y.dispose();

    const grads = tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(forward(a, b), dy)))([x, w]);
    expect(grads[0].shape).withContext(`${c.id}: dx shape`).toEqual(c.dx.shape);
    expect(grads[1].shape).withContext(`${c.id}: dw shape`).toEqual(c.dw.shape);
    expectClose(grads[0].dataSync(), c.dx.values, `${c.id}: dx`, atol, rtol);
    expectClose(grads[1].dataSync(), c.dw.values, `${c.id}: dw`, atol, rtol);
    tf.dispose(grads);

    const filterGradient = filterGradientOf(c);
    const second =
        tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(filterGradient(a, b), upstream)))([x, dy]);
    expectClose(second[0].dataSync(), c.second.dInput.values, `${c.id}: second order, d/dinput`, atol, rtol);
    expectClose(second[1].dataSync(), c.second.dOutputDelta.values, `${c.id}: second order, d/doutputDelta`, atol, rtol);
    tf.dispose(second);
  } finally {
    tf.dispose([x, w, dy, upstream]);
  }
  expect(tf.memory().numTensors).withContext(`${c.id}: tensors left behind`).toBe(before);
}

/** checkGradients of the forward op (both inputs) and of its filter-gradient kernel (second order). */
export function checkTrainingCase(c: TrainingCase, maxElementsPerInput: number) {
  const before = tf.memory().numTensors;
  const [x, w, dy] = [c.input, c.filter, c.dy].map(tensorOf);
  try {
    const first = checkGradients(forwardOf(c), [x, w], {maxElementsPerInput});
    expect(first.maxError).toBeLessThan(1e-3);
    const second = checkGradients(filterGradientOf(c), [x, dy], {maxElementsPerInput});
    expect(second.maxError).toBeLessThan(1e-3);
  } finally {
    tf.dispose([x, w, dy]);
  }
  expect(tf.memory().numTensors).withContext(`${c.id}: tensors left behind`).toBe(before);
}

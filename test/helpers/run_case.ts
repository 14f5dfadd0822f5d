import * as tf from '@tensorflow/tfjs-core';

import {ConvolutionBackpropFilters, convolutionBackpropFilters, ConvolutionBackwardWeights, ConvTransposeBackpropFilters, convTransposeBackpropFilters, ConvTransposeBackwardWeights, OpName} from '../../kernels/index';
import {expectClose, resourceCounts} from './util';

export interface RunnableCase {
  id: string;
  op: OpName;
  attrs: Record<string, unknown>;
  filterShapeInput?: number[];
  input: {shape: number[]; values: ArrayLike<number>};
  outputDelta: {shape: number[]; values: ArrayLike<number>};
  expected: {shape: number[]; values: ArrayLike<number>};
}

const OP_FUNCTIONS = {
  [ConvolutionBackpropFilters]: convolutionBackpropFilters,
  [ConvTransposeBackpropFilters]: convTransposeBackpropFilters,
};
const ALIASES = {
  [ConvolutionBackpropFilters]: ConvolutionBackwardWeights,
  [ConvTransposeBackpropFilters]: ConvTransposeBackwardWeights,
};

export interface RunOptions {
  atol?: number;
  rtol?: number;
  /**
   * Makes the input tensors as the backend under test should see them (e.g. already on the
   * GPU, packed or not); the default uploads nothing ahead of the call.
   */
  place?: (values: Float32Array, shape: number[]) => tf.Tensor;
  /** Only the op function with tensors (the other entry points share everything after it). */
  opOnly?: boolean;
  /**
   * Only the op functions (tensors and tensor-likes): on a backend this package has no kernel
   * for, runKernel has nothing to run, while the op functions run the composite of tfjs ops.
   */
  opsOnly?: boolean;
}

/**
 * Runs one case through every public entry point: the op function with tensors and with
 * tensor-likes, and tf.engine().runKernel under both kernel names (filterShape as the int32
 * input when the case gives it so). Each result is compared with `expected`, and once it is
 * disposed, tensors (and on webgl textures in use) must be back where they were.
 */
export function runCaseEverywhere(c: RunnableCase, options: RunOptions = {}) {
  for (const call of entryPointResults(c, options)) call.check(call.result.dataSync());
}

/**
 * runCaseEverywhere reading each result with `await data()`: tfjs-webgpu's dataSync (a
 * canvas copy) reads zeros in headless Chromium on SwiftShader.
 */
export async function runCaseEverywhereAsync(c: RunnableCase, options: RunOptions = {}) {
  for (const call of entryPointResults(c, options)) call.check(await call.result.data());
}

/**
 * The calls of runCaseEverywhere, one at a time: each entry point's result, and `check`, which
 * takes its values (read as the caller can), compares them, disposes the result and checks that
 * nothing was left behind. The case's inputs are disposed when the loop ends, however it ends.
 */
function* entryPointResults(c: RunnableCase, options: RunOptions):
    Generator<{result: tf.Tensor; check: (values: ArrayLike<number>) => void}> {
  const {atol = 1e-5, rtol = 1e-5} = options;
  const calls = entryPointCalls(c, options);
  try {
    for (const {label, call} of calls.entries) {
      const before = resourceCounts();
      const result = call();
      yield {
        result,
        check: values => {
          expect(result.dtype).toBe('float32');
          expect(result.shape).withContext(`${c.id} ${label}: shape`).toEqual(c.expected.shape);
          expectClose(values, c.expected.values, `${c.id} ${label}`, atol, rtol);
          result.dispose();
          expect(resourceCounts()).withContext(`${c.id} ${label}: left behind`).toEqual(before);
        },
      };
    }
  } finally {
    tf.dispose(calls.made);
  }
}

/** The case's inputs (to dispose) and one call per public entry point. */
function entryPointCalls(c: RunnableCase, options: RunOptions) {
  const place = options.place ?? ((values, shape) => tf.tensor(values, shape, 'float32'));
  const input = place(Float32Array.from(c.input.values), c.input.shape);
  const outputDelta = place(Float32Array.from(c.outputDelta.values), c.outputDelta.shape);
  const filterShapeTensor = c.filterShapeInput && tf.tensor1d(c.filterShapeInput, 'int32');
  const attrs = c.attrs as never;
  const op = OP_FUNCTIONS[c.op];
  const kernelInputs: tf.NamedTensorMap = {input, outputDelta, ...(filterShapeTensor ? {filterShape: filterShapeTensor} : {})};
  const entries: Array<{label: string; call: () => tf.Tensor}> = [
    {label: 'op(tensors)', call: () => op(input, outputDelta, attrs, c.filterShapeInput)},
    {
      label: 'op(tensor-likes)',
      call: () => op(nested(c.input.values, c.input.shape), nested(c.outputDelta.values, c.outputDelta.shape), attrs,
                     c.filterShapeInput),
    },
    ...[c.op, ALIASES[c.op]].map(
        name => ({label: `runKernel('${name}')`, call: () => tf.engine().runKernel(name, kernelInputs, attrs) as tf.Tensor})),
  ];
  if (options.opOnly) entries.length = 1;
  else if (options.opsOnly) entries.length = 2;
  return {entries, made: [input, outputDelta, ...(filterShapeTensor ? [filterShapeTensor] : [])]};
}

/** Nested arrays of `values` in `shape`: a tensor-like made without reading any tensor back. */
function nested(values: ArrayLike<number>, shape: number[]): tf.TensorLike {
  const flat = Array.from(values);
  const nest = (offset: number, axis: number): unknown => {
    if (axis === shape.length - 1) return flat.slice(offset, offset + shape[axis]);
    const inner = shape.slice(axis + 1).reduce((a, b) => a * b, 1);
    return Array.from({length: shape[axis]}, (_, i) => nest(offset + i * inner, axis + 1));
  };
  return nest(0, 0) as tf.TensorLike;
}

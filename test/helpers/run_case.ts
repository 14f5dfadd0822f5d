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
  /**
   * Only the op functions: on a backend this package has no kernel for, runKernel has nothing
   * to run, while the op functions run the composite of tfjs ops.
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
  const {atol = 1e-5, rtol = 1e-5} = options;
  const place = options.place ?? ((values, shape) => tf.tensor(values, shape, 'float32'));
  const input = place(Float32Array.from(c.input.values), c.input.shape);
  const outputDelta = place(Float32Array.from(c.outputDelta.values), c.outputDelta.shape);
  const filterShapeTensor = c.filterShapeInput && tf.tensor1d(c.filterShapeInput, 'int32');
  const check = (label: string, call: () => tf.Tensor) => {
    const before = resourceCounts();
    const result = call();
    expect(result.dtype).toBe('float32');
    expect(result.shape).withContext(`${c.id} ${label}: shape`).toEqual(c.expected.shape);
    expectClose(result.dataSync(), c.expected.values, `${c.id} ${label}`, atol, rtol);
    result.dispose();
    expect(resourceCounts()).withContext(`${c.id} ${label}: left behind`).toEqual(before);
  };
  try {
    const attrs = c.attrs as never;
    const op = OP_FUNCTIONS[c.op];
    check('op(tensors)', () => op(input, outputDelta, attrs, c.filterShapeInput));
    check('op(tensor-likes)', () => op(input.arraySync(), outputDelta.arraySync(), attrs, c.filterShapeInput));
    if (options.opsOnly === true) return;
    const kernelInputs: tf.NamedTensorMap = {input, outputDelta, ...(filterShapeTensor ? {filterShape: filterShapeTensor} : {})};
    for (const name of [c.op, ALIASES[c.op]]) {
      check(`runKernel('${name}')`, () => tf.engine().runKernel(name, kernelInputs, attrs) as tf.Tensor);
    }
  } finally {
    tf.dispose([input, outputDelta, ...(filterShapeTensor ? [filterShapeTensor] : [])]);
  }
}

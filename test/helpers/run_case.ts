import * as tf from '@tensorflow/tfjs-core';

import {ConvolutionBackpropFilters, convolutionBackpropFilters, ConvolutionBackwardWeights, ConvTransposeBackpropFilters, convTransposeBackpropFilters, ConvTransposeBackwardWeights, OpName} from '../../kernels/index';
import {expectClose, withoutLeaks} from './util';

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

/**
 * Runs one case through every public entry point: the op function with tensors and with
 * tensor-likes, and tf.engine().runKernel under both kernel names (filterShape as the int32
 * input when the case gives it so). Each call is leak-checked and compared with `expected`.
 */
export function runCaseEverywhere(c: RunnableCase, atol = 1e-5, rtol = 1e-5) {
  const input = tf.tensor(c.input.values as Float32Array, c.input.shape, 'float32');
  const outputDelta = tf.tensor(c.outputDelta.values as Float32Array, c.outputDelta.shape, 'float32');
  const filterShapeTensor = c.filterShapeInput && tf.tensor1d(c.filterShapeInput, 'int32');
  const check = (label: string, call: () => tf.Tensor) => {
    const result = withoutLeaks(call, 1);
    expect(result.dtype).toBe('float32');
    expect(result.shape).withContext(`${c.id} ${label}: shape`).toEqual(c.expected.shape);
    expectClose(result.dataSync(), c.expected.values, `${c.id} ${label}`, atol, rtol);
    result.dispose();
  };
  try {
    const attrs = c.attrs as never;
    const op = OP_FUNCTIONS[c.op];
    check('op(tensors)', () => op(input, outputDelta, attrs, c.filterShapeInput));
    check('op(tensor-likes)', () => op(input.arraySync(), outputDelta.arraySync(), attrs, c.filterShapeInput));
    const kernelInputs: tf.NamedTensorMap = {input, outputDelta, ...(filterShapeTensor ? {filterShape: filterShapeTensor} : {})};
    for (const name of [c.op, ALIASES[c.op]]) {
      check(`runKernel('${name}')`, () => tf.engine().runKernel(name, kernelInputs, attrs) as tf.Tensor);
    }
  } finally {
    tf.dispose([input, outputDelta, ...(filterShapeTensor ? [filterShapeTensor] : [])]);
  }
}

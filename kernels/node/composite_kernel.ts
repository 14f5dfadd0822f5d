import type {KernelBackend, KernelConfig, KernelFunc, TensorInfo} from '@tensorflow/tfjs-core';

import {geometryOfKernelCall} from '../../src/kernel_inputs';
import {kernelConfigsFor, OpName} from '../../src/names';
import {chunkBudgetBytes} from './chunk_budget';
import {compositeFilterGradient} from './filter_gradient_composite';

/**
 * The composite kernel of either op: geometry once (it throws every input error, the same as
 * on cpu), then the canonical composite computation in chunks under the budget of the
 * CONV_BACKPROP_FILTERS_CHUNK_BYTES flag. The result (one filter, small) is written as a new
 * tensor of the backend, so it aliases nothing the computation disposed.
 */
function compositeKernel(op: OpName): KernelFunc {
  return ({inputs, backend: anyBackend, attrs}): TensorInfo => {
    const backend = anyBackend as KernelBackend;
    const geometry = geometryOfKernelCall(op, inputs, backend, attrs);
    const budget = chunkBudgetBytes(op);
    const values = compositeFilterGradient(
        geometry, inputs[geometry.src.name]!, inputs[geometry.diffDst.name]!, budget);
    const shape = [...geometry.filterShape];
    return {dataId: backend.write(values, shape, 'float32'), shape, dtype: 'float32'};
  };
}

/** Kernel configs of `op` under each of its names for `backendName`. */
export function compositeKernelConfigs(op: OpName, backendName: string): KernelConfig[] {
  return kernelConfigsFor(op, backendName, compositeKernel(op));
}

/**
 * The backends the package registers the composite kernels for: tfjs-node's `tensorflow` (whose
 * native Conv2DBackpropFilter cannot carry the spec) and `wasm` (native-speed matMul for Node
 * and browsers without libtensorflow). Registration loads neither backend package.
 */
export const COMPOSITE_BACKENDS = Object.freeze(['tensorflow', 'wasm'] as const);

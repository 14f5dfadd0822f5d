import {dispose, getKernel} from '@tensorflow/tfjs-core';
import type {KernelBackend, KernelConfig, KernelFunc, Tensor, TensorInfo} from '@tensorflow/tfjs-core';

import {chunkBudgetBytes} from '../../src/composite/chunk_budget';
import {compositeFilterGradient} from '../../src/composite/filter_gradient_composite';
import {copyOfForeignInput, geometryOfKernelCall} from '../../src/kernel_inputs';
import {kernelConfigsFor, OpName} from '../../src/names';
import {reportPath} from '../../src/verbose';

/**
 * The composite kernel of either op: geometry once (it throws every input error, the same as
 * on cpu), then the canonical composite computation of src/composite in chunks under the budget
 * of the CONV_BACKPROP_FILTERS_CHUNK_BYTES flag, on the device: no value is read back.
 */
function compositeKernel(op: OpName, backendName: string): KernelFunc {
  return ({inputs, backend: anyBackend, attrs}): TensorInfo => {
    const backend = anyBackend as KernelBackend;
    const geometry = geometryOfKernelCall(op, inputs, backend, attrs);
    const budget = chunkBudgetBytes(op);
    reportPath(geometry, 'composite');
    // Inputs another backend holds are copied here, never moved (see src/kernel_inputs.ts).
    const srcCopy = copyOfForeignInput(inputs[geometry.src.name]!, backend);
    const diffDstCopy = copyOfForeignInput(inputs[geometry.diffDst.name]!, backend);
    try {
      const result = compositeFilterGradient(
          geometry, srcCopy ?? inputs[geometry.src.name]!, diffDstCopy ?? inputs[geometry.diffDst.name]!, budget);
      return handOver(result, backend, backendName);
    } finally {
      dispose([srcCopy, diffDstCopy].filter(copy => copy !== undefined));
    }
  };
}

/**
 * The kernel's output for a tensor made by inner ops: the backend's own Identity kernel takes a
 * reference to (or copies) its data, and the tensor is disposed, so the engine tracks exactly one
 * new data id.
 */
function handOver(result: Tensor, backend: KernelBackend, backendName: string): TensorInfo {
  const identity = getKernel('Identity', backendName);
  if (identity === undefined) throw new Error(`tfjs-conv-backprop-filters: backend '${backendName}' has no Identity kernel`);
  const output = identity.kernelFunc({inputs: {x: result}, backend, attrs: {}}) as TensorInfo;
  result.dispose();
  return output;
}

/** Kernel configs of `op` under each of its names for `backendName`. */
export function compositeKernelConfigs(op: OpName, backendName: string): KernelConfig[] {
  return kernelConfigsFor(op, backendName, compositeKernel(op, backendName));
}

/**
 * The backends the package registers the composite kernels for: tfjs-node's `tensorflow` (whose
 * native Conv2DBackpropFilter cannot carry the spec). Registration does not load its package.
 */
export const COMPOSITE_BACKENDS = Object.freeze(['tensorflow'] as const);

import {dispose, getKernel} from '@tensorflow/tfjs-core';
import type {KernelBackend, KernelConfig, KernelFunc, Tensor, TensorInfo} from '@tensorflow/tfjs-core';

import {chunkBudgetBytes} from '../../src/composite/chunk_budget';
import {compositeFilterGradient} from '../../src/composite/filter_gradient_composite';
import type {FilterGradientGeometry} from '../../src/geometry';
import {copyOfForeignInput, geometryOfKernelCall} from '../../src/kernel_inputs';
import {kernelConfigsFor, OpName} from '../../src/names';
import {routedFilterGradient} from '../../src/native/native_filter_gradient';
import {reportPath} from '../../src/verbose';

/** Computes the filter gradient of `geometry` from src and diffDst (TensorInfos of the backend) as a new tensor. */
type OnDevice = (geometry: FilterGradientGeometry, src: TensorInfo, diffDst: TensorInfo) => Tensor;

/**
 * A kernel of either op built from tfjs ops and the backend's own kernels: geometry once (it
 * throws every input error, the same as on cpu), then `compute` on the device: no value is read
 * back.
 */
function onDeviceKernel(op: OpName, backendName: string, compute: OnDevice): KernelFunc {
  return ({inputs, backend: anyBackend, attrs}): TensorInfo => {
    const backend = anyBackend as KernelBackend;
    const geometry = geometryOfKernelCall(op, inputs, backend, attrs);
    // Inputs another backend holds are copied here, never moved (see src/kernel_inputs.ts).
    const srcCopy = copyOfForeignInput(inputs[geometry.src.name]!, backend);
    const diffDstCopy = copyOfForeignInput(inputs[geometry.diffDst.name]!, backend);
    try {
      const result = compute(geometry, srcCopy ?? inputs[geometry.src.name]!, diffDstCopy ?? inputs[geometry.diffDst.name]!);
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

/**
 * Kernel configs of `op` under each of its names for `backendName` that always run the
 * canonical composite of src/composite, in chunks under the budget of the
 * CONV_BACKPROP_FILTERS_CHUNK_BYTES flag (the test suite registers them on a cpu clone,
 * `cpu-composite`, to test the composite alone).
 */
export function compositeKernelConfigs(op: OpName, backendName: string): KernelConfig[] {
  return kernelConfigsFor(op, backendName, onDeviceKernel(op, backendName, (geometry, src, diffDst) => {
    const budget = chunkBudgetBytes(op);
    reportPath(geometry, 'composite');
    return compositeFilterGradient(geometry, src, diffDst, budget);
  }), 'built-on-tfjs');
}

/**
 * Kernel configs of `op` under each of its names for `backendName` that run the backend's own
 * filter-gradient kernel (Conv2DBackpropFilter, DepthwiseConv2dNativeBackpropFilter,
 * Conv3DBackpropFilterV2) where it computes the problem exactly, and the composite elsewhere
 * (src/native/native_plan.ts decides, per call).
 */
export function nativeOrCompositeKernelConfigs(op: OpName, backendName: string): KernelConfig[] {
  return kernelConfigsFor(
      op, backendName,
      onDeviceKernel(op, backendName, (geometry, src, diffDst) => routedFilterGradient(geometry, src, diffDst, backendName)),
      'built-on-tfjs');
}

/**
 * The backends the package registers the native-or-composite kernels for: tfjs-node's
 * `tensorflow`. Registration does not load its package.
 */
export const NATIVE_OR_COMPOSITE_BACKENDS = Object.freeze(['tensorflow'] as const);

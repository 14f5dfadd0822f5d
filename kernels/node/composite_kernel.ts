import {dispose} from '@tensorflow/tfjs-core';
import type {KernelBackend, KernelConfig, KernelFunc, TensorInfo} from '@tensorflow/tfjs-core';

import {copyOfForeignInput, geometryOfKernelCall} from '../../src/kernel_inputs';
import {kernelConfigsFor, OpName} from '../../src/names';
import type {FilterGradientGeometry} from '../../src/geometry';
import {computeFilterGradient} from '../host/filter_gradient';
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
    // Inputs another backend holds are copied here, never moved (see src/kernel_inputs.ts).
    const srcCopy = copyOfForeignInput(inputs[geometry.src.name]!, backend);
    const diffDstCopy = copyOfForeignInput(inputs[geometry.diffDst.name]!, backend);
    const src = srcCopy ?? inputs[geometry.src.name]!;
    const diffDst = diffDstCopy ?? inputs[geometry.diffDst.name]!;
    let values: Float32Array;
    try {
      values = hasNonFiniteFacingPadding(geometry, backend, diffDst) ?
          computeFilterGradient(geometry, backend.readSync(src.dataId) as Float32Array,
                                backend.readSync(diffDst.dataId) as Float32Array) :
          compositeFilterGradient(geometry, src, diffDst, budget);
    } finally {
      dispose([srcCopy, diffDstCopy].filter(copy => copy !== undefined));
    }
    const shape = [...geometry.filterShape];
    return {dataId: backend.write(values, shape, 'float32'), shape, dtype: 'float32'};
  };
}

/**
 * The composite multiplies the zeros it pads src with by diffDst inside its matMul, where
 * DESIGN.md §2 has no term at all: 0 · ±Infinity or 0 · NaN would turn a finite sum into NaN.
 * So a padded problem whose diffDst holds a non-finite value takes the exact loop of the cpu
 * kernel instead (on host copies; such data is rare and the scan is one pass over diffDst).
 */
function hasNonFiniteFacingPadding(geometry: FilterGradientGeometry, backend: KernelBackend, diffDst: TensorInfo) {
  if (!geometry.axes.some(axis => axis.padBegin > 0 || axis.padEnd > 0)) return false;
  return !(backend.readSync(diffDst.dataId) as Float32Array).every(Number.isFinite);
}

/** Kernel configs of `op` under each of its names for `backendName`. */
export function compositeKernelConfigs(op: OpName, backendName: string): KernelConfig[] {
  return kernelConfigsFor(op, backendName, compositeKernel(op));
}

/**
 * The backends the package registers the composite kernels for: tfjs-node's `tensorflow` (whose
 * native Conv2DBackpropFilter cannot carry the spec). Registration does not load its package.
 */
export const COMPOSITE_BACKENDS = Object.freeze(['tensorflow'] as const);

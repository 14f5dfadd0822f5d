import type {KernelBackend, KernelConfig, KernelFunc, TensorInfo} from '@tensorflow/tfjs-core';

import {geometryOfKernelCall} from '../../src/kernel_inputs';
import {kernelConfigsFor, OpName} from '../../src/names';
import {computeFilterGradient} from './filter_gradient';

/**
 * The cpu kernel of either op: geometry once, then the canonical loop over the tensors' own
 * typed arrays (readSync on the cpu backend hands them over without a copy).
 */
function filterGradientKernel(op: OpName): KernelFunc {
  return ({inputs, backend, attrs}): TensorInfo => {
    const cpu = backend as KernelBackend;
    const geometry = geometryOfKernelCall(op, inputs, cpu, attrs);
    const src = cpu.readSync(inputs[geometry.src.name]!.dataId) as Float32Array;
    const diffDst = cpu.readSync(inputs[geometry.diffDst.name]!.dataId) as Float32Array;
    const values = computeFilterGradient(geometry, src, diffDst);
    const shape = [...geometry.filterShape];
    return {dataId: cpu.write(values, shape, 'float32'), shape, dtype: 'float32'};
  };
}

/** Kernel configs of `op` under each of its names for the cpu backend. */
export function cpuKernelConfigs(op: OpName): KernelConfig[] {
  return kernelConfigsFor(op, 'cpu', filterGradientKernel(op));
}

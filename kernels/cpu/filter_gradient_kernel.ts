import type {KernelBackend, KernelConfig, KernelFunc, TensorInfo} from '@tensorflow/tfjs-core';

import {geometryOfKernelCall} from '../../src/kernel_inputs';
import {kernelConfigsFor, OpName} from '../../src/names';
import {reportPath} from '../../src/verbose';
import {computeFilterGradient} from '../host/filter_gradient';
import {computeFilterGradientSimd, describeSimdPlan, wasmSimdEnabled} from '../host/simd/simd_filter_gradient';

/**
 * Which implementation a cpu kernel runs: 'fastest' is the WebAssembly SIMD micro-kernels (on
 * the threads CONV_BACKPROP_FILTERS_THREADS allows, see docs/threads.md) when the engine has
 * them and the flag CONV_BACKPROP_FILTERS_WASM_SIMD allows, else the TypeScript
 * loops; 'loops' always runs the loops (the test oracle of the SIMD path).
 */
export type CpuPath = 'fastest'|'loops';

/**
 * The cpu kernel of either op: geometry once, then the canonical computation over the tensors'
 * own typed arrays (readSync on the cpu backend hands them over without a copy).
 */
function filterGradientKernel(op: OpName, path: CpuPath): KernelFunc {
  return ({inputs, backend, attrs}): TensorInfo => {
    const cpu = backend as KernelBackend;
    const geometry = geometryOfKernelCall(op, inputs, cpu, attrs);
    const src = cpu.readSync(inputs[geometry.src.name]!.dataId) as Float32Array;
    const diffDst = cpu.readSync(inputs[geometry.diffDst.name]!.dataId) as Float32Array;
    const useSimd = path === 'fastest' && geometry.batch > 0 && wasmSimdEnabled();
    const simd = useSimd ? computeFilterGradientSimd(geometry, src, diffDst) : null;
    let values: Float32Array;
    if (simd !== null) {
      reportPath(geometry, describeSimdPlan(simd.plan));
      values = simd.values;
    } else {
      reportPath(geometry, 'loops');
      values = computeFilterGradient(geometry, src, diffDst);
    }
    const shape = [...geometry.filterShape];
    return {dataId: cpu.write(values, shape, 'float32'), shape, dtype: 'float32'};
  };
}

/** Kernel configs of `op` under each of its names for a cpu backend (`cpu` unless told). */
export function cpuKernelConfigs(op: OpName, backendName = 'cpu', path: CpuPath = 'fastest'): KernelConfig[] {
  return kernelConfigsFor(op, backendName, filterGradientKernel(op, path));
}

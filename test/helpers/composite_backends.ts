import {MathBackendCPU} from '@tensorflow/tfjs-backend-cpu';
import * as tf from '@tensorflow/tfjs-core';

import {cpuKernelConfigs} from '../../kernels/cpu/filter_gradient_kernel';
import {compositeKernelConfigs} from '../../kernels/node/filter_gradient_kernel';
import {ConvolutionBackpropFilters, ConvTransposeBackpropFilters, KERNEL_ALIASES, OpName} from '../../src/names';

/**
 * 'cpu-composite': a second cpu backend (its own MathBackendCPU) on which every cpu kernel is
 * registered again except this package's, which are the composite (node/wasm) kernels instead.
 * The composite kernel's ops then run on tfjs's plain cpu kernels, so its function is tested
 * without tfjs-node or wasm. Registered with a low priority: never picked unless asked for.
 */
export const CPU_COMPOSITE = 'cpu-composite';

export function registerCpuCompositeBackend(): void {
  registerCpuClone(CPU_COMPOSITE, op => compositeKernelConfigs(op, CPU_COMPOSITE));
}

/**
 * 'cpu-loops': a cpu backend whose filter-gradient kernels always run the TypeScript loops, so
 * the suite covers both paths of the cpu kernel ('cpu' itself runs the WebAssembly SIMD one).
 */
export const CPU_LOOPS = 'cpu-loops';

export function registerCpuLoopsBackend(): void {
  registerCpuClone(CPU_LOOPS, op => cpuKernelConfigs(op, CPU_LOOPS, 'loops'));
}

/**
 * A backend this package has no kernel for, as a user's own or a future tfjs backend is: a
 * MathBackendCPU with tfjs's cpu kernels alone, less the tfjs kernels named in `without` (a
 * backend may lack some of tfjs's data-gradient kernels, as wasm lacks
 * DepthwiseConv2dNativeBackpropInput). The op functions and the drop-in gradients must then run
 * the composite of tfjs ops (src/composite).
 */
export function registerForeignCpuBackend(name: string, without: readonly string[] = []): void {
  registerCpuClone(name, () => [], without);
}

/** A second MathBackendCPU with every cpu kernel but this package's (and `without`), which `ours` provides. */
function registerCpuClone(name: string, ours: (op: OpName) => tf.KernelConfig[], without: readonly string[] = []): void {
  if (tf.findBackendFactory(name) != null) return;  // registered already
  tf.registerBackend(name, () => new MathBackendCPU(), -1);
  const ourNames = new Set<string>([...KERNEL_ALIASES[ConvolutionBackpropFilters], ...KERNEL_ALIASES[ConvTransposeBackpropFilters]]);
  for (const config of tf.getKernelsForBackend('cpu')) {
    if (!ourNames.has(config.kernelName) && !without.includes(config.kernelName)) {
      tf.registerKernel({...config, backendName: name});
    }
  }
  for (const op of [ConvolutionBackpropFilters, ConvTransposeBackpropFilters] as const) {
    for (const config of ours(op)) tf.registerKernel(config);
  }
}

import {MathBackendCPU} from '@tensorflow/tfjs-backend-cpu';
import * as tf from '@tensorflow/tfjs-core';

import {compositeKernelConfigs} from '../../kernels/node/composite_kernel';
import {ConvolutionBackpropFilters, ConvTransposeBackpropFilters, KERNEL_ALIASES} from '../../src/names';

/**
 * 'cpu-composite': a second cpu backend (its own MathBackendCPU) on which every cpu kernel is
 * registered again except this package's, which are the composite (node/wasm) kernels instead.
 * The composite kernel's ops then run on tfjs's plain cpu kernels, so its function is tested
 * without tfjs-node or wasm. Registered with a low priority: never picked unless asked for.
 */
export const CPU_COMPOSITE = 'cpu-composite';

export function registerCpuCompositeBackend(): void {
  if (tf.findBackendFactory(CPU_COMPOSITE) != null) return;  // registered already
  tf.registerBackend(CPU_COMPOSITE, () => new MathBackendCPU(), -1);
  const ours = new Set<string>([...KERNEL_ALIASES[ConvolutionBackpropFilters], ...KERNEL_ALIASES[ConvTransposeBackpropFilters]]);
  for (const config of tf.getKernelsForBackend('cpu')) {
    if (!ours.has(config.kernelName)) tf.registerKernel({...config, backendName: CPU_COMPOSITE});
  }
  for (const op of [ConvolutionBackpropFilters, ConvTransposeBackpropFilters] as const) {
    for (const config of compositeKernelConfigs(op, CPU_COMPOSITE)) tf.registerKernel(config);
  }
}

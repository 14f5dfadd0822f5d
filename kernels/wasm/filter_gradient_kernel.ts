import type {KernelConfig, KernelFunc, TensorInfo} from '@tensorflow/tfjs-core';
import type {BackendWasm} from '@tensorflow/tfjs-backend-wasm';

import {geometryOfKernelCall, readWhereItLives} from '../../src/kernel_inputs';
import {kernelConfigsFor, OpName} from '../../src/names';
import {reportPath} from '../../src/verbose';
import {computeFilterGradient} from '../host/filter_gradient';
import {computeFilterGradientSimd, describeSimdPlan, wasmSimdEnabled} from '../host/simd/simd_filter_gradient';

/**
 * The kernel of either op on tfjs-backend-wasm: geometry once, then the cpu kernel's canonical
 * computation (kernels/host) over views on the backend's own heap.
 *
 * tfjs-backend-wasm keeps every tensor's bytes in its Emscripten module's memory, at
 * `dataIdMap.get(dataId).memoryOffset`. The kernel allocates the result there first
 * (`makeOutput`: a malloc that may grow, and so replace, that memory's buffer), then takes
 * Float32Array views on the heap for input, outputDelta and the result. The WebAssembly SIMD
 * micro-kernels copy each sample from those views straight into their own module's memory (in
 * the channels-last, group-padded layout they read) and write the gradient into the result's
 * view (on worker threads too, see docs/threads.md: the calling thread packs the samples into
 * the shared memory the workers read); where SIMD is missing, turned off (CONV_BACKPROP_FILTERS_WASM_SIMD) or the problem is
 * too large for that module, the TypeScript loops read the same views. No tensor goes through a
 * JavaScript array, and nothing is allocated on the backend's heap but the result.
 *
 * An input another backend holds is read where it lives (as the composite kernel does, see
 * src/kernel_inputs.ts), not moved here. The backend package is never loaded: its type only.
 */
function filterGradientKernel(op: OpName): KernelFunc {
  return ({inputs, backend: anyBackend, attrs}): TensorInfo => {
    const backend = anyBackend as WasmBackend;
    const geometry = geometryOfKernelCall(op, inputs, backend, attrs);
    const src = inputs[geometry.src.name]!;
    const diffDst = inputs[geometry.diffDst.name]!;
    const shape = [...geometry.filterShape];
    const output = backend.makeOutput(shape, 'float32');
    // Views only after makeOutput: a heap that grew has a new buffer and the old one is detached.
    const result = heapView(backend, output);
    const srcValues = valuesOf(src, backend);
    const diffDstValues = valuesOf(diffDst, backend);
    const useSimd = geometry.batch > 0 && wasmSimdEnabled();
    const simd = useSimd ? computeFilterGradientSimd(geometry, srcValues, diffDstValues, result) : null;
    if (simd !== null) {
      reportPath(geometry, describeSimdPlan(simd.plan));
    } else {
      reportPath(geometry, 'loops');
      computeFilterGradient(geometry, srcValues, diffDstValues, result);
    }
    return output;
  };
}

/**
 * What the kernel uses of BackendWasm. Its Emscripten module is typed through @types/emscripten,
 * which tfjs-backend-wasm does not depend on, so the heap is spelled out here.
 */
type WasmBackend = BackendWasm & {readonly wasm: {readonly HEAPU8: Uint8Array}};

/** A float32 view on the backend's heap of a tensor it holds. */
function heapView(backend: WasmBackend, tensor: TensorInfo): Float32Array {
  const {memoryOffset} = backend.dataIdMap.get(tensor.dataId);
  const elements = tensor.shape.reduce((a, b) => a * b, 1);
  return new Float32Array(backend.wasm.HEAPU8.buffer, memoryOffset, elements);
}

/** The heap view of an input the backend holds, else its values read on the backend holding it. */
function valuesOf(tensor: TensorInfo, backend: WasmBackend): Float32Array {
  return backend.dataIdMap.has(tensor.dataId) ? heapView(backend, tensor) :
                                                readWhereItLives(tensor, backend) as Float32Array;
}

/** Kernel configs of `op` under each of its names for tfjs-backend-wasm (`wasm` unless told). */
export function wasmKernelConfigs(op: OpName, backendName = 'wasm'): KernelConfig[] {
  return kernelConfigsFor(op, backendName, filterGradientKernel(op));
}

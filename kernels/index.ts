/**
 * The package entry: registers every kernel of this package for every supported backend, then
 * exposes the public API. Registration loads no backend package: a kernel works on the backend
 * object tfjs hands it.
 *
 * ```ts
 * import {convolutionBackpropFilters, fromSpecAttrs} from 'tfjs-conv-backprop-filters';
 * ```
 *
 * @module tfjs-conv-backprop-filters
 */
import {registerKernel} from '@tensorflow/tfjs-core';

import {registerChunkBytesFlag} from '../src/composite/chunk_budget';
import {registerNativePaddedFlag} from '../src/native/native_plan';
import {registerFilterGradientGradients} from '../src/training/gradients';
import {registerMissingTfjsGradients} from '../src/training/tfjs_gradients';

import {convolutionBackpropFiltersCpuConfigs} from './cpu/ConvolutionBackpropFilters';
import {convTransposeBackpropFiltersCpuConfigs} from './cpu/ConvTransposeBackpropFilters';
import {registerWasmSimdFlag} from './host/simd/simd_filter_gradient';
import {convolutionBackpropFiltersNodeConfigs} from './node/ConvolutionBackpropFilters';
import {convTransposeBackpropFiltersNodeConfigs} from './node/ConvTransposeBackpropFilters';
import {convolutionBackpropFiltersWasmConfigs} from './wasm/ConvolutionBackpropFilters';
import {convTransposeBackpropFiltersWasmConfigs} from './wasm/ConvTransposeBackpropFilters';
import {convolutionBackpropFiltersWebglConfigs} from './webgl/ConvolutionBackpropFilters';
import {convTransposeBackpropFiltersWebglConfigs} from './webgl/ConvTransposeBackpropFilters';
import {registerMultiTargetFlag} from './webgl/filter_gradient_kernel';
import {registerVerboseFlag} from '../src/verbose';
import {convolutionBackpropFiltersWebgpuConfigs} from './webgpu/ConvolutionBackpropFilters';
import {convTransposeBackpropFiltersWebgpuConfigs} from './webgpu/ConvTransposeBackpropFilters';

// Every kernel call prints what ran when the tfjs flag CONV_BACKPROP_FILTERS_VERBOSE is on.
registerVerboseFlag();
// The cpu and wasm kernels run WebAssembly SIMD micro-kernels where the engine has them, on
// worker threads where the runtime allows; tfjs flags switch them to the TypeScript loops, to
// the plain (not relaxed) SIMD build and set the thread count.
registerWasmSimdFlag();
// The webgl kernels draw several render targets at once on WebGL 2; a tfjs flag turns that off.
registerMultiTargetFlag();
for (const config of [
       ...convolutionBackpropFiltersCpuConfigs,
       ...convTransposeBackpropFiltersCpuConfigs,
       ...convolutionBackpropFiltersWebglConfigs,
       ...convTransposeBackpropFiltersWebglConfigs,
       ...convolutionBackpropFiltersWebgpuConfigs,
       ...convTransposeBackpropFiltersWebgpuConfigs,
     ]) {
  registerKernel(config);
}

// tfjs-backend-wasm's `wasm`: the cpu kernel's computation over views on the backend's heap.
for (const config of [...convolutionBackpropFiltersWasmConfigs, ...convTransposeBackpropFiltersWasmConfigs]) {
  registerKernel(config);
}

// tfjs-node's `tensorflow`: its own filter-gradient kernels where they compute the problem, the
// composite elsewhere (kernels/node); the tfjs flags that bound the composite's memory per chunk
// and let the native kernels take padded problems.
registerChunkBytesFlag();
registerNativePaddedFlag();
for (const config of [...convolutionBackpropFiltersNodeConfigs, ...convTransposeBackpropFiltersNodeConfigs]) {
  registerKernel(config);
}

// Gradients of both kernels (second order through them; see src/training/gradients.ts).
registerFilterGradientGradients();
// tfjs has no gradient for its Conv3DBackpropInputV2 (tf.conv3dTranspose): one from our ops.
registerMissingTfjsGradients();

export * from '../src/index';
export {CONV_BACKPROP_FILTERS_VERBOSE} from '../src/verbose';
export {
  CONV_BACKPROP_FILTERS_THREADS, CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP,
  CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD,
  CONV_BACKPROP_FILTERS_WASM_SIMD, simdThreadsReady, stopSimdThreads,
} from './host/simd/simd_filter_gradient';
export {CONV_BACKPROP_FILTERS_CHUNK_BYTES} from '../src/composite/chunk_budget';
export {CONV_BACKPROP_FILTERS_NATIVE_PADDED} from '../src/native/native_plan';
export {CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET} from './webgl/filter_gradient_kernel';

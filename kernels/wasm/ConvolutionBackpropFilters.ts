import {ConvolutionBackpropFilters} from '../../src/names';
import {wasmKernelConfigs} from './filter_gradient_kernel';

/** ConvolutionBackpropFilters (and ConvolutionBackwardWeights) on tfjs-backend-wasm. */
export const convolutionBackpropFiltersWasmConfigs = wasmKernelConfigs(ConvolutionBackpropFilters);

import {ConvTransposeBackpropFilters} from '../../src/names';
import {wasmKernelConfigs} from './filter_gradient_kernel';

/** ConvTransposeBackpropFilters (and ConvTransposeBackwardWeights) on tfjs-backend-wasm. */
export const convTransposeBackpropFiltersWasmConfigs = wasmKernelConfigs(ConvTransposeBackpropFilters);

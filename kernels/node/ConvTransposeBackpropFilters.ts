import {ConvTransposeBackpropFilters} from '../../src/names';
import {COMPOSITE_BACKENDS, compositeKernelConfigs} from './composite_kernel';

/** ConvTransposeBackpropFilters (and ConvTransposeBackwardWeights) on the tensorflow and wasm backends. */
export const convTransposeBackpropFiltersNodeConfigs =
    COMPOSITE_BACKENDS.flatMap(backendName => compositeKernelConfigs(ConvTransposeBackpropFilters, backendName));

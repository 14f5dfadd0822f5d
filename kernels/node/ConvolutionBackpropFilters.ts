import {ConvolutionBackpropFilters} from '../../src/names';
import {COMPOSITE_BACKENDS, compositeKernelConfigs} from './composite_kernel';

/** ConvolutionBackpropFilters (and ConvolutionBackwardWeights) on the tensorflow and wasm backends. */
export const convolutionBackpropFiltersNodeConfigs =
    COMPOSITE_BACKENDS.flatMap(backendName => compositeKernelConfigs(ConvolutionBackpropFilters, backendName));

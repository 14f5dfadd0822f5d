import {ConvolutionBackpropFilters} from '../../src/names';
import {NATIVE_OR_COMPOSITE_BACKENDS, nativeOrCompositeKernelConfigs} from './filter_gradient_kernel';

/** ConvolutionBackpropFilters (and ConvolutionBackwardWeights) on the tensorflow backend. */
export const convolutionBackpropFiltersNodeConfigs =
    NATIVE_OR_COMPOSITE_BACKENDS.flatMap(backendName => nativeOrCompositeKernelConfigs(ConvolutionBackpropFilters, backendName));

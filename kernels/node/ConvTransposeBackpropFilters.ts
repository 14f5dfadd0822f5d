import {ConvTransposeBackpropFilters} from '../../src/names';
import {NATIVE_OR_COMPOSITE_BACKENDS, nativeOrCompositeKernelConfigs} from './filter_gradient_kernel';

/** ConvTransposeBackpropFilters (and ConvTransposeBackwardWeights) on the tensorflow backend. */
export const convTransposeBackpropFiltersNodeConfigs =
    NATIVE_OR_COMPOSITE_BACKENDS.flatMap(backendName => nativeOrCompositeKernelConfigs(ConvTransposeBackpropFilters, backendName));

import {ConvTransposeBackpropFilters} from '../../src/names';
import {webglKernelConfigs} from './filter_gradient_kernel';

/** ConvTransposeBackpropFilters (and ConvTransposeBackwardWeights) on the webgl backend. */
export const convTransposeBackpropFiltersWebglConfigs = webglKernelConfigs(ConvTransposeBackpropFilters);

import {ConvolutionBackpropFilters} from '../../src/names';
import {webglKernelConfigs} from './filter_gradient_kernel';

/** ConvolutionBackpropFilters (and ConvolutionBackwardWeights) on the webgl backend. */
export const convolutionBackpropFiltersWebglConfigs = webglKernelConfigs(ConvolutionBackpropFilters);

import {ConvolutionBackpropFilters} from '../../src/names';
import {webgpuKernelConfigs} from './filter_gradient_kernel';

/** ConvolutionBackpropFilters (and ConvolutionBackwardWeights) on the webgpu backend. */
export const convolutionBackpropFiltersWebgpuConfigs = webgpuKernelConfigs(ConvolutionBackpropFilters);

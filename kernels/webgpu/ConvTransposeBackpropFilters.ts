import {ConvTransposeBackpropFilters} from '../../src/names';
import {webgpuKernelConfigs} from './filter_gradient_kernel';

/** ConvTransposeBackpropFilters (and ConvTransposeBackwardWeights) on the webgpu backend. */
export const convTransposeBackpropFiltersWebgpuConfigs = webgpuKernelConfigs(ConvTransposeBackpropFilters);

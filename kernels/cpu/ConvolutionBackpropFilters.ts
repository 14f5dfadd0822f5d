import {ConvolutionBackpropFilters} from '../../src/names';
import {cpuKernelConfigs} from './filter_gradient_kernel';

/** ConvolutionBackpropFilters (and ConvolutionBackwardWeights) on the cpu backend. */
export const convolutionBackpropFiltersCpuConfigs = cpuKernelConfigs(ConvolutionBackpropFilters);

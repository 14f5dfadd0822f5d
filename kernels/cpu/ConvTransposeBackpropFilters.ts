import {ConvTransposeBackpropFilters} from '../../src/names';
import {cpuKernelConfigs} from './filter_gradient_kernel';

/** ConvTransposeBackpropFilters (and ConvTransposeBackwardWeights) on the cpu backend. */
export const convTransposeBackpropFiltersCpuConfigs = cpuKernelConfigs(ConvTransposeBackpropFilters);

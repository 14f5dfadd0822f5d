/**
 * The package entry: registers every kernel of this package for every supported backend, then
 * exposes the public API. Registration loads no backend package: a kernel works on the backend
 * object tfjs hands it.
 */
import {registerKernel} from '@tensorflow/tfjs-core';

import {convolutionBackpropFiltersCpuConfigs} from './cpu/ConvolutionBackpropFilters';
import {convTransposeBackpropFiltersCpuConfigs} from './cpu/ConvTransposeBackpropFilters';
import {convolutionBackpropFiltersWebglConfigs} from './webgl/ConvolutionBackpropFilters';
import {convTransposeBackpropFiltersWebglConfigs} from './webgl/ConvTransposeBackpropFilters';

for (const config of [
       ...convolutionBackpropFiltersCpuConfigs,
       ...convTransposeBackpropFiltersCpuConfigs,
       ...convolutionBackpropFiltersWebglConfigs,
       ...convTransposeBackpropFiltersWebglConfigs,
     ]) {
  registerKernel(config);
}

export * from '../src/index';

import * as tf from '@tensorflow/tfjs-core';
import type {GradConfig, NamedAttrMap} from '@tensorflow/tfjs-core';

import {convolutionBackpropFilters} from '../ops';
import {convolution} from './forward_ops';

/**
 * tfjs 4.x registers no gradient for its own Conv3DBackpropInputV2 kernel (tf.conv3dTranspose
 * and the data gradient of tf.conv3d), so neither is differentiable there. Its output
 * y = conv3dTranspose(dy, W) (NDHWC, filter (K…, C, O) = our XIO, pad 'same' = our same_upper,
 * or 'valid') is the data gradient of the convolution x → dy; with upstream G shaped like y:
 *   d/ddy = convolution(G, W), d/dfilter = ConvolutionBackpropFilters(G, dy).
 * Registered only when no gradient is registered for the kernel yet.
 */
const conv3dBackpropInputGradient: GradConfig = {
  kernelName: 'Conv3DBackpropInputV2',
  inputsToSave: ['dy', 'filter'],
  gradFunc: (upstream: tf.Tensor | tf.Tensor[], saved: tf.Tensor[], attrs: NamedAttrMap) => {
    const [dy, filter] = saved;
    const {strides, pad} = attrs as unknown as {strides: number[] | number; pad: 'same' | 'valid' | number};
    const G = upstream as tf.Tensor;
    const stridesList = typeof strides === 'number' ? [strides, strides, strides] : [...strides];
    const padding = typeof pad === 'number' ?
        {padsBegin: [pad, pad, pad], padsEnd: [pad, pad, pad]} :
        {autoPad: pad === 'same' ? 'same_upper' as const : 'valid' as const};
    const common = {strides: stridesList, ...padding, dataFormat: 'NXC' as const, filterFormat: 'XIO' as const};
    return {
      dy: () => convolution(G, filter, common),
      filter: () => convolutionBackpropFilters(G, dy, {...common, filterShape: [...filter.shape]}),
    };
  },
};

/** Registers the gradients tfjs lacks for its own kernels (see above), where none is registered. */
export function registerMissingTfjsGradients(): void {
  if (tf.getGradient(conv3dBackpropInputGradient.kernelName) === undefined) tf.registerGradient(conv3dBackpropInputGradient);
}

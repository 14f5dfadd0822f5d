import * as tf from '@tensorflow/tfjs-core';

import {backpropInputGradientConfig} from './dropin_gradients';

/**
 * tfjs 4.x registers no gradient for its own Conv3DBackpropInputV2 kernel (tf.conv3dTranspose
 * and the data gradient of tf.conv3d), so neither is differentiable there. The package entry
 * registers the drop-in one (d/ddy = tf.conv3d of the upstream, d/dfilter =
 * ConvolutionBackpropFilters; see dropin_gradients.ts) when no gradient is registered for the
 * kernel yet; the other drop-in gradients replace tfjs's own, so they wait for an explicit
 * `import 'tfjs-conv-backprop-filters/gradients'`.
 */
export function registerMissingTfjsGradients(): void {
  if (tf.getGradient('Conv3DBackpropInputV2') === undefined) {
    tf.registerGradient(backpropInputGradientConfig('Conv3DBackpropInputV2'));
  }
}

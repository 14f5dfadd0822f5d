/**
 * The `tfjs-conv-backprop-filters/gradients` entry: importing it registers this package's kernels
 * (through the package entry, shared with `tfjs-conv-backprop-filters` rather than bundled again)
 * and installs the drop-in gradients for tfjs's own convolutions, so that tf.layers conv1d,
 * conv2d, conv3d, separableConv2d and depthwiseConv2d with dilationRate > 1, and conv3dTranspose,
 * train with model.fit. See src/training/dropin_gradients.ts.
 *
 * ```ts
 * import * as tf from '@tensorflow/tfjs';
 * import 'tfjs-conv-backprop-filters/gradients';
 * ```
 *
 * @module tfjs-conv-backprop-filters/gradients
 */
import {installDropInGradients} from './index';

installDropInGradients();

export {DROP_IN_GRADIENT_KERNELS, dropInGradientsInstalled, installDropInGradients, uninstallDropInGradients} from './index';

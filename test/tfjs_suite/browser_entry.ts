/** The karma entry of tfjs's own convolution tests on webgl: the set-up, then the test files. */
import './browser_setup';
import '@tensorflow/tfjs-core/dist/ops/conv1d_test';
import '@tensorflow/tfjs-core/dist/ops/conv2d_test';
import '@tensorflow/tfjs-core/dist/ops/conv2d_separable_test';
import '@tensorflow/tfjs-core/dist/ops/conv2d_transpose_test';
import '@tensorflow/tfjs-core/dist/ops/conv3d_test';
import '@tensorflow/tfjs-core/dist/ops/conv3d_transpose_test';
import '@tensorflow/tfjs-core/dist/ops/depthwise_conv2d_test';
import '@tensorflow/tfjs-core/dist/ops/fused/fused_conv2d_test';
import '@tensorflow/tfjs-core/dist/ops/fused/fused_depthwise_conv2d_test';

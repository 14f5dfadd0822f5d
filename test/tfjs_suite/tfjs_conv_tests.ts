/** tfjs's own convolution test files, for the browser entries (after their environment's set-up). */
import '@tensorflow/tfjs-core/dist/ops/conv1d_test';
import '@tensorflow/tfjs-core/dist/ops/conv2d_test';
import '@tensorflow/tfjs-core/dist/ops/conv2d_separable_test';
import '@tensorflow/tfjs-core/dist/ops/conv2d_transpose_test';
import '@tensorflow/tfjs-core/dist/ops/conv3d_test';
import '@tensorflow/tfjs-core/dist/ops/conv3d_transpose_test';
import '@tensorflow/tfjs-core/dist/ops/depthwise_conv2d_test';
import '@tensorflow/tfjs-core/dist/ops/fused/fused_conv2d_test';
import '@tensorflow/tfjs-core/dist/ops/fused/fused_depthwise_conv2d_test';

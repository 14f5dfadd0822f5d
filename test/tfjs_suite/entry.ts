/**
 * The bundle entry of one run of tfjs's own convolution tests (bundled by run.ts): the set-up,
 * then tfjs-core's compiled test files, in this order.
 */
import './setup';
import '@tensorflow/tfjs-core/dist/ops/conv1d_test';
import '@tensorflow/tfjs-core/dist/ops/conv2d_test';
import '@tensorflow/tfjs-core/dist/ops/conv2d_separable_test';
import '@tensorflow/tfjs-core/dist/ops/conv2d_transpose_test';
import '@tensorflow/tfjs-core/dist/ops/conv3d_test';
import '@tensorflow/tfjs-core/dist/ops/conv3d_transpose_test';
import '@tensorflow/tfjs-core/dist/ops/depthwise_conv2d_test';
import '@tensorflow/tfjs-core/dist/ops/fused/fused_conv2d_test';
import '@tensorflow/tfjs-core/dist/ops/fused/fused_depthwise_conv2d_test';

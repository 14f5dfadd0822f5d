import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import '../../kernels/index';

// Silences tfjs's "install tfjs-node" banner, which is noise in test output.
tf.env().set('IS_TEST', true);

beforeAll(async () => {
  await tf.setBackend('cpu');
});

import * as tf from '@tensorflow/tfjs-core';

import {TENSORFLOW_BACKEND} from './backends';

/**
 * Where @tensorflow/tfjs-node does not load (its install downloads libtensorflow, which not every
 * machine can), the `tensorflow` specs run on a stand-in backend made of tfjs-cpu's kernels
 * (test/helpers/tensorflow_test_backend.ts), not on TensorFlow's own: this spec says so in the
 * counts, as a pending spec with the reason. With REQUIRE_TFJS_NODE=1, for machines where
 * tfjs-node installs, its absence fails the suite instead.
 */
describe('tensorflow backend (@tensorflow/tfjs-node)', () => {
  it('loads, and every backend spec runs on it', () => {
    if (!TENSORFLOW_BACKEND.loaded) {
      const why = `@tensorflow/tfjs-node does not load here (${TENSORFLOW_BACKEND.reason})`;
      if (process.env.REQUIRE_TFJS_NODE === '1') {
        fail(`REQUIRE_TFJS_NODE=1, but ${why}`);
        return;
      }
      pending(`${why}: the tensorflow specs ran on the stand-in backend of tfjs-cpu's kernels, not on TensorFlow's (REQUIRE_TFJS_NODE=1 makes this a failure)`);
    }
    expect(tf.findBackend('tensorflow')).withContext('the tensorflow backend tfjs-node registers').not.toBeNull();
  });
});

import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import '../../kernels/index';

// Silences tfjs's "install tfjs-node" banner, which is noise in test output.
tf.env().set('IS_TEST', true);

beforeAll(async () => {
  await tf.setBackend('cpu');
});

// One closing line in the plain "N passed, N failed, N skipped" form that CI logs are read for.
const counts = {passed: 0, failed: 0, skipped: 0};
jasmine.getEnv().addReporter({
  specDone(result) {
    if (result.status === 'passed') counts.passed++;
    else if (result.status === 'failed') counts.failed++;
    else counts.skipped++;
  },
  jasmineDone() {
    console.log(`\nnode: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  },
});

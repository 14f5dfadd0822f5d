import * as tf from '@tensorflow/tfjs-core';

import {installDropInGradients, uninstallDropInGradients} from '../../kernels/index';

/**
 * Installs the drop-in gradients for the enclosing describe only, on cpu: every spec file shares
 * one tfjs, and the other specs expect tfjs's own gradients.
 */
export function withDropInGradientsOnCpu(): void {
  beforeAll(async () => {
    await tf.setBackend('cpu');
    installDropInGradients();
  });
  afterAll(() => uninstallDropInGradients());
}

/**
 * tfjs's own convolution tests on webgl (see browser_setup.ts) with the flags of tfjs's webgl2
 * test environment; imported before the test files, whose describe blocks read the environments.
 */
import '@tensorflow/tfjs-backend-webgl';

import {setUpTfjsConvTests} from './browser_setup';

setUpTfjsConvTests('webgl', {WEBGL_VERSION: 2, WEBGL_CPU_FORWARD: false, WEBGL_SIZE_UPLOAD_UNIFORM: 0});

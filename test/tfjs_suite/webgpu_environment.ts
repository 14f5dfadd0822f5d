/**
 * tfjs's own convolution tests on webgpu (see browser_setup.ts) with the flags of tfjs's webgpu
 * test environment (tfjs-backend-webgpu/src/backend_webgpu_test_registry.ts); imported before the
 * test files, whose describe blocks read the environments.
 */
import '@tensorflow/tfjs-backend-webgpu';

import {setUpTfjsConvTests} from './browser_setup';

setUpTfjsConvTests('webgpu', {WEBGPU_CPU_FORWARD: false});

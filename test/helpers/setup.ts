import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import * as v8 from 'v8';
import '@tensorflow/tfjs-backend-wasm';
import {CONV_BACKPROP_FILTERS_THREADS, CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD, simdThreadsReady} from '../../kernels/index';
import {MICRO_KERNELS_RELAXED_WASM_BASE64} from '../../kernels/host/simd/micro_kernels_wasm.generated';

import {TENSORFLOW_BACKEND} from '../backends';
import {registerCpuCompositeBackend, registerCpuLoopsBackend} from './composite_backends';
import {registerTensorflowTestBackend} from './tensorflow_test_backend';

// Silences tfjs's "install tfjs-node" banner, which is noise in test output.
tf.env().set('IS_TEST', true);

// 'cpu-composite' (see test/backends.ts); 'wasm' gets its kernels from the package itself.
registerCpuCompositeBackend();
// 'cpu-loops': the cpu kernel's TypeScript loops ('cpu' runs its WebAssembly SIMD path).
registerCpuLoopsBackend();
// 'tensorflow': tfjs-node's when it loads, else the test backend of that name (see test/backends.ts).
if (!TENSORFLOW_BACKEND.loaded) registerTensorflowTestBackend();

/**
 * Whether this Node validates WebAssembly relaxed SIMD on its own (Node ≥ 21; Node 20 only behind
 * a V8 flag): the build a fresh process of this Node, such as the packed package's, runs by default.
 */
export const ENGINE_RELAXED_SIMD =
    WebAssembly.validate(Uint8Array.from(atob(MICRO_KERNELS_RELAXED_WASM_BASE64), c => c.charCodeAt(0)));
// Where Node needs the flag, it goes on before the package first compiles its relaxed build, so
// that the specs asking for that build (CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD true) run it here
// too. The rest of the suite runs the plain build on every Node, whose values are the same on
// every machine.
if (!ENGINE_RELAXED_SIMD) v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
tf.env().set(CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD, false);

// The SIMD path of the cpu and wasm kernels on two threads for every problem with two tasks or
// more, however small, whether threads have paid for it or not (test/threads.spec.ts compares 1,
// 2, 3 and 8 threads bitwise and checks the threshold's default and the adaptive choice); the
// workers are ready before the first spec.
export const SUITE_THREADS = 2;
tf.env().set(CONV_BACKPROP_FILTERS_THREADS, SUITE_THREADS);
tf.env().set(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, 0);
tf.env().set(CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, false);

beforeAll(async () => {
  await tf.setBackend('cpu');
  const threads = await simdThreadsReady();
  if (threads !== SUITE_THREADS) console.log(`\nnode: the SIMD path runs on ${threads} thread(s), not ${SUITE_THREADS}`);
});

// One closing line in the plain "N passed, N failed, N skipped" form that CI logs are read for,
// after one line saying so when the tensorflow backend could not be run.
const counts = {passed: 0, failed: 0, skipped: 0};
jasmine.getEnv().addReporter({
  specDone(result) {
    if (result.status === 'passed') counts.passed++;
    else if (result.status === 'failed') counts.failed++;
    else counts.skipped++;
  },
  jasmineDone() {
    if (!TENSORFLOW_BACKEND.loaded) {
      console.log(`\nnode: @tensorflow/tfjs-node does not load here (${
          TENSORFLOW_BACKEND.reason}); the tensorflow specs ran on the test backend of tfjs-cpu kernels`);
    }
    console.log(`\nnode ${process.version}, ${ENGINE_RELAXED_SIMD ? 'relaxed SIMD by default' : 'relaxed SIMD behind a V8 flag'}`);
    console.log(`node: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  },
});

import * as tf from '@tensorflow/tfjs-core';
import {MathBackendWebGL} from '@tensorflow/tfjs-backend-webgl';

/**
 * WEBGL_PACK and the flags whose defaults follow it (tfjs evaluates those once and caches them,
 * so switching packing between environments means setting them all).
 */
export function packing(on: boolean): Record<string, boolean> {
  const followers = [
    'NORMALIZATION', 'CLIP', 'DEPTHWISECONV', 'BINARY_OPERATIONS', 'UNARY_OPERATIONS', 'ARRAY_OPERATIONS',
    'IMAGE_OPERATIONS', 'REDUCE',
  ];
  return Object.fromEntries(
      [['WEBGL_PACK', on], ['WEBGL_LAZILY_UNPACK', on], ...followers.map(name => [`WEBGL_PACK_${name}`, on])]);
}

/** Registers tfjs's webgl kernels (this package's among them) for another webgl backend name. */
export function registerWebglKernels(backendName: string) {
  for (const kernel of tf.getKernelsForBackend('webgl')) tf.registerKernel({...kernel, backendName});
}

/**
 * Unregisters every kernel of `backendName` and removes the backend. The programs it compiled
 * stay in tfjs's program cache, which the backends of one WebGL version share with their
 * context (tfjs deletes them on dispose unless IS_TEST is set): later backends reuse those
 * whose source they would compile again.
 *
 * Each program has its own vertex array object, and the last one drawn stays bound; the
 * backend's GPGPUContext.dispose unbinds ELEMENT_ARRAY_BUFFER, which is state of the bound
 * vertex array, so that program would lose its index buffer and every later draw of it fail
 * (GL_INVALID_OPERATION, its output left as it was). Binding no vertex array first keeps the
 * programs whole.
 */
export function removeWebglBackend(backendName: string) {
  for (const kernel of tf.getKernelsForBackend(backendName)) tf.unregisterKernel(kernel.kernelName, backendName);
  const backend = tf.findBackend(backendName) as MathBackendWebGL | null;
  backend?.gpgpu.bindVertexArray(null);
  const isTest = tf.env().getBool('IS_TEST');
  tf.env().set('IS_TEST', true);
  try {
    tf.removeBackend(backendName);
  } finally {
    tf.env().set('IS_TEST', isTest);
  }
}

/**
 * Inside a describe block: before its specs, sets `flags` (and WEBGL_CPU_FORWARD off, so small
 * ops do not leave inputs on the cpu), registers a fresh webgl backend under `backendName` with
 * this package's webgl kernels and selects it; after each, checks that no GL call failed; after
 * them, removes it and restores the flags.
 */
export function useWebglBackend(backendName: string, flags: Record<string, number | boolean>) {
  const previousFlags: Record<string, number | boolean> = {};
  beforeAll(async () => {
    for (const [flag, value] of Object.entries({...flags, WEBGL_CPU_FORWARD: false})) {
      previousFlags[flag] = tf.env().get(flag) as number | boolean;
      tf.env().set(flag, value);
    }
    tf.registerBackend(backendName, () => new MathBackendWebGL());
    registerWebglKernels(backendName);
    expect(await tf.setBackend(backendName)).toBe(true);
  });

  // A draw that fails (a GL error) leaves its output as it was, usually zeros: say so where it
  // happens rather than as wrong values in every later spec.
  afterEach(() => {
    const gl = (tf.findBackend(backendName) as MathBackendWebGL).gpgpu.gl;
    expect(gl.getError()).withContext('WebGL error flag after this spec (0: no error)').toBe(gl.NO_ERROR);
  });

  afterAll(() => {
    removeWebglBackend(backendName);
    for (const [flag, value] of Object.entries(previousFlags)) tf.env().set(flag, value);
  });
}

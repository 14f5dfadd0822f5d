/**
 * removeWebglBackend keeps the programs a removed backend compiled in tfjs's shared program
 * cache: each must still draw on the backends that reuse it, including the one the removed
 * backend drew last (its vertex array was bound when the backend's context was disposed).
 */
import * as tf from '@tensorflow/tfjs-core';
import {MathBackendWebGL} from '@tensorflow/tfjs-backend-webgl';

import {registerWebglKernels, removeWebglBackend} from '../helpers/webgl_flags';

describe('webgl, programs kept across backends:', () => {
  let cpuForward: boolean;
  beforeAll(() => {
    cpuForward = tf.env().getBool('WEBGL_CPU_FORWARD');
    tf.env().set('WEBGL_CPU_FORWARD', false);  // small ops on the GPU
  });
  afterAll(() => tf.env().set('WEBGL_CPU_FORWARD', cpuForward));

  it('the program a removed backend drew last still draws on another backend', async () => {
    // Another backend that exists before and after, as tfjs's default does in the suite (a
    // backend made after the removal would bind its own index buffer into that vertex array).
    expect(await tf.setBackend('webgl')).toBe(true);
    const gl = (tf.backend() as MathBackendWebGL).gpgpu.gl;
    tf.tidy(() => tf.add(tf.ones([3]), 1).dataSync());

    tf.registerBackend('webgl-kept-programs', () => new MathBackendWebGL());
    registerWebglKernels('webgl-kept-programs');
    expect(await tf.setBackend('webgl-kept-programs')).toBe(true);
    // A shape no other spec reads back, so the removed backend compiles the read-back program.
    const shape = [11, 13];
    const values = Float32Array.from({length: 143}, (_, i) => i - 70);
    const doubled = Array.from(values, v => 2 * v);
    expect(Array.from(tf.tidy(() => tf.mul(tf.tensor(values, shape), 2).dataSync()))).toEqual(doubled);
    removeWebglBackend('webgl-kept-programs');

    expect(await tf.setBackend('webgl')).toBe(true);
    tf.tidy(() => tf.add(tf.ones([3]), 1).dataSync());
    expect(Array.from(tf.tidy(() => tf.mul(tf.tensor(values, shape), 2).dataSync()))).toEqual(doubled);
    expect(gl.getError()).withContext('WebGL error flag (0: no error)').toBe(gl.NO_ERROR);
  });
});

import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-webgpu';

/**
 * tfjs-webgpu registers 'webgpu' at priority 3, above webgl's 2: importing it into the browser
 * bundle would make it the default backend of every spec that does not choose one. Its
 * priority is put below webgl's here, so the specs that use it select it by name.
 */
const registered = (tf.engine() as unknown as {registryFactory: Record<string, {priority: number}>}).registryFactory;
if (registered.webgpu !== undefined) registered.webgpu.priority = 0;

/** Whether this page has WebGPU at all (navigator.gpu), before any adapter is asked for. */
export const webgpuExposed = typeof navigator !== 'undefined' && 'gpu' in navigator;

/**
 * Inside a describe block: selects tfjs's 'webgpu' backend before its specs (failing them if
 * it does not start) with WEBGPU_CPU_FORWARD off, so tfjs's own small ops stay on the GPU too.
 */
export function useWebgpuBackend() {
  let previousForward: boolean;
  beforeAll(async () => {
    previousForward = tf.env().getBool('WEBGPU_CPU_FORWARD');
    tf.env().set('WEBGPU_CPU_FORWARD', false);
    expect(await tf.setBackend('webgpu')).withContext('tf.setBackend(\'webgpu\')').toBe(true);
  });
  afterAll(() => {
    tf.env().set('WEBGPU_CPU_FORWARD', previousForward);
  });
}

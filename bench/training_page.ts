/**
 * The browser half of `npm run bench:training` (see bench/training.ts): on each browser backend
 * of the plan (webgl; webgpu when bench/training_webgpu.ts registered it), each model's
 * trainOnBatch with tfjs's gradients and with the drop-in ones (bench/training_step.ts). Results
 * go back to Node as one `TRAINING_RESULT {json}` console line.
 */
import '@tensorflow/tfjs-core/dist/register_all_gradients';  // tfjs's own gradients, as @tensorflow/tfjs registers them
import '@tensorflow/tfjs-backend-webgl';
import '../kernels/index';

import * as tf from '@tensorflow/tfjs-core';

import type {BackendRun, TrainingPageInput, TrainingPageResult} from './training';
import {findTrainingModel} from './training_models';
import {ModelResult, runTrainingModel} from './training_step';

declare const __karma__: {config: {args: string[]}};

/** The renderer and API version of the backend, for the report. */
function environment(name: string): string {
  if (name === 'webgl') {
    const gl = (tf.backend() as unknown as {gpgpu: {gl: WebGLRenderingContext}}).gpgpu.gl;
    const debug = gl.getExtension('WEBGL_debug_renderer_info');
    const renderer = String(debug ? gl.getParameter(debug.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER));
    const timer = tf.env().getNumber('WEBGL_DISJOINT_QUERY_TIMER_EXTENSION_RELIABLE') > 0;
    return `renderer ${renderer}, WebGL ${tf.env().getNumber('WEBGL_VERSION')}${tf.env().getBool('WEBGL_PACK') ? ' (packed)' : ''}; ${
        timer ? 'tf.profile times kernels with GPU timer queries' :
                'no GPU timer queries: tf.profile reads back every kernel\'s output to time it, so the profiled step is slower than the timed ones'}`;
  }
  const adapter = (tf.backend() as unknown as {adapterInfo?: {vendor?: string; architecture?: string}}).adapterInfo;
  return `${name}${adapter ? `, adapter ${[adapter.vendor, adapter.architecture].filter(Boolean).join(' ')}` : ''}`;
}

describe('training benchmark', () => {
  it('times trainOnBatch with tfjs\'s gradients and with the drop-in ones', async () => {
    const input = JSON.parse(__karma__.config.args[0]) as TrainingPageInput;
    const result: TrainingPageResult = {userAgent: navigator.userAgent, tfjs: tf.version_core, backends: []};
    for (const backend of input.backends) {
      let unavailable: string | null = null;
      try {
        if (!(await tf.setBackend(backend.name))) unavailable = `tf.setBackend('${backend.name}') failed`;
      } catch (e) {
        unavailable = `tf.setBackend('${backend.name}') threw: ${String((e as Error)?.message ?? e).split('\n')[0]}`;
      }
      if (unavailable !== null) {
        console.log(`${backend.name}: ${unavailable}`);
        (result.backends as BackendRun[]).push({name: backend.name, unavailable, environment: '', models: []});
        continue;
      }
      const env = environment(backend.name);
      console.log(`${backend.name}: ${env}`);
      const models: ModelResult[] = [];
      for (const id of backend.models) {
        const spec = findTrainingModel(id);
        const batch = backend.batch[id] ?? spec.batch;
        console.log(`${backend.name}: ${id} at batch ${batch}`);
        models.push(await runTrainingModel(spec, batch, backend.plan, line => console.log(line)));
      }
      (result.backends as BackendRun[]).push({name: backend.name, unavailable: null, environment: env, models});
    }
    console.log(`TRAINING_RESULT ${JSON.stringify(result)}`);
    expect(result.backends.length).toBe(input.backends.length);
  });
});

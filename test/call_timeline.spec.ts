import * as tf from '@tensorflow/tfjs-core';

import {computeGeometry, CONV_BACKPROP_FILTERS_THREADS, convolutionBackpropFilters, simdThreadsReady} from '../kernels/index';
import {CallTimeline} from '../kernels/host/simd/call_timeline';
import {chunkSteps, simdPlanOf, simdTesting} from '../kernels/host/simd/simd_filter_gradient';
import {SUITE_THREADS} from './helpers/setup';
import {seededValues} from './helpers/util';

/**
 * A SIMD call's timeline (kernels/host/simd/call_timeline.ts, `npm run bench:timeline`): every
 * task of every chunk logged once, by the thread that ran it, inside the call, and the calling
 * thread's phases in order; nothing logged while no call records, and the values the same.
 */
describe('the SIMD call timeline', () => {
  // 3×3, 32 → 32 channels, 2 samples: 288 output units, 4 unit parts on 2 threads, 16 steps.
  const inputShape = [2, 16, 16, 32];
  const attrs = {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]};
  const geometry = computeGeometry(
      'ConvolutionBackpropFilters', {input: {shape: inputShape, dtype: 'float32'}, outputDelta: {shape: inputShape, dtype: 'float32'}},
      attrs);
  const elements = inputShape.reduce((a, b) => a * b, 1);

  function record(): {values: Float32Array; timeline: CallTimeline} {
    simdTesting.lastTimeline = undefined;
    simdTesting.recordTimeline = true;
    try {
      const values = tf.tidy(() => convolutionBackpropFilters(
          tf.tensor(seededValues(elements, 1), inputShape), tf.tensor(seededValues(elements, 2), inputShape), attrs)
          .dataSync() as Float32Array);
      return {values, timeline: simdTesting.lastTimeline!};
    } finally {
      simdTesting.recordTimeline = false;
    }
  }

  /** Per chunk: the tasks chunkSteps makes and the chunk's steps. */
  function expectedChunks(): Array<{tasks: number; steps: number}> {
    const plan = simdPlanOf(geometry);
    const chunks = [];
    for (let first = 0; first < geometry.batch; first += plan.chunkSamples) {
      const steps = chunkSteps(geometry, plan, first, Math.min(geometry.batch, first + plan.chunkSamples));
      chunks.push({tasks: steps.reduce((n, step) => n + step.tasks.length, 0), steps: steps.length});
    }
    return chunks;
  }

  function expectConsistent(timeline: CallTimeline, threads: number) {
    expect(timeline.threads).toBe(threads);
    const phases = timeline.events.map(e => e.phase);
    const chunks = expectedChunks();
    expect(phases).toEqual([
      'planned', ...chunks.flatMap(c => [...(threads > 1 ? ['opened'] : []), ...Array(c.steps).fill('step'), 'chunk done']),
      'copied',
    ]);
    const times = timeline.events.map(e => e.at);
    expect(times.every((t, i) => t >= 0 && (i === 0 || t >= times[i - 1]))).withContext(`event times ${times}`).toBeTrue();
    chunks.forEach((chunk, c) => {
      const runs = timeline.tasks.filter(t => t.chunk === c);
      expect(runs.map(t => t.task).sort((a, b) => a - b)).withContext(`chunk ${c}: each task once`)
          .toEqual(Array.from({length: chunk.tasks}, (_, i) => i));
      const opened = timeline.events.find(e => e.chunk === c && e.phase !== 'planned')!.at;
      const done = timeline.events.find(e => e.chunk === c && e.phase === 'chunk done')!.at;
      for (const run of runs) {
        expect(run.thread >= 0 && run.thread < threads).withContext(`task ${run.task}'s thread ${run.thread}`).toBeTrue();
        // Another thread's clock may differ from this one's by its epoch's rounding: 0.01 ms.
        expect(run.start >= opened - 0.01 && run.start <= run.end && run.end <= done + 0.01)
            .withContext(`task ${run.task} ran ${run.start}–${run.end}, chunk ${opened}–${done}`).toBeTrue();
      }
    });
  }

  afterEach(() => {
    simdTesting.recordTimeline = false;
    simdTesting.lastTimeline = undefined;
    simdTesting.packBytes = 32 * 2 ** 20;
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, SUITE_THREADS);
  });

  it('logs each task of a call on threads once, by a thread of the call, between the job opening and its end', async () => {
    expect(await simdThreadsReady()).toBe(SUITE_THREADS);
    const first = record();
    expectConsistent(first.timeline, SUITE_THREADS);
    // A second call logs its own tasks only (the log starts empty).
    expectConsistent(record().timeline, SUITE_THREADS);
    simdTesting.lastTimeline = undefined;
    const unrecorded = tf.tidy(() => convolutionBackpropFilters(
        tf.tensor(seededValues(elements, 1), inputShape), tf.tensor(seededValues(elements, 2), inputShape), attrs)
        .dataSync() as Float32Array);
    expect(simdTesting.lastTimeline).withContext('a call that does not record').toBeUndefined();
    expect(Array.from(first.values)).withContext('recording changes no value').toEqual(Array.from(unrecorded));
  });

  it('logs a one-thread call\'s tasks on the calling thread, each after its step is packed', () => {
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, 1);
    const {timeline} = record();
    expectConsistent(timeline, 1);
    expect(timeline.tasks.every(t => t.thread === 0)).toBeTrue();
    const steps = timeline.events.filter(e => e.phase === 'step').map(e => e.at);
    const plan = simdPlanOf(geometry);
    const stepOfTask = chunkSteps(geometry, plan, 0, geometry.batch).flatMap((step, s) => step.tasks.map(() => s));
    for (const run of timeline.tasks) {
      expect(run.start).withContext(`task ${run.task}`).not.toBeLessThan(steps[stepOfTask[run.task]]);
    }
  });

  it('logs every chunk of a call packed a sample at a time', async () => {
    expect(await simdThreadsReady()).toBe(SUITE_THREADS);
    simdTesting.packBytes = 1;
    const {timeline} = record();
    expect(new Set(timeline.tasks.map(t => t.chunk)).size).toBe(geometry.batch);
    expectConsistent(timeline, SUITE_THREADS);
  });
});

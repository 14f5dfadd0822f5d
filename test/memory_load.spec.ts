import * as tf from '@tensorflow/tfjs-core';

import {NODE_BACKENDS} from './backends';
import {FuzzProblem, generateProblem} from './fuzz/problems';
import {problemSeed} from './fuzz/random';
import {expectedOf, memorySnapshot, runProblem} from './fuzz/runner';
import {CI_SEED, fuzzSettings} from './fuzz/settings';

/**
 * Memory under load: 1,000 consecutive calls with mixed shapes (a pool of fuzz problems of both
 * ops, every layout and entry point, cycled) on each backend. Every call is checked against the
 * reference and must leave memory as it found it; tf.memory() must stay flat over the whole run
 * (sampled every 100 calls), and on wasm the module's heap must stop growing once every shape
 * of the pool has run once.
 */
const CALLS = 1000;
const POOL = 40;

function wasmHeapBytes(): number | undefined {
  const backend = tf.backend() as {wasm?: {HEAPU8?: Uint8Array}};
  return backend.wasm?.HEAPU8?.length;
}

for (const backend of NODE_BACKENDS) {
  describe(`memory under load on ${backend.name}:`, () => {
    beforeAll(async () => {
      expect(await tf.setBackend(backend.name)).toBe(true);
    });
    afterAll(async () => {
      await tf.setBackend('cpu');  // specs that pick no backend run on cpu
    });

    it(`leaves tf.memory() where it started after ${CALLS} calls with mixed shapes`, () => {
      const settings = fuzzSettings(backend.name);
      const pool: FuzzProblem[] = Array.from(
          {length: POOL}, (_, i) => generateProblem(problemSeed(CI_SEED + 200, i), {specials: settings.specials}));
      const expected = pool.map(expectedOf);
      const start = memorySnapshot();
      let heapAfterFirstPass: number | undefined;
      const failures: string[] = [];
      for (let call = 0; call < CALLS; call++) {
        const index = call % POOL;
        const failure = runProblem(pool[index], {atol: settings.atol, rtol: settings.rtol}, expected[index]);
        if (failure !== undefined) failures.push(`call ${call} (problem seed ${pool[index].seed}): ${failure}`);
        if (call === POOL - 1) heapAfterFirstPass = wasmHeapBytes();
        if ((call + 1) % 100 === 0) expect(memorySnapshot()).withContext(`after ${call + 1} calls`).toEqual(start);
      }
      expect(failures.slice(0, 10)).toEqual([]);
      expect(memorySnapshot()).toEqual(start);
      expect(wasmHeapBytes()).withContext('wasm heap after the first pass and at the end').toBe(heapAfterFirstPass);
    });
  });
}

/**
 * The differential fuzzer, hostile inputs and memory under load on tfjs's webgpu backend, in
 * headless Chromium (SwiftShader's Vulkan). Results are read with `await data()`.
 *
 * In `npm test` it runs the CI sample (WEBGPU_CI_COUNT random problems of seed CI_SEED),
 * 300 generated invalid calls, and 400 calls with mixed shapes. `npm run fuzz -- --backend
 * webgpu --count N --seed S` (test/fuzz/cli.ts) loads this file alone with its options as
 * karma client args and runs that fuzz run only.
 */
import * as tf from '@tensorflow/tfjs-core';

import {planWebgpuReduction} from '../../kernels/webgpu/reduction_plan';
import type {FuzzCliOptions} from '../fuzz/cli';
import {addToSummary, describeSummary, FuzzSummary, runFuzzAsync} from '../fuzz/fuzz';
import {HOSTILE_CATEGORIES, runHostileSample} from '../fuzz/hostile';
import {FuzzProblem, generateProblem, problemGeometry} from '../fuzz/problems';
import {problemSeed} from '../fuzz/random';
import {CheckOptions, expectedOf, memorySnapshot, runProblemAsync} from '../fuzz/runner';
import {CI_SEED, fuzzSettings} from '../fuzz/settings';
import {fuzzCliOptions} from '../helpers/fuzz_cli_options';
import {useWebgpuBackend} from '../helpers/webgpu_backend';

const cliOptions: FuzzCliOptions | undefined = fuzzCliOptions();

/** Problems of the CI sample on webgpu (~0.2 s each on SwiftShader, mostly shader compiles and read-backs). */
const WEBGPU_CI_COUNT = 60;

/** Problems of the CI sample shaped as strided tiles (test/fuzz/problems.ts), which random problems almost never are. */
const WEBGPU_STRIDED_TILES_COUNT = 60;

/** Inputs in turn made by an op (in a GPU buffer already) and uploaded as they are. */
function checkOptions(): CheckOptions {
  const settings = fuzzSettings('webgpu');
  let count = 0;
  const place = (values: Float32Array, shape: number[]) => {
    const t = count++ % 2 === 0 ? tf.tidy(() => tf.mul(tf.tensor(values, shape), 1)) : tf.tensor(values, shape);
    if (values.length > 0) (tf.backend() as unknown as {uploadToGPU(dataId: object): void}).uploadToGPU(t.dataId);
    return t;
  };
  return {atol: settings.atol, rtol: settings.rtol, place};
}

const yieldToPage = () => new Promise(resolve => setTimeout(resolve, 0));

if (cliOptions !== undefined) {
  describe('webgpu fuzz run', () => {
    useWebgpuBackend();
    it('passes every problem', async () => {
      const options = cliOptions;
      const specials = options.specials ?? fuzzSettings('webgpu').specials;
      console.log(`fuzz on webgpu: ${options.problem !== undefined ? `problem ${options.problem}` : `${options.count} problems from index ${
          options.start}, seed ${options.seed}`}; specials ${specials}${options.shape !== undefined ? `; shape ${options.shape}` : ''}`);
      const total: FuzzSummary = {backend: 'webgpu', seed: options.seed, count: 0, passed: 0, failures: [], milliseconds: 0, mix: {}};
      const block = 50;
      const count = options.problem !== undefined ? 1 : options.count;
      for (let done = 0; done < count && total.failures.length < options.maxFailures; done += block) {
        const summary = await runFuzzAsync({
          backend: 'webgpu', seed: options.seed, start: options.start + done, count: Math.min(block, count - done),
          problem: options.problem, check: checkOptions(), generate: {specials, specialRate: options.specialRate, shape: options.shape},
          maxFailures: options.maxFailures - total.failures.length,
        });
        addToSummary(total, summary);
        if ((done + block) % 500 === 0 || done + block >= count) {
          console.log(`  ${total.count} problems, ${total.failures.length} failed, ${(total.milliseconds / 1000).toFixed(1)} s`);
        }
        await yieldToPage();
      }
      console.log(describeSummary(total));
      expect(total.failures.length).toBe(0);
    });
  });
} else {
  describe('webgpu fuzz (CI sample), hostile inputs and load:', () => {
    useWebgpuBackend();

    it(`passes ${WEBGPU_CI_COUNT} random problems (seed ${CI_SEED})`, async () => {
      const summary = await runFuzzAsync({
        backend: 'webgpu', seed: CI_SEED, count: WEBGPU_CI_COUNT, check: checkOptions(),
        generate: {specials: fuzzSettings('webgpu').specials},
      });
      console.log(describeSummary(summary));
      if (summary.failures.length > 0) fail(describeSummary(summary));
      expect(summary.passed).toBe(WEBGPU_CI_COUNT);
    });

    it(`passes ${WEBGPU_STRIDED_TILES_COUNT} problems shaped as strided tiles (seed ${CI_SEED}), specials in half of them, at least 10 in units of src rows`, async () => {
      let unitsOfSrcRows = 0;
      let neighbourRows = 0;
      const summary = await runFuzzAsync({
        backend: 'webgpu', seed: CI_SEED, count: WEBGPU_STRIDED_TILES_COUNT, check: checkOptions(),
        generate: {specials: fuzzSettings('webgpu').specials, specialRate: 0.5, shape: 'strided-tiles'},
        accept: problem => {
          if (problem.inputShape[0] > 0) {
            const plan = planWebgpuReduction(problemGeometry(problem));
            unitsOfSrcRows += plan.srcRowUnits ? 1 : 0;
            neighbourRows += plan.unitNeighbourRows !== 'none' ? 1 : 0;
          }
          return true;
        },
      });
      console.log(`${describeSummary(summary)}\n  in units of src rows: ${unitsOfSrcRows} (${neighbourRows} with a neighbouring row)`);
      if (summary.failures.length > 0) fail(describeSummary(summary));
      expect(summary.passed).toBe(WEBGPU_STRIDED_TILES_COUNT);
      expect(unitsOfSrcRows).toBeGreaterThanOrEqual(10);
      expect(neighbourRows).toBeGreaterThan(0);
    });

    it('rejects 300 generated invalid calls by name, before any work, leaving memory as it was', () => {
      const {failures, categories} = runHostileSample(CI_SEED + 100, 300);
      expect(failures).withContext(failures.slice(0, 20).join('\n')).toEqual([]);
      expect(categories).withContext('every category drawn').toEqual([...HOSTILE_CATEGORIES].sort());
    });

    it('leaves tensors, bytes and GPU buffers where they started after 400 calls with mixed shapes, and stops allocating after the first pass', async () => {
      const pool: FuzzProblem[] = Array.from(
          {length: 40}, (_, i) => generateProblem(problemSeed(CI_SEED + 200, i), {specials: fuzzSettings('webgpu').specials}));
      const expected = pool.map(expectedOf);
      const check = checkOptions();
      const allocated = () => (tf.backend() as unknown as {bufferManager: {numBytesAllocated: number}}).bufferManager.numBytesAllocated;
      const start = memorySnapshot();
      const failures: string[] = [];
      let allocatedAfterFirstPasses: number | undefined;
      const started = performance.now();
      for (let call = 0; call < 400; call++) {
        const index = call % pool.length;
        const failure = await runProblemAsync(pool[index], check, expected[index]);
        if (failure !== undefined) failures.push(`call ${call} (problem seed ${pool[index].seed}): ${failure}`);
        // Two placements × 40 problems: after 80 calls every buffer size needed is in tfjs's pool.
        if (call === 2 * pool.length - 1) allocatedAfterFirstPasses = allocated();
        if ((call + 1) % 100 === 0) expect(memorySnapshot()).withContext(`after ${call + 1} calls`).toEqual(start);
      }
      console.log(`400 webgpu calls in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      expect(failures.slice(0, 10)).toEqual([]);
      expect(memorySnapshot()).toEqual(start);
      expect(allocated()).withContext('GPU bytes allocated (buffer pool)').toBe(allocatedAfterFirstPasses!);
    });
  });
}

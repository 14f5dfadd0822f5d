import * as tf from '@tensorflow/tfjs-core';
import {spawnSync} from 'child_process';
import * as path from 'path';

import {CONV_BACKPROP_FILTERS_THREADS, CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, CONV_BACKPROP_FILTERS_VERBOSE, CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD, computeGeometry, convolutionBackpropFilters, convTransposeBackpropFilters, simdThreadsReady, stopSimdThreads} from '../kernels/index';
import {chunkSteps, currentThreadPool, DEFAULT_THREADS_MIN_MFLOP, oneThreadByDesign, simdPlanOf, simdTesting} from '../kernels/host/simd/simd_filter_gradient';
import {overrideWorkerFactoryForTesting, poolFailureReason, resetPoolFailureForTesting, ThreadPool, threadPoolTesting} from '../kernels/host/simd/thread_pool';
import {ThreadChoice, ThreadOutcomes, ThreadWay, TRIAL_CALLS} from '../kernels/host/simd/thread_outcomes';
import {claimAndRun, CLAIM, CLAIMED, CLOSED, CONTROL_WORDS, DONE, FINISHED, JOB, OPEN, openClaim, PROGRESS, READY, TASK_BITS, TASK_COUNT, TASK_STATE_BITS, TASK_STATES, taskState, WAKE} from '../kernels/host/simd/thread_protocol';
import {CASES} from './cases';
import {SUITE_THREADS} from './helpers/setup';
import {THREAD_LAYERS} from './helpers/simd_problems';
import {seededValues} from './helpers/util';
import {VERBOSE_PREFIX} from '../src/verbose';

/**
 * The SIMD path of the cpu and wasm kernels on worker threads (kernels/host/simd/thread_pool.ts):
 * results bitwise equal whatever the thread count, the thread plan, and every way threads fail
 * (a worker that dies between calls or in the middle of a task, a pool that cannot start), which
 * must mean one thread and the same values, never a hang. The suite itself runs on
 * SUITE_THREADS threads with no threshold (test/helpers/setup.ts).
 */

const size = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);


interface Problem {
  id: string;
  call: () => tf.Tensor;
}

function problems(): Problem[] {
  const fromCases = CASES.map(c => ({
    id: c.id,
    call: () => {
      const op = c.op === 'ConvolutionBackpropFilters' ? convolutionBackpropFilters : convTransposeBackpropFilters;
      const input = tf.tensor(seededValues(size(c.inputShape), c.seed), c.inputShape);
      const outputDelta = tf.tensor(seededValues(size(c.outputDeltaShape), c.seed + 1000), c.outputDeltaShape);
      return op(input, outputDelta, c.attrs as never, c.filterShapeInput);
    },
  }));
  const fromLayers = THREAD_LAYERS.map((p, i) => ({
    id: p.name,
    call: () => {
      const op = p.op === 'conv' ? convolutionBackpropFilters : convTransposeBackpropFilters;
      return op(tf.tensor(seededValues(size(p.input), i + 1), p.input),
                tf.tensor(seededValues(size(p.outputDelta), i + 101), p.outputDelta), p.attrs);
    },
  }));
  return [...fromCases, ...fromLayers];
}

/** The paths the verbose line printed and the values of every problem, at `threads`. */
async function runAll(threads: number): Promise<{values: Float32Array[]; paths: string[]}> {
  tf.env().set(CONV_BACKPROP_FILTERS_THREADS, threads);
  expect(await simdThreadsReady()).withContext('threads ready').toBe(threads);
  const lines: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => lines.push(args.map(String).join(' '));
  tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, true);
  try {
    const values = problems().map(p => tf.tidy(() => p.call().dataSync() as Float32Array));
    return {values, paths: lines.filter(l => l.startsWith(VERBOSE_PREFIX)).map(l => l.split(',')[4])};
  } finally {
    tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, false);
    console.log = log;
  }
}

const bits = (values: Float32Array) => new Uint32Array(values.buffer, values.byteOffset, values.length);

function expectBitwiseEqual(actual: Float32Array[], expected: Float32Array[], context: string) {
  const ids = problems().map(p => p.id);
  actual.forEach((values, i) => {
    const same = values.length === expected[i].length && bits(values).every((b, j) => b === bits(expected[i])[j]);
    expect(same).withContext(`${context}: ${ids[i]}`).toBeTrue();
  });
}

/** Puts back what the rest of the suite runs on (test/helpers/setup.ts), workers ready. */
async function restoreSuiteThreads() {
  tf.env().set(CONV_BACKPROP_FILTERS_THREADS, SUITE_THREADS);
  tf.env().set(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, 0);
  await tf.setBackend('cpu');
  await simdThreadsReady();
}

for (const backend of ['cpu', 'wasm']) {
  describe(`threads on ${backend}:`, () => {
    beforeAll(async () => {
      expect(await tf.setBackend(backend)).toBe(true);
      tf.env().set(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, 0);
    });
    afterAll(restoreSuiteThreads);

    it('gives bitwise the same values with 1, 2, 3 and 8 threads over the case table and a set of layers', async () => {
      const one = await runAll(1);
      expect(one.paths.every(p => p === 'simd threads=1')).withContext(one.paths.join(' ')).toBeTrue();
      for (const threads of [2, 3, 8]) {
        const many = await runAll(threads);
        expectBitwiseEqual(many.values, one.values, `${threads} threads`);
        // Every problem with two tasks or more ran on all of them (the others on one, saying why).
        const threaded = many.paths.filter(p => p === `simd threads=${threads}`).length;
        expect(many.paths.every(p => p === `simd threads=${threads}` || p === 'simd threads=1 (one task)'))
            .withContext(many.paths.join(' ')).toBeTrue();
        expect(threaded).toBeGreaterThan(many.paths.length / 2);
      }
    });

    it('gives bitwise the same values with 1, 2, 3 and 8 threads with the relaxed-SIMD build too', async () => {
      const suiteBuild = tf.env().getBool(CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD);
      tf.env().set(CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD, true);
      try {
        const one = await runAll(1);
        if (!one.paths.some(p => p.includes('relaxed'))) pending('this engine does not validate WebAssembly relaxed SIMD');
        expect(one.paths.every(p => p === 'simd relaxed threads=1')).withContext(one.paths.join(' ')).toBeTrue();
        for (const threads of [2, 3, 8]) {
          const many = await runAll(threads);
          expect(many.paths.filter(p => p === `simd relaxed threads=${threads}`).length).toBeGreaterThan(many.paths.length / 2);
          expectBitwiseEqual(many.values, one.values, `relaxed SIMD, ${threads} threads`);
        }
      } finally {
        tf.env().set(CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD, suiteBuild);
      }
    });

    it('gives the same values with 3 and 8 threads packing in steps (more threads than this machine has cores)', async () => {
      const one = await runAll(1);
      for (const threads of [3, 8]) {
        tf.env().set(CONV_BACKPROP_FILTERS_THREADS, threads);
        await simdThreadsReady();
        expect(simdPlanOf(computeGeometry('ConvolutionBackpropFilters', {input: {shape: [4, 8, 8, 8], dtype: 'float32'}, outputDelta: {shape: [4, 8, 8, 8], dtype: 'float32'}}, {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]})).steps).toBe(16);
        expectBitwiseEqual((await runAll(threads)).values, one.values, `${threads} threads in steps`);
      }
    });

    it('reads only what its steps packed, zeroes every sum and stores every filter element: the same values, no NaN, with 16 steps on one thread and the sums, staging and filter memory poisoned', async () => {
      const steps = simdTesting.oneThreadSteps;
      expect(steps).withContext('one thread runs in steps by default').toBe(16);
      simdTesting.oneThreadSteps = 1;
      let whole;
      try {
        whole = await runAll(1);
      } finally {
        simdTesting.oneThreadSteps = steps;
      }
      simdTesting.poison = true;
      try {
        const stepped = await runAll(1);
        expectBitwiseEqual(stepped.values, whole.values, '16 steps on one thread against the chunk packed whole, poisoned');
        expectBitwiseEqual((await runAll(2)).values, whole.values, '2 threads, poisoned');
      } finally {
        simdTesting.poison = false;
      }
    });

    it('gives the same values when the samples are packed a few at a time (several fork-joins per call)', async () => {
      const whole = await runAll(2);
      simdTesting.packBytes = 1;  // one sample per chunk
      try {
        const chunked = await runAll(2);
        expectBitwiseEqual(chunked.values, whole.values, 'one sample per chunk');
        const alone = await runAll(1);
        expectBitwiseEqual(alone.values, whole.values, 'one sample per chunk, one thread');
      } finally {
        simdTesting.packBytes = 32 * 2 ** 20;
      }
    });
  });
}

describe('the thread plan', () => {
  const geometryOf = (input: number[], outputDelta: number[], attrs: Record<string, unknown>) =>
      computeGeometry('ConvolutionBackpropFilters', {input: {shape: input, dtype: 'float32'}, outputDelta: {shape: outputDelta, dtype: 'float32'}}, attrs);
  const res2 = () => geometryOf([2, 56, 56, 64], [2, 56, 56, 64], {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]});
  afterEach(() => {
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, SUITE_THREADS);
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, 0);
  });
  afterAll(restoreSuiteThreads);

  it('splits a layer over its output units whatever the thread count: only the unit parts change', async () => {
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, 2);
    await simdThreadsReady();
    const two = simdPlanOf(res2());
    expect(two).toEqual(jasmine.objectContaining({
      threads: 2, requestedThreads: 2, flops: 2 * 2 * 56 * 56 * 64 * 64 * 9, units: 9 * 8 * 16, slices: 1, unitParts: 4,
      chunkSamples: 2, steps: 16,
    }));
    expect(two.reason).toBeUndefined();
    // Node ≥ 22 copies into the shared memory by memmove (float_copy.ts); Node 20 and browsers by `set`.
    const nodeMajor = Number(globalThis.process?.versions?.node?.split('.')[0]);
    if (nodeMajor >= 22) expect(two.sharedCopy).toBe('memmove');
    else expect(['staged set', 'set']).toContain(two.sharedCopy ?? 'none');
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, 1);
    const one = simdPlanOf(res2());
    expect(two.unitBounds).toEqual([0, 288, 576, 864, 1152]);
    expect(one).toEqual({...two, threads: 1, requestedThreads: 1, unitParts: 1, unitBounds: [0, 1152], sharedCopy: undefined});
  });

  it('starts a depthwise unit part only where one thread starts a 16-lane pass: an offset, or 4 units of 4 lanes into one', async () => {
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, 2);
    await simdThreadsReady();
    // MobileNet conv2_1/dw: 9 offsets × 8 units of 4 lanes. Even parts would start at 18, 36 and
    // 54, two units into offsets 2 and 6: their lanes there would run 4 at a time.
    const dw = geometryOf([2, 112, 112, 32], [2, 112, 112, 32], {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], groups: 32, filterShape: [3, 3]});
    const plan = simdPlanOf(dw);
    expect([plan.units, plan.unitParts]).toEqual([72, 4]);
    expect(plan.unitBounds).toEqual([0, 20, 36, 56, 72]);
    // 2 offsets × 8 units in 16 parts on 8 threads: most parts empty, and no task runs one.
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, 8);
    await simdThreadsReady();
    const narrow = geometryOf([2, 8, 9, 32], [2, 8, 8, 32], {strides: [1, 1], groups: 32, filterShape: [1, 2]});
    const eight = simdPlanOf(narrow);
    expect([eight.threads, eight.units, eight.unitParts]).toEqual([8, 16, 16]);
    expect([...new Set(eight.unitBounds)]).toEqual([0, 4, 8, 12, 16]);
    const tasks = chunkSteps(narrow, eight, 0, 2).flatMap(step => step.tasks);
    expect(tasks.every(t => t.unitEnd > t.unitFirst)).toBeTrue();
    expect(new Set(tasks.map(t => t.unitFirst)).size).toBe(4);
  });

  it('runs a chunk in steps whose tasks cover every row × unit once, each following the one before on its sums', async () => {
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, 2);
    await simdThreadsReady();
    const problems = [
      // 112 reduction rows in 16 steps of 7: sample 1 is packed before step 8.
      res2(),
      // 1 unit: 6 reduction rows, in 6 slices and 6 steps, over 3 samples.
      geometryOf([3, 40, 40, 2], [3, 40, 40, 3], {strides: [1, 1], filterShape: [1, 1]}),
      // 3 units: 22 rows in 6 slices (0–3, 3–7, …) and 16 steps (0–1, 1–2, 2–4, …): a step crosses slices.
      geometryOf([2, 121, 40, 24], [2, 121, 40, 3], {strides: [1, 1], filterShape: [1, 1]}),
    ];
    for (const geometry of problems) {
      const plan = simdPlanOf(geometry);
      expect([plan.threads, plan.steps]).toEqual([2, 16]);
      const steps = chunkSteps(geometry, plan, 0, geometry.batch);
      expect(steps.length).toBe(Math.min(16, plan.reductionRows));
      // Each sample's lines packed once, in order, each sample whole by the end.
      const packs = steps.flatMap(s => s.packs);
      for (let n = 0; n < geometry.batch; n++) {
        const mine = packs.filter(p => p.sample === n);
        expect(mine.length).toBeGreaterThan(0);
        mine.slice(1).forEach((p, i) => expect([p.src[0], p.diffDst[0]]).toEqual([mine[i].src[1], mine[i].diffDst[1]]));
        expect([mine[0].src[0], mine[0].diffDst[0]]).toEqual([0, 0]);
      }
      const tasks = steps.flatMap(s => s.tasks);
      // Every (row, unit) exactly once, inside its slice.
      const seen = new Uint8Array(plan.reductionRows * plan.units);
      steps.forEach(step => step.tasks.forEach(task => {
        expect(task.rowFirst).toBeGreaterThanOrEqual(Math.floor(task.slice * plan.reductionRows / plan.slices));
        expect(task.rowEnd).toBeLessThanOrEqual(Math.floor((task.slice + 1) * plan.reductionRows / plan.slices));
        for (let row = task.rowFirst; row < task.rowEnd; row++) {
          for (let unit = task.unitFirst; unit < task.unitEnd; unit++) seen[row * plan.units + unit]++;
        }
      }));
      expect(seen.every(count => count === 1)).toBeTrue();
      // Tasks on the same sums and units form one chain in row order.
      tasks.forEach((task, index) => {
        const before = tasks.slice(0, index).map((t, i) => [t, i] as const)
            .filter(([t]) => t.slice === task.slice && t.unitFirst === task.unitFirst);
        expect(task.follows).toBe(before.length === 0 ? -1 : before[before.length - 1][1]);
        if (before.length > 0) expect(before[before.length - 1][0].rowEnd).toBe(task.rowFirst);
      });
      // Whether the call runs in one chunk or a chunk per sample, the first task on each slice's
      // sums of a unit part zeroes them and the last one stores them into the filter (one slice;
      // with several the calling thread adds them first), and no other task does either.
      const rowsPerSample = plan.reductionRows / geometry.batch;
      for (const chunks of [[[0, geometry.batch]], Array.from({length: geometry.batch}, (_, n) => [n, n + 1])]) {
        const all = chunks.flatMap(([first, end]) => chunkSteps(geometry, plan, first, end).flatMap(step => step.tasks)
            .map(t => ({...t, rowFirst: t.rowFirst + first * rowsPerSample, rowEnd: t.rowEnd + first * rowsPerSample})));
        for (let slice = 0; slice < plan.slices; slice++) {
          for (const unitFirst of new Set(all.map(t => t.unitFirst))) {
            const chain = all.filter(t => t.slice === slice && t.unitFirst === unitFirst);
            expect(chain.map(t => t.zeroes)).toEqual(chain.map((_, i) => i === 0));
            expect(chain.map(t => t.stores)).toEqual(chain.map((_, i) => plan.slices === 1 && i === chain.length - 1));
          }
        }
      }
    }
    // res2 (56 rows a sample, one reduction row each): step 0 (rows 0–6) packs src rows 0–8 and
    // diffDst rows 0–7 of sample 0 (a 3×3 window with pad 1 reaches one row further).
    expect(chunkSteps(problems[0], simdPlanOf(problems[0]), 0, 2)[0].packs).toEqual([{sample: 0, src: [0, 8], diffDst: [0, 7]}]);
    const crossing = simdPlanOf(problems[2]);
    expect([crossing.units, crossing.reductionRows, crossing.slices]).toEqual([3, 22, 6]);
    const crossingSteps = chunkSteps(problems[2], crossing, 0, 2);
    // Slices start at rows 0, 3, 7, 11, 14, 18; steps at 0, 1, 2, 4, 5, 6, 8, 9, 11, 12, 13, 15, 16, 17, 19, 20:
    // steps 2 (rows 2–4), 5 (6–8), 10 (13–15) and 13 (17–19) run tasks of two slices; slice 1 (rows 3–7) runs in 4 steps.
    expect(crossingSteps.map(step => new Set(step.tasks.map(t => t.slice)).size)).toEqual([1, 1, 2, 1, 1, 2, 1, 1, 1, 1, 2, 1, 1, 2, 1, 1]);
    expect(crossingSteps.filter(step => step.tasks.some(t => t.slice === 1)).length).toBe(4);
  });

  it('splits the reduction at fixed boundaries when a problem has too few output units', () => {
    const plan = simdPlanOf(geometryOf([3, 40, 40, 2], [3, 40, 40, 3], {strides: [1, 1], filterShape: [1, 1]}));
    // 3 samples × 2 blocks of 25 rows each: 6 reduction rows, each its own slice.
    expect([plan.units, plan.blockRows, plan.reductionRows, plan.slices, plan.unitParts]).toEqual([1, 25, 6, 6, 1]);
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, 1);
    expect(simdPlanOf(geometryOf([3, 40, 40, 2], [3, 40, 40, 3], {strides: [1, 1], filterShape: [1, 1]})).slices).toBe(6);
    const wide = simdPlanOf(geometryOf([2, 4, 30, 4], [2, 4, 30, 4], {strides: [1, 1], filterShape: [1, 1]}));
    expect([wide.units, wide.slices]).toEqual([1, 2]);
    const many = simdPlanOf(geometryOf([20, 30, 30, 4], [20, 30, 30, 4], {strides: [1, 1], filterShape: [1, 1]}));
    expect([many.units, many.reductionRows, many.slices]).toEqual([1, 20, 16]);
  });

  it(`keeps problems under ${DEFAULT_THREADS_MIN_MFLOP} MFLOP (the default threshold) on the calling thread, and says so`, () => {
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, DEFAULT_THREADS_MIN_MFLOP);
    const small = simdPlanOf(geometryOf([1, 12, 12, 8], [1, 12, 12, 8], {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]}));
    expect([small.threads, small.reason]).toEqual([1, 'below threshold']);
    expect(oneThreadByDesign(small.reason, false)).withContext('a reason by design (benches accept it)').toBeTrue();
    expect(simdPlanOf(res2()).threads).toBe(SUITE_THREADS);
  });

  it('counts depthwise problems against the same threshold', () => {
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, DEFAULT_THREADS_MIN_MFLOP);
    // 2·N·C·K·out = 2·16·32·9·32·32 = 9.4 MFLOP (MobileNet-0.25 conv3_1/dw) and 4/3 of its batch: 12.6 MFLOP.
    const depthwise = (batch: number) => simdPlanOf(geometryOf(
        [batch, 32, 32, 32], [batch, 32, 32, 32], {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], groups: 32, filterShape: [3, 3]}));
    expect([depthwise(16).threads, depthwise(16).reason]).toEqual([1, 'below threshold']);
    expect(depthwise(16).flops).toBeLessThan(DEFAULT_THREADS_MIN_MFLOP * 1e6);
    expect(depthwise(24).flops).toBeGreaterThan(DEFAULT_THREADS_MIN_MFLOP * 1e6);
    expect([depthwise(24).threads, depthwise(24).reason]).toEqual([SUITE_THREADS, undefined]);
  });

  it('runs a problem of one task on the calling thread', () => {
    const plan = simdPlanOf(geometryOf([1, 1, 1, 4], [1, 1, 1, 4], {strides: [1, 1], filterShape: [1, 1]}));
    expect([plan.units, plan.slices, plan.threads, plan.reason]).toEqual([1, 1, 1, 'one task']);
    expect(oneThreadByDesign(plan.reason, false)).withContext('a reason by design (benches accept it)').toBeTrue();
  });

  it('is one thread with CONV_BACKPROP_FILTERS_THREADS 1, and the flag defaults to the cores, at most 8', () => {
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, 1);
    const plan = simdPlanOf(res2());
    expect([plan.threads, plan.reason]).toEqual([1, undefined]);
    const os = require('os') as {availableParallelism(): number};
    const registry = (tf.env() as unknown as {flagRegistry: Record<string, {evaluationFn: () => number}>}).flagRegistry;
    expect(registry[CONV_BACKPROP_FILTERS_THREADS].evaluationFn()).toBe(Math.min(8, os.availableParallelism()));
  });
});

describe('the claim loop (thread_protocol.ts)', () => {
  // A job of three tasks on a shared memory (job tag 1): task 1 adds into the sums task 0 adds
  // into, after it; task 2 is independent.
  const STATES_AT = 1024;
  const [open, claimed, finished] = [OPEN, CLAIMED, FINISHED].map(status => taskState(1, status));
  function openJob(states: number[]) {
    const memory = new WebAssembly.Memory({initial: 1, maximum: 1, shared: true});
    const control = new Int32Array(memory.buffer, 0, CONTROL_WORDS);
    new Int32Array(memory.buffer, STATES_AT, states.length).set(states);
    Atomics.store(control, JOB, 512);
    Atomics.store(control, TASK_STATES, STATES_AT);
    Atomics.store(control, TASK_COUNT, states.length / 2);
    Atomics.store(control, CLAIM, openClaim(1));
    return {memory, control, states: new Int32Array(memory.buffer, STATES_AT, states.length)};
  }

  it('runs the tasks in order on one thread, marks each finished and raises the low-water mark past them', () => {
    const {memory, control, states} = openJob([-1, open, 0, open, -1, open]);
    const ran: number[] = [];
    expect(claimAndRun(memory, control, 0, (job, task) => {
      expect(job).toBe(512);
      ran.push(task);
    }, () => fail('nothing to wait for') ?? false)).toBe(3);
    expect(ran).toEqual([0, 1, 2]);
    expect(Array.from(states)).toEqual([-1, finished, 0, finished, -1, finished]);
    expect([Atomics.load(control, DONE), Atomics.load(control, PROGRESS)]).toEqual([3, 3]);
    expect(Atomics.load(control, CLAIM) & ((1 << TASK_BITS) - 1)).toBe(3);
  });

  it('skips a task whose predecessor another thread runs, runs a later ready one, then waits for progress', () => {
    // Task 0 is claimed by another thread, which finishes it while this one waits.
    const {memory, control, states} = openJob([-1, claimed, 0, open, -1, open]);
    const events: string[] = [];
    const ran = claimAndRun(memory, control, 0, (_, task) => events.push(`run ${task}`), (words, seen) => {
      events.push(`wait (progress ${seen})`);
      Atomics.store(states, 1, finished);
      Atomics.add(words, PROGRESS, 1);
      return true;
    });
    expect(ran).toBe(2);
    expect(events).toEqual(['run 2', 'wait (progress 1)', 'run 1']);
    expect(Array.from(states)).toEqual([-1, finished, 0, finished, -1, finished]);
  });

  it('claims no task of another job: a state with another tag is not open to it', () => {
    const stale = taskState(2, OPEN);
    const {memory, control, states} = openJob([-1, stale, -1, stale, -1, stale]);
    expect(claimAndRun(memory, control, 0, () => fail('ran a task of another job'), () => fail('waited') ?? false)).toBe(0);
    expect(Array.from(states)).toEqual([-1, stale, -1, stale, -1, stale]);
  });

  it('gives up, running nothing more, when the wait for progress gives up (a stalled job)', () => {
    // Task 0 is claimed by a thread that never finishes it; task 2 is done.
    const {memory, control, states} = openJob([-1, claimed, 0, open, -1, finished]);
    const ran: number[] = [];
    const result = claimAndRun(memory, control, 0, (_, task) => ran.push(task), () => false);
    expect(result).toBe(-1);
    expect(ran).toEqual([]);
    expect(Array.from(states)).toEqual([-1, claimed, 0, open, -1, finished]);
  });
});

describe('the pool (thread_pool.ts)', () => {
  it("wakes the job's workers when it opens a job, before any task is published, and each publish wakes them again", () => {
    // No worker starts: the pool only writes the words each worker parks on.
    const memory = new WebAssembly.Memory({initial: 1, maximum: 1, shared: true});
    const emptyModule = new WebAssembly.Module(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
    const pool = new ThreadPool(emptyModule, memory, 0);
    const control = new Int32Array(memory.buffer, 0, CONTROL_WORDS);
    const wakeWords = () => [0, 1, 2].map(worker => Atomics.load(control, WAKE + worker));
    const before = wakeWords();
    const job = pool.open(512, 1024, 3);
    const opened = wakeWords();
    expect(Atomics.load(control, TASK_COUNT)).toBe(0);
    expect(opened[0]).not.toBe(before[0]);
    expect(opened[1]).not.toBe(before[1]);
    expect(opened[2]).toBe(before[2]);  // the third worker is not in a job of 3 threads
    job.publish(0);
    const published = wakeWords();
    expect(published[0]).not.toBe(opened[0]);
    expect(published[1]).not.toBe(opened[1]);
    expect(published[2]).toBe(before[2]);
    pool.dispose();
  });
});

describe('threads that do not pay (CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE)', () => {
  const input = () => tf.tensor(seededValues(2 * 28 * 28 * 64, 7), [2, 28, 28, 64]);
  const outputDelta = () => tf.tensor(seededValues(2 * 28 * 28 * 64, 8), [2, 28, 28, 64]);
  const attrs = {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]};
  const res2 = () => tf.tidy(() => convolutionBackpropFilters(input(), outputDelta(), attrs).dataSync() as Float32Array);
  const res2Plan = () => simdPlanOf(computeGeometry(
      'ConvolutionBackpropFilters', {input: {shape: [2, 28, 28, 64], dtype: 'float32'}, outputDelta: {shape: [2, 28, 28, 64], dtype: 'float32'}},
      attrs));
  /** The suite's outcomes, replaced for a spec. */
  let suiteOutcomes: ThreadOutcomes;
  let lines: string[];
  const paths = () => lines.filter(l => l.startsWith(VERBOSE_PREFIX)).map(l => l.split(',')[4]);

  /** Real outcomes that also keep every call's record. */
  class RecordedOutcomes extends ThreadOutcomes {
    readonly records: Array<[ThreadWay, number]> = [];
    override record(key: string, way: ThreadWay, ms: number) {
      this.records.push([way, ms]);
      super.record(key, way, ms);
    }
  }

  beforeAll(async () => {
    suiteOutcomes = simdTesting.threadOutcomes;
    await tf.setBackend('cpu');
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, 2);
    expect(await simdThreadsReady()).toBe(2);
  });
  beforeEach(() => {
    lines = [];
    spyOn(console, 'log').and.callFake((...args: unknown[]) => lines.push(args.map(String).join(' ')));
    tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, true);
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, true);
  });
  afterEach(() => {
    tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, false);
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, false);
    simdTesting.threadOutcomes = suiteOutcomes;
  });
  afterAll(restoreSuiteThreads);

  it('is on by default', () => {
    const registry = (tf.env() as unknown as {flagRegistry: Record<string, {evaluationFn: () => boolean}>}).flagRegistry;
    expect(registry[CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE].evaluationFn()).toBe(true);
  });

  it("times a problem's calls on threads and on one thread, with the same values, and records each call", () => {
    const outcomes = new RecordedOutcomes();
    simdTesting.threadOutcomes = outcomes;
    const values = Array.from({length: 2 * TRIAL_CALLS + 1}, res2);
    // The try of one thread runs TRIAL_CALLS calls, or ends after its second (its first kept) where
    // that one took TRY_LOSS times the threads' median.
    const tryOfOne = outcomes.records.slice(TRIAL_CALLS).findIndex(([way]) => way !== 'one');
    const oneCalls = tryOfOne < 0 ? TRIAL_CALLS : Math.min(tryOfOne, TRIAL_CALLS);
    expect(oneCalls).toBeGreaterThanOrEqual(2);
    expect(paths()).toEqual([
      ...new Array(TRIAL_CALLS).fill('simd threads=2'), ...new Array(oneCalls).fill('simd threads=1 (timing one thread)'),
      ...new Array(values.length - TRIAL_CALLS - oneCalls).fill(jasmine.stringMatching(/^simd threads=(2|1 \(2 threads measured slower\))$/)),
    ]);
    expect(outcomes.records.slice(0, TRIAL_CALLS + oneCalls).map(([way]) => way))
        .toEqual([...new Array(TRIAL_CALLS).fill('threads'), ...new Array(oneCalls).fill('one')]);
    expect(outcomes.records.length).toBe(values.length);
    expect(outcomes.records.every(([, ms]) => ms > 0)).toBeTrue();
    for (const other of values.slice(1)) expect(bits(other)).withContext('threads and one thread').toEqual(bits(values[0]));
  });

  it('runs on one thread while threads have been slower, says so in the plan and the verbose line, with the same values', () => {
    const threaded = res2();
    simdTesting.threadOutcomes = new class extends ThreadOutcomes {
      override next(): ThreadChoice {
        return {way: 'one', reason: 'measured'};
      }
      override peek(): ThreadChoice {
        return {way: 'one', reason: 'measured'};
      }
    }();
    expect([res2Plan().threads, res2Plan().reason]).toEqual([1, '2 threads measured slower']);
    // The choice's verdict is by design only where the adaptive choice is on (the benches' --adaptive).
    expect([oneThreadByDesign(res2Plan().reason, true), oneThreadByDesign(res2Plan().reason, false)]).toEqual([true, false]);
    expect(oneThreadByDesign('workers starting', true)).withContext('for want of threads').toBeFalse();
    const alone = res2();
    expect(paths()).toEqual(['simd threads=2', 'simd threads=1 (2 threads measured slower)']);
    expect(bits(alone)).withContext('one thread by choice').toEqual(bits(threaded));
  });

  it('neither chooses nor records with the flag false', () => {
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, false);
    const outcomes = new RecordedOutcomes();
    simdTesting.threadOutcomes = outcomes;
    res2();
    res2();
    expect(paths()).toEqual(['simd threads=2', 'simd threads=2']);
    expect(outcomes.records).toEqual([]);
  });
});

describe('threads that fail', () => {
  const res2 = () => tf.tidy(() => convolutionBackpropFilters(
      tf.tensor(seededValues(2 * 28 * 28 * 64, 7), [2, 28, 28, 64]), tf.tensor(seededValues(2 * 28 * 28 * 64, 8), [2, 28, 28, 64]),
      {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]}).dataSync() as Float32Array);
  let oneThread: Float32Array;
  let lines: string[];
  const lastPath = () => lines.filter(l => l.startsWith(VERBOSE_PREFIX)).pop()?.split(',')[4];

  beforeAll(async () => {
    await tf.setBackend('cpu');
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, 0);
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, 1);
    oneThread = res2();
  });
  beforeEach(async () => {
    lines = [];
    spyOn(console, 'log').and.callFake((...args: unknown[]) => lines.push(args.map(String).join(' ')));
    tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, true);
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, 2);
    expect(await simdThreadsReady()).toBe(2);
  });
  afterEach(async () => {
    tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, false);
    overrideWorkerFactoryForTesting(undefined);
    threadPoolTesting.stallMs = 10000;
    stopSimdThreads();
    resetPoolFailureForTesting();
  });
  afterAll(restoreSuiteThreads);

  it('runs on one thread, with the same values, once a worker died between calls', async () => {
    expect(bits(res2())).toEqual(bits(oneThread));
    expect(lastPath()).toBe('simd threads=2');
    currentThreadPool()!.killWorkerForTesting(0);
    // Right after the kill, before Node reports the exit: the caller does the tasks the dead worker does not claim.
    expect(bits(res2())).toEqual(bits(oneThread));
    const start = Date.now();
    while (poolFailureReason() === undefined && Date.now() - start < 10000) await new Promise(r => setTimeout(r, 10));
    expect(poolFailureReason()).toMatch(/^worker exited/);
    expect(bits(res2())).toEqual(bits(oneThread));
    expect(lastPath()).toMatch(/^simd threads=1 \(worker exited/);
  });

  it('runs on one thread when no worker can start', async () => {
    stopSimdThreads();
    overrideWorkerFactoryForTesting(() => {
      throw new Error('Content Security Policy: blob workers are not allowed');
    });
    expect(bits(res2())).toEqual(bits(oneThread));
    expect(lastPath()).toBe('simd threads=1 (worker failed to start: Error: Content Security Policy: blob workers are not allowed)');
    expect(await simdThreadsReady()).toBe(1);
    overrideWorkerFactoryForTesting(null);
    resetPoolFailureForTesting();
    expect(bits(res2())).toEqual(bits(oneThread));
    expect(lastPath()).toBe('simd threads=1 (no workers)');
  });

  it('runs on one thread while the workers start, then on them', async () => {
    stopSimdThreads();
    expect(bits(res2())).toEqual(bits(oneThread));
    expect(lastPath()).toBe('simd threads=1 (workers starting)');
    expect(await simdThreadsReady()).toBe(2);
    expect(bits(res2())).toEqual(bits(oneThread));
    expect(lastPath()).toBe('simd threads=2');
  });

  it('recomputes the call on one thread, with the same values, when a worker stops in the middle of a task', async () => {
    stopSimdThreads();
    // A worker that claims one task of each job and never finishes it (as a thread killed mid-task would).
    const {Worker} = require('worker_threads') as typeof import('worker_threads');
    const stopping = `
      const {workerData: {memory, controlAt, index}} = require('worker_threads');
      const control = new Int32Array(memory.buffer, controlAt, ${CONTROL_WORDS});
      const never = new Int32Array(new SharedArrayBuffer(4));
      Atomics.or(control, ${READY}, 1 << index);
      for (;;) {
        const wake = Atomics.load(control, ${WAKE} + index);
        const claim = Atomics.load(control, ${CLAIM});
        const count = Atomics.load(control, ${TASK_COUNT});
        if (claim !== ${CLOSED}) {
          const open = (claim >>> ${TASK_BITS}) << ${TASK_STATE_BITS};
          const states = new Int32Array(memory.buffer, Atomics.load(control, ${TASK_STATES}), 2 * count);
          for (let task = claim & ${(1 << TASK_BITS) - 1}; task < count; task++) {
            if (Atomics.compareExchange(states, 2 * task + 1, open, open + ${CLAIMED}) === open) for (;;) Atomics.wait(never, 0, 0);
          }
        }
        Atomics.wait(control, ${WAKE} + index, wake);
      }`;
    const started: Array<InstanceType<typeof Worker>> = [];
    overrideWorkerFactoryForTesting(start => {
      const worker = new Worker(stopping, {eval: true, workerData: start});
      worker.unref();
      started.push(worker);
      return {terminate: () => void worker.terminate()};
    });
    threadPoolTesting.stallMs = 200;
    expect(await simdThreadsReady()).toBe(2);
    let calls = 0;
    while (poolFailureReason() === undefined && calls < 20) {
      expect(bits(res2())).toEqual(bits(oneThread));
      calls++;
    }
    expect(poolFailureReason()).toBe('a worker stopped in the middle of a task');
    expect(lastPath()).toBe('simd threads=1 (pool failed)');
    expect(bits(res2())).toEqual(bits(oneThread));
    expect(lastPath()).toBe('simd threads=1 (a worker stopped in the middle of a task)');
    await Promise.all(started.map(w => w.terminate()));
  });

  it('keeps its workers and its memory over 2,000 calls, and leaves no tensor behind', async () => {
    const pool = currentThreadPool()!;
    const call = () => tf.tidy(() => convolutionBackpropFilters(
        tf.ones([2, 9, 9, 8]), tf.ones([2, 9, 9, 8]), {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]})
        .dataSync());
    call();
    const memoryBytes = pool.memory.buffer.byteLength;
    const tensors = tf.memory().numTensors;
    for (let i = 0; i < 2000; i++) call();
    expect(currentThreadPool()).toBe(pool);
    expect(pool.workerCount).toBe(1);
    expect(pool.memory.buffer.byteLength).toBe(memoryBytes);
    expect(tf.memory().numTensors).toBe(tensors);
    expect(lastPath()).toBe('simd threads=2');
  });
});

describe('threads in a Node process', () => {
  it('never keep it alive: a script that ran threaded calls exits on its own', () => {
    const script = `
      const tf = require('@tensorflow/tfjs-core');
      require('@tensorflow/tfjs-backend-cpu');
      const ops = require('./kernels/index');
      (async () => {
        await tf.setBackend('cpu');
        tf.env().set(ops.CONV_BACKPROP_FILTERS_THREADS, 2);
        const threads = await ops.simdThreadsReady();
        const x = tf.ones([2, 28, 28, 32]);
        const sum = tf.sum(ops.convolutionBackpropFilters(x, x, {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]})).dataSync()[0];
        console.log('threads', threads, 'sum', sum);
      })();`;
    const root = path.resolve(__dirname, '..');
    const result = spawnSync(path.join(root, 'node_modules', '.bin', 'tsx'), ['-e', script], {cwd: root, timeout: 60000, encoding: 'utf8'});
    expect(result.signal).withContext('killed by the timeout: the process did not exit').toBeNull();
    expect(result.status).withContext(result.stderr).toBe(0);
    // Per filter element, the positions whose 3×3 window (pads 1) stays in 28×28, over 2 samples.
    const positions = 28 * 28 + 4 * 27 * 28 + 4 * 27 * 27;
    expect(result.stdout).toContain(`threads 2 sum ${2 * positions * 32 * 32}`);
  });
});

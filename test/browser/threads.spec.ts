/**
 * The cpu and wasm kernels' SIMD path in the browser, on worker threads where the page allows
 * them. `npm run test:browser` runs this file twice: in the main suite, on a cross-origin-isolated
 * page (karma.conf.js sends COOP/COEP headers), where SharedArrayBuffer exists and the kernels
 * run on 2 threads from Web Workers started from a Blob URL, the main thread spinning while it
 * waits; and alone on a plain page (KARMA_PAGE=plain), where SharedArrayBuffer is missing and
 * they run on the calling thread. Both run the case table, the PyTorch golden cases, hostile
 * inputs and memory under load on cpu and wasm, and the isolated page compares 1, 2 and 3
 * threads bitwise over the case table and test/helpers/simd_problems.ts's THREAD_LAYERS.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import {setWasmPaths} from '@tensorflow/tfjs-backend-wasm';

import {CONV_BACKPROP_FILTERS_THREADS, CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, CONV_BACKPROP_FILTERS_VERBOSE, convolutionBackpropFilters, convTransposeBackpropFilters, simdThreadsReady} from '../../kernels/index';
import {CASES} from '../cases';
import {runHostileSample} from '../fuzz/hostile';
import {generateProblem} from '../fuzz/problems';
import {problemSeed} from '../fuzz/random';
import {expectedOf, memorySnapshot, runProblem} from '../fuzz/runner';
import {CI_SEED, fuzzSettings} from '../fuzz/settings';
import golden from '../golden/golden.json';
import {runCaseEverywhere} from '../helpers/run_case';
import {THREAD_LAYERS} from '../helpers/simd_problems';
import {seededValues} from '../helpers/util';
import {referenceFilterGradient, ReferenceAttrs} from '../reference';
import {VERBOSE_PREFIX} from '../../src/verbose';

declare const __karma__: {config: {threadsPage?: 'isolated' | 'plain'}};
const page = __karma__.config.threadsPage ?? 'isolated';
const isolated = page === 'isolated';
const THREADS = 2;
const size = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/** The path the verbose line prints on `threads` threads (the relaxed build where the engine has it). */
const threadedPath = (threads: number, reason?: string) =>
    new RegExp(`^simd( relaxed)? threads=${threads}${reason ? ` \\(${reason}\\)` : ''}$`);
const expectedPath = () => isolated ? threadedPath(THREADS) : threadedPath(1, 'not cross-origin isolated');

/** The path of one call of a 2×28×28×32 3×3 layer, as the verbose line prints it. */
function pathOfLayerCall(): string {
  const lines: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => lines.push(args.map(String).join(' '));
  tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, true);
  try {
    tf.tidy(() => convolutionBackpropFilters(
        tf.ones([2, 28, 28, 32]), tf.ones([2, 28, 28, 32]), {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]}));
  } finally {
    tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, false);
    console.log = log;
  }
  return lines.filter(l => l.startsWith(VERBOSE_PREFIX)).map(l => l.split(',')[4]).join(' ');
}

describe(`cpu and wasm kernels on a ${isolated ? 'cross-origin-isolated' : 'plain'} page:`, () => {
  let previousBackend: string;
  beforeAll(async () => {
    previousBackend = tf.getBackend();
    setWasmPaths('/base/node_modules/@tensorflow/tfjs-backend-wasm/dist/');
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, THREADS);
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, 0);
    // Every call on the threads asked for, whether they have paid for the problem or not.
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, false);
  });
  afterAll(async () => {
    if (previousBackend) await tf.setBackend(previousBackend);
  });

  it(isolated ? 'has SharedArrayBuffer and starts the worker threads' : 'has no SharedArrayBuffer and runs on one thread', async () => {
    expect(self.crossOriginIsolated).toBe(isolated);
    expect(typeof SharedArrayBuffer !== 'undefined').toBe(isolated);
    expect(await tf.setBackend('cpu')).toBe(true);
    expect(await simdThreadsReady()).toBe(isolated ? THREADS : 1);
    expect(pathOfLayerCall()).toMatch(expectedPath());
  });

  for (const backend of ['cpu', 'wasm']) {
    describe(`on ${backend}`, () => {
      beforeAll(async () => {
        expect(await tf.setBackend(backend)).toBe(true);
        await simdThreadsReady();
      });

      it(`runs on ${isolated ? THREADS : 1} thread(s)`, () => {
        expect(pathOfLayerCall()).toMatch(expectedPath());
      });

      it('computes the case table', () => {
        for (const c of CASES) {
          const input = {shape: c.inputShape, values: seededValues(size(c.inputShape), c.seed)};
          const outputDelta = {shape: c.outputDeltaShape, values: seededValues(size(c.outputDeltaShape), c.seed + 1000)};
          const expected = referenceFilterGradient(
              c.op === 'ConvTransposeBackpropFilters', input, outputDelta,
              {...(c.attrs as Omit<ReferenceAttrs, 'kernel'>), kernel: c.kernel});
          runCaseEverywhere({...c, input, outputDelta, expected}, {opOnly: true});
        }
      });

      it(`computes the PyTorch ${golden.torch} golden cases`, () => {
        for (const c of golden.cases) {
          runCaseEverywhere({
            ...c,
            op: c.op as never,
            input: {shape: c.input.shape, values: Float32Array.from(c.input.values)},
            outputDelta: {shape: c.outputDelta.shape, values: Float32Array.from(c.outputDelta.values)},
          }, {opOnly: true});
        }
      });

      it('rejects 300 hostile calls by name, leaving memory as it was', () => {
        const {failures} = runHostileSample(CI_SEED + 100, 300);
        expect(failures).withContext(failures.slice(0, 20).join('\n')).toEqual([]);
      });

      it('leaves memory where it started over 400 calls with mixed shapes', () => {
        const settings = fuzzSettings(backend);
        const pool = Array.from({length: 40}, (_, i) => generateProblem(problemSeed(CI_SEED + 200, i), {specials: settings.specials}));
        const expected = pool.map(expectedOf);
        const start = memorySnapshot();
        const failures: string[] = [];
        for (let call = 0; call < 400; call++) {
          const failure = runProblem(pool[call % 40], {atol: settings.atol, rtol: settings.rtol}, expected[call % 40]);
          if (failure !== undefined) failures.push(`call ${call}: ${failure}`);
        }
        expect(failures.slice(0, 10)).toEqual([]);
        expect(memorySnapshot()).toEqual(start);
      });

      if (isolated) {
        it('gives bitwise the same values with 1, 2 and 3 threads over the case table and a set of layers', async () => {
          // The relaxed-SIMD build where Chromium validates it: the layers reach its 16-lane
          // depthwise passes and 8-channel tiles, split between tasks differently per thread count.
          const bitsOf = (call: () => tf.Tensor) =>
              Array.from(new Uint32Array(tf.tidy(() => call().dataSync() as Float32Array).buffer));
          const runAll = async (threads: number) => {
            tf.env().set(CONV_BACKPROP_FILTERS_THREADS, threads);
            expect(await simdThreadsReady()).toBe(threads);
            const cases = CASES.map(c => bitsOf(() => {
              const input = tf.tensor(seededValues(size(c.inputShape), c.seed), c.inputShape);
              const outputDelta = tf.tensor(seededValues(size(c.outputDeltaShape), c.seed + 1000), c.outputDeltaShape);
              return convolutionBackpropFiltersOf(c.op)(input, outputDelta, c.attrs as never, c.filterShapeInput);
            }));
            const layers = THREAD_LAYERS.map((p, i) => bitsOf(() => {
              const op = p.op === 'conv' ? convolutionBackpropFilters : convTransposeBackpropFilters;
              return op(tf.tensor(seededValues(size(p.input), i + 1), p.input),
                        tf.tensor(seededValues(size(p.outputDelta), i + 101), p.outputDelta), p.attrs);
            }));
            return [...cases, ...layers];
          };
          try {
            const one = await runAll(1);
            for (const threads of [2, 3]) expect(await runAll(threads)).withContext(`${threads} threads`).toEqual(one);
          } finally {
            tf.env().set(CONV_BACKPROP_FILTERS_THREADS, THREADS);
          }
        });
      }
    });
  }
});

function convolutionBackpropFiltersOf(op: string) {
  return op === 'ConvolutionBackpropFilters' ? convolutionBackpropFilters : convTransposeBackpropFilters;
}

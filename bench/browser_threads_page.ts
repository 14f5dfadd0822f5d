/**
 * The browser half of `npm run bench:browser-threads` (see bench/browser_threads.ts): on the
 * cross-origin-isolated karma page, ours on cpu and on wasm with CONV_BACKPROP_FILTERS_THREADS 1
 * and N on each workload — a warm-up call each with the verbose flag on (the path that ran),
 * then timed runs round-robin, every other round reversed — and the 1- and N-thread results
 * compared bit for bit. Results go back to Node as one `BROWSER_THREADS_RESULT {json}` console
 * line; a page that is not cross-origin isolated, or a call asked for N threads that ran on fewer
 * for any reason but the threshold, ends the run with `failure` set.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import {setWasmPaths} from '@tensorflow/tfjs-backend-wasm';

import {computeGeometry, CONV_BACKPROP_FILTERS_THREADS, CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, CONV_BACKPROP_FILTERS_VERBOSE, CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD, convolutionBackpropFilters, convTransposeBackpropFilters, simdThreadsReady} from '../kernels/index';
import {oneThreadByDesign, simdPlanOf} from '../kernels/host/simd/simd_filter_gradient';
import type {ConvolutionBackpropFiltersAttrs, ConvTransposeBackpropFiltersAttrs} from '../src/attributes';
import {VERBOSE_PREFIX} from '../src/verbose';

import type {BitwiseCheck, BrowserImpl, BrowserMeasurement, BrowserThreadsPageInput, BrowserThreadsPageResult, BrowserWorkload, BrowserWorkloadResult, PlanSummary} from './browser_threads';
import {summarize} from './report';
import {callsPerRun, msPerCall} from './timed_calls';

declare const __karma__: {config: {args: string[]}};

/** A run that is not a measurement of threads: the page stops and reports why. */
class ThreadsDidNotRun extends Error {}

/** `call` once with the verbose flag on: its values and the path its verbose line printed. */
function verboseCall(call: () => tf.Tensor): {values: Float32Array; path: string} {
  const lines: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => lines.push(args.map(String).join(' '));
  tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, true);
  try {
    const result = call();
    const values = result.dataSync() as Float32Array;
    result.dispose();
    return {values, path: lines.filter(l => l.startsWith(VERBOSE_PREFIX)).map(l => l.split(',')[4]).join(' ')};
  } finally {
    tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, false);
    console.log = log;
  }
}

/**
 * Throws unless `path` is the SIMD path on the threads `impl` asked for, or on one thread for a
 * reason a user gets too (under the threshold, a problem of one task, or with `adaptive` the
 * choice's try of one thread or its verdict).
 */
function checkPath(w: BrowserWorkload, impl: BrowserImpl, path: string, adaptive: boolean) {
  const ran = /^simd(?: relaxed)? threads=(\d+)(?: \((.*)\))?$/.exec(path);
  const threads = ran === null ? 0 : Number(ran[1]);
  const byDesign = ran !== null && threads === 1 && oneThreadByDesign(ran[2], adaptive);
  if (threads !== impl.threads && !byDesign) {
    throw new ThreadsDidNotRun(`${w.name}, ${impl.label}: asked for ${impl.threads} thread(s), ran "${path}"`);
  }
}

function bitwise(backend: BitwiseCheck['backend'], one: Float32Array, many: Float32Array): BitwiseCheck {
  const [a, b] = [new Uint32Array(one.buffer, one.byteOffset, one.length), new Uint32Array(many.buffer, many.byteOffset, many.length)];
  let differing = Math.abs(one.length - many.length);
  let maxAbs = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      differing++;
      maxAbs = Math.max(maxAbs, Math.abs(one[i] - many[i]));
    }
  }
  return {backend, elements: one.length, differing, maxAbs};
}

async function use(impl: BrowserImpl, input: BrowserThreadsPageInput) {
  if (tf.getBackend() !== impl.backend) await tf.setBackend(impl.backend);
  tf.env().set(CONV_BACKPROP_FILTERS_THREADS, impl.threads);
  // Off, every call runs on the threads asked for, to time what they give; `--adaptive` times a user's default.
  tf.env().set(CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, input.adaptive && impl.threads > 1);
}

async function runWorkload(w: BrowserWorkload, input: BrowserThreadsPageInput): Promise<BrowserWorkloadResult> {
  const op = w.args.kind === 'conv' ? 'ConvolutionBackpropFilters' : 'ConvTransposeBackpropFilters';
  const geometry = computeGeometry(
      op, {input: {shape: w.args.inputShape, dtype: 'float32'}, outputDelta: {shape: w.args.outputDeltaShape, dtype: 'float32'}},
      w.args.attrs as unknown as Record<string, unknown>);
  // One x and dy per backend (seeded: the same values on both), shared by its 1- and N-thread implementations.
  const tensors = new Map<string, {input: tf.Tensor; outputDelta: tf.Tensor}>();
  for (const backend of new Set(input.implementations.map(i => i.backend))) {
    await tf.setBackend(backend);
    tensors.set(backend, {
      input: tf.randomUniform(w.args.inputShape, -1, 1, 'float32', w.seed),
      outputDelta: tf.randomUniform(w.args.outputDeltaShape, -1, 1, 'float32', w.seed + 1),
    });
  }
  const callOf = (impl: BrowserImpl) => {
    const {input: x, outputDelta: dy} = tensors.get(impl.backend)!;
    return () => w.args.kind === 'conv' ? convolutionBackpropFilters(x, dy, w.args.attrs as ConvolutionBackpropFiltersAttrs) :
                                          convTransposeBackpropFilters(x, dy, w.args.attrs as ConvTransposeBackpropFiltersAttrs);
  };
  /** ms per call of `calls` back-to-back calls, the last read back. */
  const timed = async (impl: BrowserImpl, calls: number) => {
    await use(impl, input);
    return msPerCall(callOf(impl), calls);
  };
  try {
    const sessions: Array<{impl: BrowserImpl; values: Float32Array; path: string; calls: number; times: number[]}> = [];
    for (const impl of input.implementations) {
      await use(impl, input);
      const {values, path} = verboseCall(callOf(impl));
      checkPath(w, impl, path, input.adaptive);
      // The fastest of three single calls: one may be hit by a collection or a neighbour's load.
      const single = Math.min(await timed(impl, 1), await timed(impl, 1), await timed(impl, 1));
      const calls = callsPerRun(single, input.amortized.runMs, input.amortized.maxCalls);
      sessions.push({impl, values, path, calls, times: []});
    }
    for (let run = 0; run < w.runs; run++) {
      // Every other run in reverse order, so that no implementation always follows the same one.
      for (const s of run % 2 === 0 ? sessions : [...sessions].reverse()) s.times.push(await timed(s.impl, s.calls));
    }
    // The pool is still there after the timed runs: the N-thread plan now is the one the warm-up printed.
    let plan: PlanSummary | null = null;
    for (const s of sessions.filter(s => s.impl.threads > 1)) {
      await use(s.impl, input);
      const now = simdPlanOf(geometry);
      // With the adaptive choice the warm-up may have been a try of one thread; the plan must still have the threads or a reason.
      const consistent = input.adaptive ? now.threads === s.impl.threads || (now.threads === 1 && oneThreadByDesign(now.reason, true)) :
                                          s.path.includes(`threads=${now.threads}`);
      if (!consistent) {
        throw new ThreadsDidNotRun(`${w.name}, ${s.impl.label}: the warm-up ran "${s.path}", the plan after the timed runs has ${
            now.threads} thread(s) (${now.reason ?? 'no reason'})`);
      }
      plan = {threads: now.threads, reason: now.reason ?? null, units: now.units, slices: now.slices, unitParts: now.unitParts,
              steps: now.steps};
    }
    const checks = input.implementations.filter(i => i.threads > 1).map(many => {
      const one = sessions.find(s => s.impl.backend === many.backend && s.impl.threads === 1)!;
      return bitwise(many.backend, one.values, sessions.find(s => s.impl === many)!.values);
    });
    return {
      name: w.name,
      flops: geometry.flops,
      measurements: sessions.map((s): BrowserMeasurement =>
          ({impl: s.impl.key, times: s.times, timing: summarize(s.times), callsPerRun: s.calls, path: s.path})),
      plan,
      bitwise: checks,
    };
  } finally {
    for (const {input: x, outputDelta: dy} of tensors.values()) tf.dispose([x, dy]);
  }
}

describe('browser threads benchmark', () => {
  it('times ours on cpu and wasm on 1 and N threads', async () => {
    const input = JSON.parse(__karma__.config.args[0]) as BrowserThreadsPageInput;
    setWasmPaths('/base/node_modules/@tensorflow/tfjs-backend-wasm/dist/');
    expect(await tf.setBackend('wasm')).toBe(true);
    const wasmBackendSimd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT') as boolean;
    const wasmBackendThreads = await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT') as boolean;
    expect(await tf.setBackend('cpu')).toBe(true);
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, input.threads);
    const result: BrowserThreadsPageResult = {
      environment: {
        userAgent: navigator.userAgent,
        crossOriginIsolated: self.crossOriginIsolated,
        hardwareConcurrency: navigator.hardwareConcurrency,
        relaxedSimd: tf.env().getBool(CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD),
        thresholdMflop: tf.env().getNumber(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP),
        threadsReady: await simdThreadsReady(),
        tfjs: tf.version_core,
        wasmBackendSimd,
        wasmBackendThreads,
      },
      workloads: [],
      failure: null,
    };
    const e = result.environment;
    console.log(`crossOriginIsolated ${e.crossOriginIsolated}, hardwareConcurrency ${e.hardwareConcurrency}, ${
        e.relaxedSimd ? 'relaxed' : 'plain'} SIMD, ${e.threadsReady} of ${input.threads} threads ready`);
    try {
      if (input.threads > 1 && !e.crossOriginIsolated) throw new ThreadsDidNotRun('the page is not cross-origin isolated');
      if (e.threadsReady !== input.threads) throw new ThreadsDidNotRun(`${e.threadsReady} of ${input.threads} threads started`);
      // --pin: Node pins the page's threads as they appear; the workers are ready, so they are there to pin.
      if (input.pinWaitMs > 0) await new Promise(resolve => setTimeout(resolve, input.pinWaitMs));
      for (const w of input.workloads) {
        const r = await runWorkload(w, input);
        result.workloads.push(r);
        console.log(`done ${w.name}: ${r.measurements.map(m => `${m.impl} ${m.timing.median.toFixed(3)} ms ×${m.callsPerRun} (${m.path})`)
                                          .join(', ')}${r.bitwise.some(b => b.differing > 0) ? ' — 1 and N threads DIFFER' : ''}`);
      }
    } catch (error) {
      if (!(error instanceof ThreadsDidNotRun)) throw error;
      (result as {failure: string | null}).failure = error.message;
      console.log(`THREADS DID NOT RUN: ${error.message}`);
    }
    console.log(`BROWSER_THREADS_RESULT ${JSON.stringify(result)}`);
    expect(result.failure).toBeNull();
  });
});

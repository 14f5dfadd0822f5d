import {simdTesting} from '../../kernels/host/simd/simd_filter_gradient';
import {computeGeometry} from '../../kernels/index';
import {gflops, summarize, Timing} from '../report';
import {callsPerRun} from '../timed_calls';
import {describeProblem, Problem, shortName, toOpArguments} from '../workloads';

import {Impl, ImplKey, Memory, opName, Session} from './implementations';
import {Options} from './options';
import {MAX_CALLS_PER_RUN, RUN_MS} from './picks';

export interface Measurement {
  impl: ImplKey;
  timing: Timing;
  gflops: number;
  memory: Memory;
  /** max |impl − base| / max |base|, base = the TypeScript loops, else ours cpu SIMD (null: not compared). */
  difference: number | null;
  /** Calls per timed run (several, with one read-back, where a call is shorter than RUN_MS; PyTorch: 1). */
  callsPerRun?: number;
  /** ms per call of each timed run, in the order run (round r of every implementation at index r). */
  times: number[];
  /** Ours on N threads with the adaptive choice on (--adaptive): of its timed calls, those it ran on the threads. */
  adaptiveCalls?: {onThreads: number; all: number};
}

export interface WorkloadResult {
  name: string;
  label: string;
  source: string;
  descriptor: string;
  batch: number;
  fileBatch: number;
  shape: string;
  /** One input channel per group (depthwise, any channel multiplier). */
  depthwise: boolean;
  flops: number;
  /** Bytes of input + outputDelta, and of the gradient. */
  dataBytes: number;
  outputBytes: number;
  measurements: Measurement[];
}

/** max |a − b| / max |b|. */
function relativeDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let worst = 0;
  let scale = 0;
  for (let i = 0; i < b.length; i++) {
    worst = Math.max(worst, Math.abs(a[i] - b[i]));
    scale = Math.max(scale, Math.abs(b[i]));
  }
  return worst / Math.max(scale, Number.MIN_VALUE);
}

/**
 * Sets up every implementation on one workload, warms each up, then times them round-robin. A run
 * of ours and of tfjs's wasm kernel is as many back-to-back calls as take about RUN_MS (from the
 * fastest of three untimed calls after the warm-up; at least one), with one read-back; PyTorch
 * times one call itself, and a single-call implementation (tfjs's cpu kernel) is its warm-up.
 */
export async function runWorkload(
    problem: Problem, batch: number, seed: number, impls: readonly Impl[], options: Options): Promise<WorkloadResult> {
  const args = toOpArguments(problem, batch);
  const geometry = computeGeometry(
      opName(problem),
      {input: {shape: args.inputShape, dtype: 'float32'}, outputDelta: {shape: args.outputDeltaShape, dtype: 'float32'}},
      args.attrs as unknown as Record<string, unknown>);
  const sessions: Array<{
    impl: Impl; session: Session; times: number[]; calls: number; memory?: Memory; values?: Float32Array | null;
    adaptiveCalls?: {onThreads: number; all: number};
  }> = [];
  for (const impl of impls) {
    const session = await impl.setUp(problem, batch, seed);
    const adaptive = options.adaptive && (impl.key === 'simdThreads' || impl.key === 'wasmThreads');
    if (session !== null) sessions.push({impl, session, times: [], calls: 1, adaptiveCalls: adaptive ? {onThreads: 0, all: 0} : undefined});
  }
  /** A timed run of `s`, counting the ways the adaptive choice took (ThreadOutcomes.tally). */
  const timedRun = async (s: typeof sessions[number]) => {
    const tally = simdTesting.threadOutcomes.tally;
    const [threads, one] = [tally.threads, tally.one];
    s.times.push(await s.session.call(s.calls));
    if (s.adaptiveCalls !== undefined) {
      s.adaptiveCalls.onThreads += tally.threads - threads;
      s.adaptiveCalls.all += tally.threads - threads + tally.one - one;
    }
  };
  try {
    const warmUp = async (s: typeof sessions[number]) => {
      const {memory, values, ms: elapsed} = await s.session.warmUp();
      s.memory = memory;
      s.values = values;
      if (s.impl.warmUpIsRun) s.times.push(elapsed);
    };
    for (const s of sessions) {
      if (!s.impl.warmUpIsRun) await warmUp(s);
      if (!s.impl.warmUpIsRun && !s.impl.key.startsWith('pytorch')) {
        // The fastest of three single calls: one may be hit by a collection or a neighbour's load.
        const single = Math.min(await s.session.call(1), await s.session.call(1), await s.session.call(1));
        s.calls = callsPerRun(single, RUN_MS, MAX_CALLS_PER_RUN);
      }
    }
    // A single-call implementation runs in the middle of the others' timed runs, so that they are
    // timed both before and after it.
    const most = Math.max(...sessions.map(s => s.impl.runs(options)));
    for (let run = 0; run < most; run++) {
      if (run === most >> 1) {
        for (const s of sessions) {
          if (s.impl.warmUpIsRun) await warmUp(s);
        }
      }
      // Every other run in reverse order, so that no implementation always follows the same one.
      for (const s of run % 2 === 0 ? sessions : [...sessions].reverse()) {
        if (!s.impl.warmUpIsRun && run < s.impl.runs(options)) await timedRun(s);
      }
    }
  } finally {
    for (const s of sessions) await s.session.dispose();
  }
  const baseKey: ImplKey = sessions.some(s => s.impl.key === 'typescript') ? 'typescript' : 'simd';
  const base = sessions.find(s => s.impl.key === baseKey)?.values ?? null;
  const elements = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);
  return {
    name: problem.name,
    label: shortName(problem),
    source: `${problem.source}:${problem.line}`,
    descriptor: problem.descriptor,
    batch,
    fileBatch: problem.batch,
    shape: describeProblem(problem),
    depthwise: problem.groups > 1 && problem.ic === problem.groups,
    flops: geometry.flops,
    dataBytes: 4 * (elements(args.inputShape) + elements(args.outputDeltaShape)),
    outputBytes: 4 * elements(geometry.filterShape),
    measurements: sessions.map(s => {
      const timing = summarize(s.times);
      return {
        impl: s.impl.key,
        callsPerRun: s.calls,
        times: s.times,
        timing,
        gflops: gflops(geometry.flops, timing.median),
        memory: s.memory!,
        difference: base !== null && s.values != null && s.impl.key !== baseKey ? relativeDifference(s.values, base) : null,
        ...(s.adaptiveCalls !== undefined ? {adaptiveCalls: s.adaptiveCalls} : {}),
      };
    }),
  };
}


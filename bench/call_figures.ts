/**
 * What `npm run bench:timeline` (bench/call_timeline.ts) times and reads off a call's timeline:
 * the layers, and each call's figures (ms from the call's start, kernels/host/simd/call_timeline.ts).
 */
import {computeGeometry} from '../kernels/index';
import {CallTimeline} from '../kernels/host/simd/call_timeline';

import {PICKS, THREAD_TARGETS, TRAINING_FILE} from './cpu/picks';
import {findProblem, loadAllWorkloads, loadWorkloadFile, OpArguments, Problem, toOpArguments} from './workloads';

/** What one call's timeline says, in ms. */
export interface CallFigures {
  /** From the op's call to its result read back. */
  wall: number;
  /** In the SIMD path: from its entry to the filter copied out. */
  simd: number;
  /** The calling thread's time before its first chunk (the plan, before it packs or wakes a worker). */
  planned: number;
  /** When the calling thread published its last step (on one thread: packed it, its tasks run between steps). */
  packed: number;
  /** Task time per thread (index 0: the calling thread). */
  tasks: number[];
  /** When worker 0 started its first task (NaN on one thread, or when it ran none). */
  workerStart: number;
  /** The calling thread's wait for other threads' tasks: from its own last task to the chunk done. */
  callerWait: number;
}

/** The figures of one call from its timeline and its wall time. */
export function figuresOf(timeline: CallTimeline, wall: number): CallFigures {
  const at = (phase: string) => timeline.events.filter(e => e.phase === phase).map(e => e.at);
  const tasks = Array.from({length: timeline.threads}, (_, thread) =>
      timeline.tasks.filter(t => t.thread === thread).reduce((sum, t) => sum + t.end - t.start, 0));
  const workerRuns = timeline.tasks.filter(t => t.thread === 1);
  const callerEnd = Math.max(0, ...timeline.tasks.filter(t => t.thread === 0).map(t => t.end));
  return {
    wall,
    simd: at('copied')[0],
    planned: at('planned')[0],
    packed: Math.max(...at('step')),
    tasks,
    workerStart: workerRuns.length === 0 ? NaN : Math.min(...workerRuns.map(t => t.start)),
    callerWait: timeline.threads === 1 ? 0 : Math.max(0, Math.max(...at('chunk done')) - callerEnd),
  };
}

export const mflopOf = (args: OpArguments) => computeGeometry(
    args.kind === 'conv' ? 'ConvolutionBackpropFilters' : 'ConvTransposeBackpropFilters',
    {input: {shape: args.inputShape, dtype: 'float32'}, outputDelta: {shape: args.outputDeltaShape, dtype: 'float32'}},
    args.attrs as unknown as Record<string, unknown>).flops / 1e6;

/** A layer to time: its workload and the op's arguments. */
export interface TimedLayer {
  readonly problem: Problem;
  readonly args: OpArguments;
}

/** Layers by name (file:name or name), each at npm run bench's batch where it times the layer, else the file's. */
export function namedLayers(names: readonly string[]): TimedLayer[] {
  const problems = loadAllWorkloads();
  return names.map(name => {
    const problem = findProblem(problems, name);
    return {problem, args: toOpArguments(problem, PICKS.find(p => p.name === problem.name)?.batch ?? problem.batch)};
  });
}

/**
 * The layers of issue 31's thread targets: npm run bench's layers (picks and training layers) of
 * at least THREAD_TARGETS.bigLayerMflop, then its other training layers of at least
 * THREAD_TARGETS.trainingLayerMflop, each at the batch npm run bench times it.
 */
export function targetLayers(): TimedLayer[] {
  const picks = PICKS.map(pick => {
    const problem = findProblem(loadWorkloadFile(pick.file), pick.name);
    return {problem, args: toOpArguments(problem, pick.batch)};
  });
  const training = loadWorkloadFile(TRAINING_FILE).map(problem => ({problem, args: toOpArguments(problem, problem.batch)}));
  return [
    ...[...picks, ...training].filter(l => mflopOf(l.args) >= THREAD_TARGETS.bigLayerMflop),
    ...training.filter(l => mflopOf(l.args) >= THREAD_TARGETS.trainingLayerMflop && mflopOf(l.args) < THREAD_TARGETS.bigLayerMflop),
  ];
}


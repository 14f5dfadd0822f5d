import {env} from '@tensorflow/tfjs-core';

import {CanonicalTensor, FilterGradientGeometry, SpatialAxis, spatialAxesAs3d} from '../../../src/geometry';
import {registerFlagOnce} from '../../../src/tuning_flags';
import {windowRanges} from '../filter_gradient';

import {MICRO_KERNELS_PLAIN_WASM_BASE64, MICRO_KERNELS_RELAXED_WASM_BASE64, MICRO_KERNELS_SHARED_PLAIN_WASM_BASE64, MICRO_KERNELS_SHARED_RELAXED_WASM_BASE64} from './micro_kernels_wasm.generated';
import {CallTimeline, CallTimelineRecorder, taskLogBytes} from './call_timeline';
import {copyFloats, SharedCopyMethod, sharedCopyMethod} from './float_copy';
import {CONTROL_BYTES, CONTROL_WORDS, MAX_TASKS, runTaskLogged, TASK_LOG_AT} from './thread_protocol';
import {ThreadChoice, ThreadOutcomes} from './thread_outcomes';
import {MAX_THREADS, reportedCores, ThreadPool, threadsUnavailable} from './thread_pool';

/**
 * The tfjs flag choosing the WebAssembly SIMD path of the cpu and wasm kernels:
 * `tf.env().set('CONV_BACKPROP_FILTERS_WASM_SIMD', false)` runs the plain TypeScript loops
 * instead. Defaults to whether this JavaScript engine compiles WebAssembly SIMD.
 */
export const CONV_BACKPROP_FILTERS_WASM_SIMD = 'CONV_BACKPROP_FILTERS_WASM_SIMD';

/**
 * The tfjs flag choosing the relaxed-SIMD build of the micro-kernels (f32x4.relaxed_madd: one
 * fused multiply-add, one rounding, where the CPU has FMA). Defaults to whether this engine
 * validates relaxed SIMD; false forces the plain build, whose results are the same on every
 * machine.
 */
export const CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD = 'CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD';

/**
 * The tfjs flag setting how many threads the SIMD path may use, the calling thread included:
 * 1 runs on the calling thread alone. Defaults to the cores the runtime reports
 * (`os.availableParallelism()`, `navigator.hardwareConcurrency`), at most DEFAULT_MAX_THREADS.
 */
export const CONV_BACKPROP_FILTERS_THREADS = 'CONV_BACKPROP_FILTERS_THREADS';

/**
 * The tfjs flag giving the smallest problem, in MFLOP (2·N·O·(C/G)·K·out-spatial), that runs on
 * threads: below it the fork and join cost more than a second thread gains.
 */
export const CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP = 'CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP';

/**
 * The tfjs flag letting each problem's calls run on one thread while that has been faster than
 * the threads asked for (thread_outcomes.ts): on a machine whose other cores are busy, threads
 * can cost more than they gain. false runs every problem over the threshold on the threads asked
 * for, faster or not. Default true.
 */
export const CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE = 'CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE';

/** The default thread count never exceeds this (memory bandwidth, not cores, limits beyond it). */
export const DEFAULT_MAX_THREADS = 8;
/** Default of CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP (docs/threads.md: the layers that chose it). */
export const DEFAULT_THREADS_MIN_MFLOP = 10;

/** Registers the flags (idempotent; a value already set is kept). */
export function registerWasmSimdFlag() {
  registerFlagOnce(CONV_BACKPROP_FILTERS_WASM_SIMD, () => microKernelModule('PLAIN') !== null);
  registerFlagOnce(CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD, () => microKernelModule('RELAXED') !== null);
  registerFlagOnce(CONV_BACKPROP_FILTERS_THREADS, () => Math.min(reportedCores(), DEFAULT_MAX_THREADS));
  registerFlagOnce(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, () => DEFAULT_THREADS_MIN_MFLOP);
  registerFlagOnce(CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, () => true);
}

export function wasmSimdEnabled(): boolean {
  registerWasmSimdFlag();
  return env().getBool(CONV_BACKPROP_FILTERS_WASM_SIMD) && microKernelModule('PLAIN') !== null;
}

/** Whether the relaxed-SIMD build runs: the flag allows it and the engine validates it. */
function relaxedSimdChosen(): boolean {
  registerWasmSimdFlag();
  return env().getBool(CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD) && microKernelModule('RELAXED') !== null;
}

interface MicroKernels {
  heapBase(): number;
  runTask(job: number, task: number): void;
  storeUnits(job: number, sums: number, unitFirst: number, unitEnd: number): void;
}

type Build = 'PLAIN'|'RELAXED'|'SHARED_PLAIN'|'SHARED_RELAXED';
const BUILD_BYTES: Record<Build, string> = {
  PLAIN: MICRO_KERNELS_PLAIN_WASM_BASE64,
  RELAXED: MICRO_KERNELS_RELAXED_WASM_BASE64,
  SHARED_PLAIN: MICRO_KERNELS_SHARED_PLAIN_WASM_BASE64,
  SHARED_RELAXED: MICRO_KERNELS_SHARED_RELAXED_WASM_BASE64,
};

/** undefined: not tried yet; null: this engine cannot compile it (no WebAssembly, SIMD or relaxed SIMD). */
const compiledModules: Partial<Record<Build, WebAssembly.Module|null>> = {};

function microKernelModule(build: Build): WebAssembly.Module|null {
  if (compiledModules[build] === undefined) {
    try {
      const bytes = Uint8Array.from(atob(BUILD_BYTES[build]), c => c.charCodeAt(0));
      // Synchronous compilation: each build is ~4 KB, what browsers allow on the main thread.
      compiledModules[build] = WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
    } catch {
      compiledModules[build] = null;
    }
  }
  return compiledModules[build]!;
}

/**
 * The one-thread instance is kept between calls so its memory is reused, unless a call grew it
 * past this: WebAssembly memory never shrinks, so a large one is dropped and the next call
 * starts afresh. The pool's shared memory likewise, past POOL_RETAINED_MEMORY_BYTES.
 */
const RETAINED_MEMORY_BYTES = 64 * 2 ** 20;
const POOL_RETAINED_MEMORY_BYTES = 256 * 2 ** 20;
/** Larger problems (per sample, plus the float64 sums) take the TypeScript loops. */
const MAX_MEMORY_BYTES = 2 ** 30;
/** Samples are packed this many bytes at a time (at least one sample). */
const PACK_BYTES = 32 * 2 ** 20;
/**
 * A call runs each chunk's rows in this many steps (fewer when it has fewer reduction rows),
 * packing the lines a step reads just before the step's tasks run. On threads the workers start
 * once the first step's lines are packed, the calling thread's packing of the rest overlaps
 * their work, and the tasks of the last step are short. On one thread the lines a step packed
 * are still in cache when its task reads them (docs/threads.md).
 */
const STEPS = 16;
/**
 * Test and bench hooks: a smaller packing budget, to run problems in several chunks of samples;
 * fewer steps, to compare; steps on one thread and poisoned memory, to catch a step that reads
 * what no step packed, a sum no task zeroes or a filter element no task stores.
 */
export const simdTesting = {
  packBytes: PACK_BYTES,
  maxSteps: STEPS,
  /** Steps on one thread (1: the chunk packed whole, then its tasks). */
  oneThreadSteps: STEPS,
  /**
   * Fills the sums with NaN before a call and the packed samples' and the filter's memory before
   * each chunk is packed: a task that reads a line no step packed gives NaN, and so does a sum
   * no task zeroes or a filter element no task stores.
   */
  poison: false,
  /** Each problem's recent wall times on threads and on one thread, which choose its way (tests put their own in its place). */
  threadOutcomes: new ThreadOutcomes(),
  /** Record each call's timeline into `lastTimeline` (call_timeline.ts; `npm run bench:timeline`). */
  recordTimeline: false,
  lastTimeline: undefined as CallTimeline|undefined,
};
/** The data one block of positions may span in both tensors: about L1. */
const BLOCK_BYTES = 48 * 1024;
/** At most this many terms are summed in float32 before joining the float64 sums. */
const MAX_BLOCK_POSITIONS = 1024;
const PAGE_BYTES = 65536;
/** A problem with fewer output units than this splits its reduction into slices (see planSplit). */
const MIN_PARALLEL_UNITS = 16;
/**
 * Unit parts per thread and slice, each a chain of tasks (one per step). Two let the threads even
 * out when one starts late or runs slower; each further part reads the packed rows once more.
 */
const TASKS_PER_THREAD = 2;
const JOB_BYTES = 132;
const TASK_BYTES = 24;
/** A task's flags (micro_kernels.ts): it sets its units' sums to zero first; it stores them into the filter after. */
const TASK_ZEROES = 1;
const TASK_STORES = 2;

interface Instance {
  readonly kernels: MicroKernels;
  readonly memory: WebAssembly.Memory;
  readonly build: Build;
}

/**
 * The calling thread's instance of each private build, kept between calls so its memory is
 * reused (one per build: switching CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD, as an A/B does, keeps
 * both).
 */
const retainedInstances: Partial<Record<Build, Instance>> = {};

function privateInstance(build: Build): Instance {
  let instance = retainedInstances[build];
  if (instance === undefined) {
    const memory = new WebAssembly.Memory({initial: 1});
    const kernels = new WebAssembly.Instance(microKernelModule(build)!, {env: {memory}}).exports as unknown as
        MicroKernels;
    instance = {kernels, memory, build};
    retainedInstances[build] = instance;
  }
  return instance;
}

interface Pool {
  readonly pool: ThreadPool;
  readonly instance: Instance;
}
/** A pool per shared build: switching CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD keeps both (an A/B in one run). */
const pools: Partial<Record<Build, Pool>> = {};

/** The pool for `build` (a shared build), started if need be; undefined where threads cannot run. */
function poolFor(build: Build): Pool|undefined {
  if (pools[build]?.pool.isDisposed) delete pools[build];
  if (pools[build] === undefined) {
    if (threadsUnavailable() !== undefined) return undefined;
    try {
      const module = microKernelModule(build);
      if (module === null) return undefined;
      const memory = new WebAssembly.Memory({initial: 1, maximum: MAX_MEMORY_BYTES / PAGE_BYTES, shared: true});
      const kernels = new WebAssembly.Instance(module, {env: {memory}}).exports as unknown as MicroKernels;
      pools[build] = {pool: new ThreadPool(module, memory, controlAt(kernels)), instance: {kernels, memory, build}};
    } catch {
      return undefined;  // no shared memory here after all: one thread
    }
  }
  return pools[build];
}

/** Where the control words go in an instance's memory: after the module's static data. */
const controlAt = (kernels: MicroKernels) => roundUp(kernels.heapBase(), 64);

/** Ends the worker threads, if any (they are unref'd in Node; this is for tests and apps that want them gone). */
export function stopSimdThreads() {
  for (const build of Object.keys(pools) as Build[]) {
    pools[build]!.pool.dispose();
    delete pools[build];
  }
}

/** The running pool of the build the flags choose, if any (tests). */
export function currentThreadPool(): ThreadPool|undefined {
  const pool = pools[sharedBuild(relaxedSimdChosen())];
  return pool?.pool.isDisposed === false ? pool.pool : undefined;
}

/**
 * Starts the worker threads for the current flags, if they can run here, and resolves once
 * they are ready (or have failed, or after `timeoutMs`): for benches and tests that want the
 * first call already threaded. Kernel calls never wait for workers: until they are ready, a
 * call runs on the calling thread.
 */
export async function simdThreadsReady(timeoutMs = 10000): Promise<number> {
  const threads = requestedThreads();
  if (threads <= 1) return 1;
  const pool = poolFor(sharedBuild(relaxedSimdChosen()));
  if (pool === undefined) return 1;
  pool.pool.ensureWorkers(threads - 1);
  const start = Date.now();
  while (!pool.pool.isDisposed && pool.pool.readyThreads(threads) < threads && Date.now() - start < timeoutMs) {
    await new Promise(resolve => setTimeout(resolve, 5));
  }
  return pool.pool.readyThreads(threads);
}

function requestedThreads(): number {
  registerWasmSimdFlag();
  const value = Math.floor(env().getNumber(CONV_BACKPROP_FILTERS_THREADS));
  return Math.max(1, Math.min(MAX_THREADS, Number.isFinite(value) ? value : 1));
}

const roundUp = (n: number, multiple: number) => Math.ceil(n / multiple) * multiple;

/** How one canonical tensor is laid out in the module's memory: positions × rowLength, channels-last. */
interface PackedLayout {
  readonly tensor: CanonicalTensor;
  readonly groups: number;
  /** Channels of each group in the packed row (the group's own channels, then zeros). */
  readonly channelsPerGroup: number;
  readonly rowLength: number;
  /** Sizes and element strides of the tensor's spatial axes, outermost first, as three. */
  readonly sizes: readonly number[];
  readonly strides: readonly number[];
}

/**
 * How a call runs: which build, how many threads and why, and how the work splits. The split
 * (units, slices, blocks) depends on the problem only, never on the threads, so every output
 * value is summed in the same blocks and order whatever the thread count: results are bitwise
 * equal with 1 or N threads.
 */
export interface SimdPlan {
  /** The relaxed-SIMD build (fused multiply-add) runs. */
  readonly relaxed: boolean;
  /** Threads that run the call, the calling thread included. */
  readonly threads: number;
  /** What CONV_BACKPROP_FILTERS_THREADS asked for. */
  readonly requestedThreads: number;
  /** Why fewer threads run than were asked for. */
  readonly reason?: string;
  /** 2·N·O·(C/G)·K·out-spatial. */
  readonly flops: number;
  /** Output units: kernel offset × group × vector tile × broadcast chunk (or × 4 depthwise lanes). */
  readonly units: number;
  /** Reduction rows: sample × diffDst depth position × block of diffDst rows. */
  readonly reductionRows: number;
  /** The reduction splits into this many slices at fixed row boundaries, each summed apart, then added in order. */
  readonly slices: number;
  /** Each slice's units split into this many tasks (1 on one thread). */
  readonly unitParts: number;
  /** Where the unit parts start, and the last one ends: unitParts + 1 ascending units from 0 to `units`. */
  readonly unitBounds: readonly number[];
  /** Samples packed at a time. */
  readonly chunkSamples: number;
  /**
   * Each chunk's reduction rows run in up to this many steps: the calling thread packs the
   * lines a step reads just before it publishes (or, alone, runs) the step's tasks, so the
   * workers compute while it packs the next lines, the last tasks are short, so threads finish
   * together, and a step's lines are still in cache when its tasks read them.
   */
  readonly steps: number;
  readonly blockRows: number;
  readonly blockColumns: number;
  /**
   * On threads, how the calling thread copies into the shared memory and the filter out of it
   * (float_copy.ts: memmove in Node ≥ 22, else `set`, staged where a misaligned one is slow);
   * undefined on one thread, whose memory is its own (`set`).
   */
  readonly sharedCopy?: SharedCopyMethod;
}

/** The path the verbose line prints for a plan, e.g. `simd threads=2` or `simd relaxed threads=1 (below threshold)`. */
export function describeSimdPlan(plan: SimdPlan): string {
  return `simd${plan.relaxed ? ' relaxed' : ''} threads=${plan.threads}${plan.reason ? ` (${plan.reason})` : ''}`;
}

/** Everything about a problem's packing and split, before memory is touched. */
interface Layout {
  readonly depthwise: boolean;
  readonly srcIsVector: boolean;
  readonly vectorPerGroup: number;
  readonly broadcastPerGroup: number;
  readonly vectorChannels: number;
  readonly laneGroups: number;
  readonly srcLayout: PackedLayout;
  readonly dstLayout: PackedLayout;
  readonly kernelVolume: number;
  readonly sumCount: number;
  readonly srcSampleBytes: number;
  readonly dstSampleBytes: number;
  readonly blockRows: number;
  readonly blockColumns: number;
  readonly units: number;
  readonly reductionRows: number;
  readonly flops: number;
  /**
   * The lines (depth × height positions, outermost first) of one sample's packed src and diffDst
   * that its reduction rows [0, row] read: a prefix of each, growing with the row.
   */
  readonly linesThrough: (row: number) => readonly [number, number];
}

function layoutOf(geometry: FilterGradientGeometry): Layout {
  const {groups, batch} = geometry;
  const [depth, height, width] = spatialAxesAs3d(geometry.axes);
  const srcPerGroup = geometry.src.channelsPerGroup;
  const dstPerGroup = geometry.diffDst.channelsPerGroup;
  const depthwise = srcPerGroup === 1 && dstPerGroup === 1;
  // The vector side is the one with more channels per group (less padding to a multiple of 4).
  const srcIsVector = depthwise || srcPerGroup >= dstPerGroup;
  const vectorPerGroup = srcIsVector ? srcPerGroup : dstPerGroup;
  const broadcastPerGroup = srcIsVector ? dstPerGroup : srcPerGroup;
  const vectorChannels = depthwise ? 1 : roundUp(vectorPerGroup, 4);
  // Depthwise: the groups themselves, rounded up to 4, are the vector lanes of both tensors.
  const laneGroups = depthwise ? roundUp(groups, 4) : groups;
  const packed = (tensor: CanonicalTensor, isVector: boolean, axisOf: (a: SpatialAxis) => [number, number]):
      PackedLayout => {
        const channelsPerGroup = isVector ? vectorChannels : broadcastPerGroup;
        return {
          tensor,
          groups,
          channelsPerGroup,
          rowLength: laneGroups * channelsPerGroup,
          sizes: [depth, height, width].map(a => axisOf(a)[0]),
          strides: [depth, height, width].map(a => axisOf(a)[1]),
        };
      };
  const srcLayout = packed(geometry.src, srcIsVector, a => [a.srcSize, a.srcStride]);
  const dstLayout = packed(geometry.diffDst, !srcIsVector || depthwise, a => [a.diffDstSize, a.diffDstStride]);
  const kernelVolume = depth.kernelSize * height.kernelSize * width.kernelSize;
  const sumCount = depthwise ? kernelVolume * laneGroups : groups * kernelVolume * broadcastPerGroup * vectorChannels;
  const blockPositions = Math.min(
      MAX_BLOCK_POSITIONS, Math.max(16, Math.floor(BLOCK_BYTES / (4 * (srcLayout.rowLength + dstLayout.rowLength)))));
  const blockColumns = Math.min(width.diffDstSize, blockPositions);
  const blockRows = Math.max(1, Math.floor(blockPositions / blockColumns));
  const unitsPerOffset = depthwise ? laneGroups / 4 :
                                     groups * Math.ceil(vectorChannels / 8) * Math.max(1, Math.floor(broadcastPerGroup / 4));
  const diffDstPositions = depth.diffDstSize * height.diffDstSize * width.diffDstSize;
  return {
    depthwise, srcIsVector, vectorPerGroup, broadcastPerGroup, vectorChannels, laneGroups, srcLayout, dstLayout,
    kernelVolume, sumCount,
    srcSampleBytes: roundUp(4 * srcLayout.rowLength * srcLayout.sizes.reduce((a, b) => a * b), 64),
    dstSampleBytes: roundUp(4 * dstLayout.rowLength * dstLayout.sizes.reduce((a, b) => a * b), 64),
    blockRows, blockColumns,
    units: kernelVolume * unitsPerOffset,
    reductionRows: batch * depth.diffDstSize * Math.ceil(height.diffDstSize / blockRows),
    flops: 2 * batch * groups * srcPerGroup * dstPerGroup * kernelVolume * diffDstPositions,
    linesThrough: row => linesThrough(depth, height, blockRows, row),
  };
}

/**
 * The src and diffDst lines one sample's reduction rows [0, row] read (see Layout.linesThrough).
 * Row `row` is diffDst depth position d and block b of `blockRows` diffDst rows; the src rows
 * its windows reach end at the last diffDst row's largest window coordinate, clamped to src.
 * Problems with several depth positions on either side take src in whole depth planes.
 */
function linesThrough(depth: SpatialAxis, height: SpatialAxis, blockRows: number, row: number): [number, number] {
  const blocksPerPlane = Math.ceil(height.diffDstSize / blockRows);
  const d = Math.floor(row / blocksPerPlane);
  const heightEnd = Math.min(height.diffDstSize, (row - d * blocksPerPlane + 1) * blockRows);
  const reach = (axis: SpatialAxis, last: number) => Math.max(0, Math.min(
      axis.srcSize, last * axis.stride + (axis.kernelSize - 1) * axis.dilation - axis.padBegin + 1));
  const srcLines = depth.srcSize === 1 && depth.diffDstSize === 1 ? reach(height, heightEnd - 1) :
                                                                      reach(depth, d) * height.srcSize;
  return [srcLines, d * height.diffDstSize + heightEnd];
}

/** A plan's reason for one thread when the adaptive choice measured the threads slower (ThreadOutcomes). */
const measuredSlower = (threads: number) => `${threads} threads measured slower`;

/**
 * Whether a plan runs on one thread, with threads asked for, by design rather than for want of
 * them: the problem is under the threshold or has one task, or (where `adaptive`) the adaptive
 * choice is timing one thread or measured the threads slower. Benches that check the path use it.
 */
export function oneThreadByDesign(reason: string|undefined, adaptive: boolean): boolean {
  return reason === 'below threshold' || reason === 'one task' ||
      (adaptive && (reason === 'timing one thread' || /^\d+ threads measured slower$/.test(reason ?? '')));
}

/**
 * The plan of a call: the split from the problem alone, the threads from the flags and what
 * this runtime allows now. `readyThreads(wanted)` says how many threads a started pool has
 * ready (undefined where threads cannot run, with `unavailable` saying why); `choose`, where
 * threads could run, whether they have paid for this problem (ThreadOutcomes).
 */
function planOf(
    layout: Layout, batch: number, relaxed: boolean, requested: number, unavailable: string|undefined,
    readyThreads: ((wanted: number) => number)|undefined, choose?: () => ThreadChoice): SimdPlan {
  const {units, reductionRows, flops} = layout;
  // Too few units to share: slices of the reduction at boundaries fixed by the problem.
  const slices = units >= MIN_PARALLEL_UNITS ? 1 : Math.min(reductionRows, Math.ceil(MIN_PARALLEL_UNITS / units));
  const sampleBytes = layout.srcSampleBytes + layout.dstSampleBytes;
  const chunkSamples = Math.max(1, Math.min(batch, Math.floor(simdTesting.packBytes / sampleBytes)));
  let threads = requested;
  let reason: string|undefined;
  registerWasmSimdFlag();
  if (requested > 1) {
    if (flops < env().getNumber(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP) * 1e6) {
      [threads, reason] = [1, 'below threshold'];
    } else if (units * slices < 2) {
      [threads, reason] = [1, 'one task'];
    } else if (unavailable !== undefined || readyThreads === undefined) {
      [threads, reason] = [1, unavailable ?? 'no shared memory'];
    } else {
      threads = readyThreads(requested);
      if (threads < requested) reason = threads === 1 ? 'workers starting' : `${threads} of ${requested} ready`;
      const choice = threads > 1 ? choose?.() : undefined;
      if (choice?.way === 'one') {
        [threads, reason] = [1, choice.reason === 'measured' ? measuredSlower(threads) : choice.reason];
      }
    }
  }
  const unitParts = threads === 1 ? 1 : Math.min(units, Math.ceil(TASKS_PER_THREAD * threads / slices));
  const steps = threads === 1 ? simdTesting.oneThreadSteps : simdTesting.maxSteps;
  return {
    relaxed, threads, requestedThreads: requested, reason, flops, units, reductionRows, slices, unitParts,
    unitBounds: unitBoundsOf(layout, unitParts), chunkSamples, steps, blockRows: layout.blockRows,
    blockColumns: layout.blockColumns, sharedCopy: threads > 1 ? sharedCopyMethod() : undefined,
  };
}

/**
 * Where `parts` parts of the layout's output units start: evenly, except that a depthwise part
 * starts only where one thread's sweep of a kernel offset starts a 16-lane pass (the offset's
 * start, or a multiple of 4 units of 4 lanes into it). A part that started elsewhere would run
 * lanes of one offset in 4-lane passes, one chain of multiply-adds each, where one thread runs
 * four chains at once; parts so placed run the passes one thread runs. Dense units are whole
 * tiles wherever a part starts.
 */
function unitBoundsOf(layout: Layout, parts: number): number[] {
  const {units, depthwise, kernelVolume} = layout;
  const even = (part: number) => Math.floor(part * units / parts);
  if (!depthwise) return Array.from({length: parts + 1}, (_, part) => even(part));
  const perOffset = units / kernelVolume;
  return Array.from({length: parts + 1}, (_, part) => {
    const offset = Math.floor(even(part) / perOffset);
    const into = Math.round((even(part) - offset * perOffset) / 4) * 4;
    return offset * perOffset + Math.min(into, perOffset);
  });
}

/** The plan a call of `geometry` would run now, without running it (tests, benches). */
export function simdPlanOf(geometry: FilterGradientGeometry): SimdPlan {
  const layout = layoutOf(geometry);
  const relaxed = relaxedSimdChosen();
  const requested = requestedThreads();
  const pool = currentThreadPool();
  return planOf(
      layout, geometry.batch, relaxed, requested, threadsUnavailable(),
      pool === undefined ? undefined : wanted => pool.readyThreads(wanted),
      threadsAdaptive() ? () => simdTesting.threadOutcomes.peek(outcomeKey(layout, geometry.batch, relaxed, requested)) :
                          undefined);
}

function threadsAdaptive(): boolean {
  registerWasmSimdFlag();
  return env().getBool(CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE);
}

/** A problem as ThreadOutcomes knows it: what sets the work and the split, and the threads asked for. */
function outcomeKey(layout: Layout, batch: number, relaxed: boolean, requested: number): string {
  return [batch, layout.flops, layout.units, layout.reductionRows, layout.srcSampleBytes, layout.dstSampleBytes,
          layout.sumCount, relaxed ? 'relaxed' : 'plain', requested].join(' ');
}

const sharedBuild = (relaxed: boolean): Build => relaxed ? 'SHARED_RELAXED' : 'SHARED_PLAIN';

/** The result of the SIMD path and the plan it ran. */
export interface SimdRun {
  readonly values: Float32Array;
  readonly plan: SimdPlan;
}

/**
 * The filter gradient through the WebAssembly SIMD micro-kernels, or null when the problem is
 * too large for the module's memory (the caller then runs the TypeScript loops). Same
 * semantics as computeFilterGradient: positions whose window leaves src add nothing, sums are
 * float64 across blocks. src and diffDst may be views on another WebAssembly memory (the wasm
 * backend's heap): samples are copied from them straight into this module's memory. The
 * gradient goes into `into` (every element is written) or a new array.
 */
export function computeFilterGradientSimd(
    geometry: FilterGradientGeometry, src: Float32Array, diffDst: Float32Array, into?: Float32Array): SimdRun|null {
  const timeline = simdTesting.recordTimeline ? new CallTimelineRecorder() : undefined;
  const layout = layoutOf(geometry);
  const relaxed = relaxedSimdChosen();
  const requested = requestedThreads();
  // The pool starts on the first call that wants threads; this call runs on the threads ready.
  let pool: Pool|undefined;
  if (planOf(layout, geometry.batch, relaxed, requested, undefined, () => requested).threads > 1) {
    pool = poolFor(sharedBuild(relaxed));
    pool?.pool.ensureWorkers(requested - 1);
  }
  // Where threads could run, whether they have paid for this problem; the call's time is recorded
  // below. The problem's key is made only then: calls that cannot run on threads skip it.
  const outcomes = simdTesting.threadOutcomes;
  let chosen: {key: string; choice: ThreadChoice}|undefined;
  const choose = () => {
    const key = outcomeKey(layout, geometry.batch, relaxed, requested);
    chosen = {key, choice: outcomes.next(key)};
    return chosen.choice;
  };
  const plan = planOf(
      layout, geometry.batch, relaxed, requested, threadsUnavailable(),
      pool === undefined ? undefined : wanted => pool!.pool.readyThreads(wanted), threadsAdaptive() ? choose : undefined);
  const threaded = plan.threads > 1 && pool !== undefined;
  const instance = threaded ? pool!.instance : privateInstance(relaxed ? 'RELAXED' : 'PLAIN');
  // Timed only where threads could run (a context without workers may have no performance clock).
  const started = chosen !== undefined ? performance.now() : 0;
  timeline?.mark('planned');
  const result = run(geometry, layout, plan, instance, src, diffDst, into, threaded ? pool!.pool : undefined, timeline);
  if (timeline !== undefined) simdTesting.lastTimeline = timeline.finish(plan.threads);
  if (chosen !== undefined && result !== null && result !== 'stalled') {
    outcomes.record(chosen.key, chosen.choice.way, performance.now() - started);
  }
  if (result === 'stalled') {
    // A worker stopped mid-task: the pool is gone; the whole call again on the calling thread.
    const alone = {...plan, threads: 1, unitParts: 1, unitBounds: [0, plan.units], steps: 1, reason: 'pool failed', sharedCopy: undefined};
    const values = run(geometry, layout, alone, privateInstance(relaxed ? 'RELAXED' : 'PLAIN'), src, diffDst, into);
    return values === null || values === 'stalled' ? null : {values, plan: alone};
  }
  if (threaded && pool!.instance.memory.buffer.byteLength > POOL_RETAINED_MEMORY_BYTES) {
    pool!.pool.dispose();
    delete pools[pool!.instance.build];
  }
  return result === null ? null : {values: result, plan};
}

function run(
    geometry: FilterGradientGeometry, layout: Layout, plan: SimdPlan, instance: Instance, src: Float32Array,
    diffDst: Float32Array, into: Float32Array|undefined, pool?: ThreadPool,
    timeline?: CallTimelineRecorder): Float32Array|null|'stalled' {
  const {batch, groups} = geometry;
  const [depth, height, width] = spatialAxesAs3d(geometry.axes);
  const {depthwise, srcIsVector, vectorPerGroup, broadcastPerGroup, vectorChannels, laneGroups, srcLayout, dstLayout,
         sumCount, srcSampleBytes, dstSampleBytes} = layout;
  const {slices, unitParts, chunkSamples} = plan;
  const rangeBytes = 12 * (depth.kernelSize + height.kernelSize + width.kernelSize);
  // A step's rows may cut a slice in two: one more task per step and unit part at most.
  const tasksPerChunk = (slices + plan.steps - 1) * unitParts;
  if (tasksPerChunk > MAX_TASKS) return null;

  const kernels = instance.kernels;
  // The control words (a pool's, or the task log's switch on one thread), then the job.
  const jobAt = controlAt(kernels) + CONTROL_BYTES;
  const tasksAt = jobAt + JOB_BYTES;
  const statesAt = roundUp(tasksAt + TASK_BYTES * tasksPerChunk, 64);
  const sumsAt = roundUp(statesAt + 8 * tasksPerChunk, 64);
  const rangesAt = sumsAt + 8 * sumCount * slices;
  const srcAt = roundUp(rangesAt + rangeBytes, 64);
  const dstAt = srcAt + chunkSamples * srcSampleBytes;
  const filterAt = roundUp(dstAt + chunkSamples * dstSampleBytes, 64);
  const taskLogAt = roundUp(filterAt + 4 * geometry.filterSize, 8);
  const endAt = taskLogAt + (timeline === undefined ? 0 : taskLogBytes(tasksPerChunk));
  if (endAt > MAX_MEMORY_BYTES) return null;
  const memory = instance.memory;
  if (endAt > memory.buffer.byteLength) {
    try {
      memory.grow(Math.ceil((endAt - memory.buffer.byteLength) / PAGE_BYTES));
    } catch {
      return null;  // the engine refused the memory: the loops need none beyond the result
    }
  }
  const buffer = memory.buffer;
  const control = new Int32Array(buffer, controlAt(kernels), CONTROL_WORDS);
  // No task is logged unless this call records (a call before may have stopped mid-record).
  Atomics.store(control, TASK_LOG_AT, 0);
  const sums = new Float64Array(buffer, sumsAt, sumCount * slices);
  if (simdTesting.poison) sums.fill(NaN);
  const ranges = new Int32Array(buffer, rangesAt, rangeBytes / 4);
  ranges.set([depth, height, width].flatMap(axis => windowRanges(axis).flatMap(r => [r.first, r.end, r.shift])));
  const job = new Int32Array(buffer, jobAt, JOB_BYTES / 4);
  const fs = geometry.filterStrides;
  job.set([
    srcAt, dstAt, srcSampleBytes, dstSampleBytes, rangesAt, depthwise ? 1 : 0, srcIsVector ? 1 : 0, laneGroups,
    vectorChannels, broadcastPerGroup, height.srcSize, width.srcSize, depth.diffDstSize, height.diffDstSize,
    width.diffDstSize, depth.kernelSize, height.kernelSize, width.kernelSize, depth.stride, height.stride,
    width.stride, plan.blockRows, plan.blockColumns, tasksAt,
    // Where storeUnits writes the sums: the filter in its own layout.
    filterAt, fs.group, srcIsVector ? fs.srcChannel : fs.diffDstChannel, srcIsVector ? fs.diffDstChannel : fs.srcChannel,
    depth.filterStride, height.filterStride, width.filterStride, vectorPerGroup, groups,
  ]);
  const tasks = new Int32Array(buffer, tasksAt, TASK_BYTES / 4 * tasksPerChunk);
  const states = new Int32Array(buffer, statesAt, 2 * tasksPerChunk);
  const result = into ?? new Float32Array(geometry.filterSize);
  // A new array's pages are mapped on first write, 1–2 µs each on this VM (1.4–1.9 ms for a 3 MB
  // filter). With threads the calling thread writes them once it has published the first chunk's
  // tasks, while the workers compute; the workers then take more of the tasks.
  let resultPagesMapped = into !== undefined || pool === undefined;

  for (let first = 0; first < batch; first += chunkSamples) {
    const end = Math.min(batch, first + chunkSamples);
    timeline?.startChunk(control, taskLogAt);
    const threadJob = pool?.open(jobAt, statesAt, plan.threads);
    if (threadJob !== undefined) timeline?.mark('opened');
    if (simdTesting.poison) new Float32Array(buffer, srcAt, (endAt - srcAt) / 4).fill(NaN);
    let taskCount = 0;
    for (const step of stepsOf(layout, plan, batch, first, end)) {
      for (const {sample, src: srcLines, diffDst: dstLines} of step.packs) {
        const at = sample - first;
        pack(src, sample, srcLayout, new Float32Array(buffer, srcAt + at * srcSampleBytes, srcSampleBytes / 4), srcLines, plan.sharedCopy);
        pack(diffDst, sample, dstLayout, new Float32Array(buffer, dstAt + at * dstSampleBytes, dstSampleBytes / 4), dstLines, plan.sharedCopy);
      }
      for (const task of step.tasks) {
        tasks.set([
          sumsAt + 8 * sumCount * task.slice, task.unitFirst, task.unitEnd, task.rowFirst, task.rowEnd,
          (task.zeroes ? TASK_ZEROES : 0) | (task.stores ? TASK_STORES : 0),
        ], TASK_BYTES / 4 * taskCount);
        states.set([task.follows, threadJob?.openState ?? 0], 2 * taskCount++);
      }
      if (threadJob !== undefined) {
        threadJob.publish(taskCount);
        timeline?.mark('step');
      } else {
        // One thread: each step's tasks before the next step is packed.
        timeline?.mark('step');
        for (let t = taskCount - step.tasks.length; t < taskCount; t++) {
          runTaskLogged(memory, control, 0, kernels.runTask, jobAt, t);
        }
      }
    }
    if (!resultPagesMapped) {
      result.fill(0);
      resultPagesMapped = true;
    }
    if (threadJob !== undefined && !threadJob.finish(plan.flops * (end - first) / batch, kernels.runTask)) return 'stalled';
    timeline?.mark('chunk done');
    timeline?.endChunk(memory, control);
  }

  if (slices > 1) {
    // The slices' sums, added in slice order into the first, then into the filter.
    for (let s = 1; s < slices; s++) {
      for (let i = 0; i < sumCount; i++) sums[i] += sums[s * sumCount + i];
    }
    kernels.storeUnits(jobAt, sumsAt, 0, plan.units);
  }
  copyFloats(new Float32Array(buffer, filterAt, geometry.filterSize), result, 0, plan.sharedCopy);
  timeline?.mark('copied');
  if (pool === undefined && buffer.byteLength > RETAINED_MEMORY_BYTES) delete retainedInstances[instance.build];
  return result;
}

/** One task of a chunk: a slice's reduction rows × a range of output units. */
export interface ChunkTask {
  readonly slice: number;
  readonly unitFirst: number;
  readonly unitEnd: number;
  /** Reduction rows [first, end), counted from the chunk's first sample. */
  readonly rowFirst: number;
  readonly rowEnd: number;
  /** The chunk's earlier task on the same sums and units (it runs first), or −1. */
  readonly follows: number;
  /** The task sets its units' sums to zero before it adds: the one with its slice's first rows. */
  readonly zeroes: boolean;
  /**
   * The task then writes its units' sums into the filter: the one with the last rows, when the
   * reduction is one slice (slices' sums are added first, on the calling thread).
   */
  readonly stores: boolean;
}

/** Lines [first, end) of one sample's packed src and diffDst (see Layout.linesThrough). */
export interface PackedLines {
  readonly sample: number;
  readonly src: readonly [number, number];
  readonly diffDst: readonly [number, number];
}

/** A step of a chunk: the lines its rows read that earlier steps did not packed, then its tasks published. */
export interface ChunkStep {
  readonly packs: readonly PackedLines[];
  readonly tasks: readonly ChunkTask[];
}

/**
 * The steps of `geometry`'s chunk of samples [first, end) under `plan`, and their tasks,
 * numbered across the chunk in order: the chunk's reduction rows cut into `plan.steps` runs of
 * whole rows, each run's rows cut into the plan's slices, each slice's units into its unit
 * parts. Each step packs what its rows read beyond what the steps before packed (samples are
 * packed line by line as the rows reach them). A slice × unit part's tasks follow one another in
 * row order, so each sum sees its blocks in the order one thread adds them.
 */
export function chunkSteps(geometry: FilterGradientGeometry, plan: SimdPlan, first: number, end: number): ChunkStep[] {
  return stepsOf(layoutOf(geometry), plan, geometry.batch, first, end);
}

function stepsOf(layout: Layout, plan: SimdPlan, batch: number, first: number, end: number): ChunkStep[] {
  const {slices, unitParts, unitBounds, reductionRows} = plan;
  const rowsPerSample = reductionRows / batch;
  const chunkRows = (end - first) * rowsPerSample;
  const [srcLinesPerSample, dstLinesPerSample] = layout.linesThrough(rowsPerSample - 1);
  const sliceStart = (s: number) => Math.floor(s * reductionRows / slices) - first * rowsPerSample;
  const lastTask = new Array<number>(slices * unitParts).fill(-1);
  const steps: ChunkStep[] = [];
  let taskCount = 0;
  // What is packed so far: samples before `sample` whole, and these lines of `sample`.
  let [sample, srcPacked, dstPacked] = [first, 0, 0];
  const stepCount = Math.min(plan.steps, chunkRows);
  for (let step = 0; step < stepCount; step++) {
    // Rows [stepFirst, stepEnd) of the chunk.
    const stepFirst = Math.floor(step * chunkRows / stepCount);
    const stepEnd = Math.floor((step + 1) * chunkRows / stepCount);
    const lastSample = first + Math.floor((stepEnd - 1) / rowsPerSample);
    const packs: PackedLines[] = [];
    for (; sample <= lastSample; [sample, srcPacked, dstPacked] = [sample + 1, 0, 0]) {
      // Lines grow with the row, so what the step needs of this sample ends at or after what is packed.
      const [srcEnd, dstEnd] = sample < lastSample ? [srcLinesPerSample, dstLinesPerSample] :
                                                     layout.linesThrough((stepEnd - 1) % rowsPerSample);
      if (srcEnd > srcPacked || dstEnd > dstPacked) {
        packs.push({sample, src: [srcPacked, srcEnd], diffDst: [dstPacked, dstEnd]});
        [srcPacked, dstPacked] = [srcEnd, dstEnd];
      }
      if (sample === lastSample && (srcPacked < srcLinesPerSample || dstPacked < dstLinesPerSample)) break;
    }
    const tasks: ChunkTask[] = [];
    for (let slice = 0; slice < slices; slice++) {
      const rowFirst = Math.max(sliceStart(slice), stepFirst);
      const rowEnd = Math.min(sliceStart(slice + 1), stepEnd);
      if (rowFirst >= rowEnd) continue;
      for (let part = 0; part < unitParts; part++) {
        if (unitBounds[part] === unitBounds[part + 1]) continue;  // a depthwise part its neighbours took
        const sums = slice * unitParts + part;
        tasks.push({
          slice, unitFirst: unitBounds[part], unitEnd: unitBounds[part + 1], rowFirst, rowEnd, follows: lastTask[sums],
          zeroes: rowFirst === sliceStart(slice), stores: slices === 1 && rowEnd === sliceStart(slice + 1),
        });
        lastTask[sums] = taskCount++;
      }
    }
    steps.push({packs, tasks});
  }
  return steps;
}

/**
 * Copies lines [first, end) (depth × height positions) of sample n of `data` into `packed`,
 * channels-last with each group's channels padded; a contiguous run is copied the plan's way
 * (`copy`, where `packed` is shared).
 */
function pack(
    data: Float32Array, n: number, layout: PackedLayout, packed: Float32Array, [first, end]: readonly [number, number],
    copy: SharedCopyMethod|undefined) {
  if (first >= end) return;
  const {tensor, groups, channelsPerGroup, rowLength, sizes, strides} = layout;
  const perGroup = tensor.channelsPerGroup;
  const sampleBase = n * tensor.batchStride;
  const [depthSize, heightSize, widthSize] = sizes;
  const [depthStride, heightStride, widthStride] = strides;
  const lineLength = widthSize * rowLength;
  const contiguous = tensor.channelStride === 1 && rowLength === tensor.channels &&
      (widthSize === 1 || widthStride === tensor.channels) &&
      (heightSize === 1 || heightStride === widthSize * tensor.channels) &&
      (depthSize === 1 || depthStride === heightSize * widthSize * tensor.channels);
  if (contiguous) {  // NXC without padding: the lines as they are
    copyFloats(data.subarray(sampleBase + first * lineLength, sampleBase + end * lineLength), packed, first * lineLength, copy);
    return;
  }
  if (rowLength !== groups * perGroup) packed.fill(0, first * lineLength, end * lineLength);
  const channelStride = tensor.channelStride;
  let at = first * lineLength;
  for (let line = first; line < end; line++) {
    const d = Math.floor(line / heightSize), h = line - d * heightSize;
    for (let w = 0; w < widthSize; w++, at += rowLength) {
      const position = sampleBase + d * depthStride + h * heightStride + w * widthStride;
      for (let g = 0; g < groups; g++) {
        const from = position + g * perGroup * channelStride;
        const to = at + g * channelsPerGroup;
        for (let c = 0; c < perGroup; c++) packed[to + c] = data[from + c * channelStride];
      }
    }
  }
}

import {THREAD_WORKER_SOURCE} from './thread_worker.generated';
import {claimAndRun, CLAIM, CLOSED, CONTROL_WORDS, DONE, JOB, MAX_WORKERS, openClaim, openTaskState, PROGRESS, ProgressWaiter, READY, TASK_COUNT, TASK_STATES, WAKE, WORKERS_WANTED} from './thread_protocol';

/**
 * Worker threads for the micro-kernels: one compiled module, one shared WebAssembly.Memory,
 * workers from `worker_threads` in Node (and runtimes that provide it) or Web Workers in
 * browsers, started from the script embedded in the package (thread_worker.generated.ts).
 *
 * A kernel call stays synchronous: the calling thread opens a job, publishes its tasks in steps
 * (the workers start on the first while it packs the samples of the next), claims ready tasks like
 * every worker (thread_protocol.ts) and then waits until all are done: it spins up to
 * CALLER_SPIN_MS, then waits in Atomics.wait where the thread may block and spins on where it
 * may not (a browser's main thread). Workers start on
 * first need and report ready through the shared memory; a call before then runs on the calling
 * thread alone, and so does every call once a worker has died, failed to start or stopped in
 * the middle of a task. Node workers are unref'd: they never keep a process alive.
 */

/** The most threads the pool runs, the calling thread included. */
export const MAX_THREADS = MAX_WORKERS + 1;

/** Why a call runs on the calling thread alone when threads were asked for (undefined: they can run). */
export function threadsUnavailable(): string | undefined {
  if (typeof SharedArrayBuffer === 'undefined') {
    const isolated = (globalThis as {crossOriginIsolated?: boolean}).crossOriginIsolated;
    return isolated === false ? 'not cross-origin isolated' : 'no SharedArrayBuffer';
  }
  if (typeof Atomics === 'undefined') return 'no Atomics';
  if (workerFactory() === undefined) return 'no workers';
  return poolFailure;
}

/** The cores this runtime reports (Node's os.availableParallelism, navigator.hardwareConcurrency). */
export function reportedCores(): number {
  const os = nodeBuiltin<{availableParallelism?: () => number; cpus?: () => unknown[]}>('node:os');
  const fromOs = os?.availableParallelism?.() ?? os?.cpus?.().length;
  const fromNavigator = (globalThis as {navigator?: {hardwareConcurrency?: number}}).navigator?.hardwareConcurrency;
  const cores = fromOs ?? fromNavigator ?? 1;
  return Number.isInteger(cores) && cores > 0 ? cores : 1;
}

type NodeProcess = {getBuiltinModule?: (name: string) => unknown; versions?: {node?: string}};
/** CommonJS's module object where this code runs as CommonJS (dist/index.cjs); undefined elsewhere. */
declare const module: {require?: (name: string) => unknown} | undefined;

/** A Node built-in module without a static import (the bundles are platform-neutral). */
function nodeBuiltin<T>(name: string): T | undefined {
  const nodeProcess = (globalThis as {process?: NodeProcess}).process;
  if (nodeProcess?.versions?.node === undefined) return undefined;
  try {
    if (nodeProcess.getBuiltinModule) return nodeProcess.getBuiltinModule(name) as T;
    // CommonJS in Node < 20.16: the module's own require, reached without a bundler noticing.
    const nodeRequire = typeof module !== 'undefined' ? module?.require : undefined;
    return nodeRequire?.(name) as T | undefined;
  } catch {
    return undefined;
  }
}

interface WorkerHandle {
  terminate(): void;
}

interface WorkerStart {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  controlAt: number;
  index: number;
}

/** Starts one worker on `start`, calling `onFailure` if it errors or exits; undefined where none can start. */
type WorkerFactory = (start: WorkerStart, onFailure: (reason: string) => void) => WorkerHandle;

interface NodeWorker {
  on(event: string, listener: (value: unknown) => void): void;
  unref(): void;
  terminate(): Promise<number>;
}
type NodeWorkerClass = new (code: string, options: {eval: true; workerData: unknown}) => NodeWorker;

let cachedFactory: WorkerFactory | null | undefined;

function workerFactory(): WorkerFactory | undefined {
  if (cachedFactory === undefined) cachedFactory = makeWorkerFactory() ?? null;
  return cachedFactory ?? undefined;
}

function makeWorkerFactory(): WorkerFactory | undefined {
  const workerThreads = nodeBuiltin<{Worker?: NodeWorkerClass; isMainThread?: boolean}>('node:worker_threads');
  if (workerThreads?.Worker) {
    const NodeWorkerClass = workerThreads.Worker;
    return (start, onFailure) => {
      const worker = new NodeWorkerClass(THREAD_WORKER_SOURCE, {eval: true, workerData: start});
      worker.on('error', e => onFailure(`worker error: ${String(e)}`));
      worker.on('exit', code => onFailure(`worker exited (${String(code)})`));
      worker.on('message', message => {
        const failed = (message as {failed?: string}).failed;
        if (failed !== undefined) onFailure(`worker failed to start: ${failed}`);
      });
      worker.unref();
      return {terminate: () => void worker.terminate()};
    };
  }
  const WebWorker = (globalThis as {Worker?: new (url: string) => Worker}).Worker;
  if (WebWorker === undefined || typeof Blob === 'undefined' || typeof URL?.createObjectURL !== 'function') {
    return undefined;
  }
  return (start, onFailure) => {
    const url = URL.createObjectURL(new Blob([THREAD_WORKER_SOURCE], {type: 'text/javascript'}));
    try {
      const worker = new WebWorker(url);
      worker.onerror = event => {
        event.preventDefault?.();
        onFailure(`worker error: ${event.message ?? 'failed to start'}`);
      };
      worker.onmessageerror = () => onFailure('worker could not receive the module');
      worker.onmessage = event => {
        const failed = (event.data as {failed?: string}).failed;
        if (failed !== undefined) onFailure(`worker failed to start: ${failed}`);
      };
      worker.postMessage(start);
      return {terminate: () => worker.terminate()};
    } finally {
      URL.revokeObjectURL(url);
    }
  };
}

/** Whether this thread may block in Atomics.wait (a browser's main thread may not: it spins). */
let mayBlock: boolean | undefined;
function callerMayBlock(control: Int32Array): boolean {
  if (mayBlock === undefined) {
    try {
      Atomics.wait(control, CONTROL_WORDS - 1, 1, 0);  // the word is 0: returns 'not-equal' at once where allowed
      mayBlock = true;
    } catch {
      mayBlock = false;
    }
  }
  return mayBlock;
}

/** Why pools can no longer run here (a worker died or failed to start); undefined while they can. */
let poolFailure: string | undefined;

/**
 * A call that finds no task finished for this long, plus 1 ms per 0.1 MFLOP of its job (a job
 * running 400× slower than the micro-kernels do on one thread), treats the pool as failed (see run).
 */
const STALL_MS = 10000;
/**
 * The calling thread, once it has no task to run, spins this long for the workers' last tasks
 * before it blocks: a thread blocked in Atomics.wait can take milliseconds to be woken on a VM
 * whose idle core has halted, longer than the task it waits for.
 */
const CALLER_SPIN_MS = 1;
/** Test hooks: a shorter stall limit. */
export const threadPoolTesting = {stallMs: STALL_MS};

export class ThreadPool {
  readonly memory: WebAssembly.Memory;
  private readonly control: Int32Array;
  private readonly workers: WorkerHandle[] = [];
  private sequence = 0;
  /** The value the last publish stored in the wake words (each publish stores a new one). */
  private wakes = 0;
  private disposed = false;

  /**
   * `memory` is shared and imported by `module`; the control words live at `controlAt` in it.
   * Workers start when `ensureWorkers` first asks for them.
   */
  constructor(
      readonly module: WebAssembly.Module, memory: WebAssembly.Memory, private readonly controlAt: number) {
    this.memory = memory;
    this.control = new Int32Array(memory.buffer, controlAt, CONTROL_WORDS);
    Atomics.store(this.control, CLAIM, CLOSED);
  }

  /** Starts workers until there are `count` (never more than MAX_THREADS − 1). */
  ensureWorkers(count: number) {
    const factory = workerFactory();
    if (factory === undefined || this.disposed || poolFailure !== undefined) return;
    while (this.workers.length < Math.min(count, MAX_THREADS - 1)) {
      const index = this.workers.length;
      try {
        this.workers.push(factory(
            {module: this.module, memory: this.memory, controlAt: this.controlAt, index},
            reason => this.fail(reason)));
      } catch (e) {
        this.fail(`worker failed to start: ${String(e)}`);
        return;
      }
    }
  }

  get workerCount(): number {
    return this.workers.length;
  }

  /** Threads a job run now would have, up to `wanted`: the caller and the first ready workers. */
  readyThreads(wanted: number): number {
    if (this.disposed) return 1;
    const ready = Atomics.load(this.control, READY);
    let threads = 1;
    while (threads < wanted && (ready & (1 << (threads - 1))) !== 0) threads++;
    return threads;
  }

  /**
   * Opens a job at `jobAt` whose task states are at `statesAt`, for the caller and the first
   * `threads − 1` workers; its tasks are published with `publish` and run with `finish`. It
   * wakes those workers already: each finds no task yet and parks again, but its core, woken
   * from a halt that takes 80–200 µs to leave (npm run bench:wake), is then still polling
   * when the first step is published, and takes the step in ~10 µs.
   */
  open(jobAt: number, statesAt: number, threads: number): ThreadJob {
    const control = this.control;
    Atomics.store(control, JOB, jobAt);
    Atomics.store(control, TASK_STATES, statesAt);
    Atomics.store(control, TASK_COUNT, 0);
    Atomics.store(control, DONE, 0);
    Atomics.store(control, WORKERS_WANTED, threads - 1);
    this.sequence++;
    Atomics.store(control, CLAIM, openClaim(this.sequence));
    this.wakeWorkers(threads - 1);
    return {
      openState: openTaskState(this.sequence),
      publish: taskCount => this.publish(taskCount, threads),
      finish: (jobFlops, runTask) => this.finish(jobFlops, runTask),
    };
  }

  /** Makes tasks [0, taskCount) claimable (their states written) and wakes the job's workers. */
  private publish(taskCount: number, threads: number) {
    const control = this.control;
    Atomics.store(control, TASK_COUNT, taskCount);
    // Threads in the job that found no ready task wait on PROGRESS; parked workers on their WAKE word.
    Atomics.add(control, PROGRESS, 1);
    Atomics.notify(control, PROGRESS);
    this.wakeWorkers(threads - 1);
  }

  /** Wakes workers [0, count), each parked on its own word (a new value in each). */
  private wakeWorkers(count: number) {
    this.wakes++;
    for (let worker = 0; worker < count; worker++) {
      Atomics.store(this.control, WAKE + worker, this.wakes);
      Atomics.notify(this.control, WAKE + worker);
    }
  }

  /**
   * Claims the published tasks with the workers and returns once all are done, the job closed;
   * returns false (and fails the pool) if no task finished for the stall limit while some were
   * claimed and unfinished — a worker stopped in the middle of one — in which case the job's
   * sums are not to be used. `jobFlops` (the job's work) lengthens the stall limit.
   */
  private finish(jobFlops: number, runTask: (job: number, task: number) => void): boolean {
    const stallMs = threadPoolTesting.stallMs + jobFlops / 1e5;
    const control = this.control;
    const taskCount = Atomics.load(control, TASK_COUNT);
    const block = callerMayBlock(control);
    let done = Atomics.load(control, DONE);
    let progressAt = Date.now();
    /** Whether no task has finished for the stall limit (`done` follows DONE). */
    const stalled = () => {
      const now = Atomics.load(control, DONE);
      if (now === done) return Date.now() - progressAt > stallMs;
      [done, progressAt] = [now, Date.now()];
      return false;
    };
    // Until PROGRESS leaves `seen` (a task finished or more were published): spins for
    // CALLER_SPIN_MS, then blocks (or spins, where the thread may not block) in slices of 50 ms.
    const awaitProgress = (seen: number) => {
      const spinUntil = performance.now() + CALLER_SPIN_MS;
      while (Atomics.load(control, PROGRESS) === seen && performance.now() < spinUntil) {
        // spinning: the workers' last tasks usually end within it
      }
      if (block) Atomics.wait(control, PROGRESS, seen, 50);
    };
    // No ready task: the ones left follow tasks other threads run.
    const waitForProgress: ProgressWaiter = (_, seen) => {
      awaitProgress(seen);
      return !stalled();
    };
    if (claimAndRun(this.memory, control, 0, runTask, waitForProgress) >= 0) {
      done = Atomics.load(control, DONE);
      progressAt = Date.now();
      while (done < taskCount) {
        const seen = Atomics.load(control, PROGRESS);
        if (Atomics.load(control, DONE) >= taskCount) break;
        awaitProgress(seen);
        if (stalled()) break;
      }
      done = Atomics.load(control, DONE);
    }
    Atomics.store(control, CLAIM, CLOSED);
    if (done < taskCount) {
      this.fail('a worker stopped in the middle of a task');
      return false;
    }
    return true;
  }

  /** Ends the workers; the pool is not used again. */
  dispose() {
    if (this.disposed) return;
    this.disposed = true;
    Atomics.store(this.control, WORKERS_WANTED, 0);
    for (const worker of this.workers) worker.terminate();
    this.workers.length = 0;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  /** Terminates one worker as if it had died (tests). */
  killWorkerForTesting(index: number) {
    this.workers[index]?.terminate();
  }

  private fail(reason: string) {
    if (this.disposed) return;
    poolFailure ??= reason;
    this.dispose();
  }
}

/** A job open on the pool: its tasks are published in steps, then run to the end. */
export interface ThreadJob {
  /** The state word of each task of this job before it is claimed (thread_protocol.ts). */
  readonly openState: number;
  /** Makes tasks [0, taskCount) claimable (their task records and states written) and wakes the workers. */
  publish(taskCount: number): void;
  /**
   * Runs the published tasks on the caller and the workers and returns once all are done;
   * false if a worker stopped in the middle of a task (the pool has failed, the sums are not
   * to be used).
   */
  finish(jobFlops: number, runTask: (job: number, task: number) => void): boolean;
}

/** Whether a pool has failed here, and why (tests). */
export function poolFailureReason(): string | undefined {
  return poolFailure;
}

/** Lets pools start again after a failure (tests of the failure paths). */
export function resetPoolFailureForTesting() {
  poolFailure = undefined;
}

/** Tests: pretend workers cannot start here (undefined: back to the runtime's). */
export function overrideWorkerFactoryForTesting(factory: WorkerFactory | null | undefined) {
  cachedFactory = factory;
}

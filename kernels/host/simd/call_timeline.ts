/**
 * A SIMD call's timeline, recorded while `simdTesting.recordTimeline` is true (benches and
 * specs; `npm run bench:timeline` prints it): when the calling thread reached each phase of the
 * call and which thread ran each task, from when to when. Every thread logs its own tasks into
 * the shared memory (runTaskLogged in thread_protocol.ts); the calling thread reads the log after
 * each chunk. Times are ms from the call's start (computeFilterGradientSimd's entry), on one clock
 * for all threads (ms since the epoch: each thread has its own performance.timeOrigin).
 */
import {epochMs, TASK_LOG_AT, TASK_LOG_COUNT, TASK_LOG_ENTRY_DOUBLES} from './thread_protocol';

/** What the calling thread had done at a timeline event. */
export type CallPhase =
    /** The plan is made (threads, split); the chunks start next. */
    'planned'|
    /** A chunk's job is opened and its workers woken (threads only). */
    'opened'|
    /** A step's lines are packed and its tasks written; with threads, published. */
    'step'|
    /** Every task of the chunk is done (with threads: the calling thread stopped waiting). */
    'chunk done'|
    /** The filter is in the result array: the call returns. */
    'copied';

export interface CallEvent {
  readonly phase: CallPhase;
  /** ms from the call's start. */
  readonly at: number;
  readonly chunk: number;
}

export interface TaskRun {
  /** 0: the calling thread; i + 1: worker i. */
  readonly thread: number;
  /** The task's index in its chunk's job. */
  readonly task: number;
  readonly chunk: number;
  /** ms from the call's start. */
  readonly start: number;
  readonly end: number;
}

export interface CallTimeline {
  /** The threads the call ran on. */
  readonly threads: number;
  readonly events: readonly CallEvent[];
  /** In the order they ended within each chunk. */
  readonly tasks: readonly TaskRun[];
}

/** Bytes of the task log for a chunk of `tasks` tasks. */
export const taskLogBytes = (tasks: number) => 8 * TASK_LOG_ENTRY_DOUBLES * tasks;

/** Records one call's timeline (see the module comment). */
export class CallTimelineRecorder {
  private readonly origin = epochMs();
  private readonly events: CallEvent[] = [];
  private readonly tasks: TaskRun[] = [];
  private chunk = 0;

  mark(phase: CallPhase) {
    this.events.push({phase, at: epochMs() - this.origin, chunk: this.chunk});
  }

  /** Makes every thread log the tasks it runs into `logAt` (a chunk's worth, taskLogBytes). */
  startChunk(control: Int32Array, logAt: number) {
    Atomics.store(control, TASK_LOG_COUNT, 0);
    Atomics.store(control, TASK_LOG_AT, logAt);
  }

  /** Stops the logging and takes the chunk's task runs out of `memory`. */
  endChunk(memory: WebAssembly.Memory, control: Int32Array) {
    const logAt = Atomics.load(control, TASK_LOG_AT);
    Atomics.store(control, TASK_LOG_AT, 0);
    const entries = new Float64Array(memory.buffer, logAt, TASK_LOG_ENTRY_DOUBLES * Atomics.load(control, TASK_LOG_COUNT));
    for (let i = 0; i < entries.length; i += TASK_LOG_ENTRY_DOUBLES) {
      const [thread, task, start, end] = entries.subarray(i, i + TASK_LOG_ENTRY_DOUBLES);
      this.tasks.push({thread, task, chunk: this.chunk, start: start - this.origin, end: end - this.origin});
    }
    this.chunk++;
  }

  finish(threads: number): CallTimeline {
    return {threads, events: this.events, tasks: this.tasks};
  }
}

/**
 * How the calling thread and the worker threads of the micro-kernels (thread_pool.ts,
 * thread_worker.ts) share a job: words of an Int32Array on the shared WebAssembly memory, and
 * one claim loop both sides run. Imported by the worker's script too, so both agree by
 * construction.
 *
 * A job is a table of tasks (see runTask in assembly/micro_kernels.ts). Tasks of later steps add
 * into the same sums as tasks of earlier ones, which must come first (each sum sees its blocks in
 * one order): every task has two words in the array at byte offset TASK_STATES, the task it
 * follows (−1: none) and its state, (tag << 2) | OPEN, CLAIMED or FINISHED, where the tag is the
 * job's. The caller opens a job by storing CLAIM = (tag << 12) | 0 with TASK_COUNT 0, then
 * publishes its tasks in steps: it packs the lines a step reads, writes its tasks and their
 * states, raises TASK_COUNT, bumps PROGRESS and wakes the workers it wants, each parked on its
 * own word (WAKE + index), so workers beyond the thread count stay asleep.
 *
 * Every thread claims the first published task that is open and **ready** (the task it follows is
 * finished) by compare-and-exchange on that task's state, runs it, marks it finished, counts it in
 * DONE and bumps PROGRESS. A task whose predecessor another thread still runs is skipped, not
 * waited for, so a thread that is preempted in the middle of a task holds up only the tasks that
 * follow it, never the others. A thread that finds open tasks but none ready waits for PROGRESS
 * to change (a task finished or more published); one that finds none open returns (a worker parks
 * until the next step wakes it). The low bits of CLAIM are a low-water mark: every task below it
 * is claimed, so scans start there. The caller returns when DONE reaches the task count. Between
 * jobs CLAIM holds CLOSED, and a job's states carry its tag, so a thread still in the loop of one
 * job never claims a task of the next (its exchange expects the old tag).
 *
 * Which thread runs which task varies; what each task computes and in which order tasks meet one
 * sum do not. While a call records its timeline (call_timeline.ts), TASK_LOG_AT points at a log
 * where every thread notes each task it runs: which thread, which task, from when to when.
 */

/** Word indices. */
/** (tag << TASK_BITS) | the low-water mark: every task below it is claimed. CLOSED between jobs. */
export const CLAIM = 0;
export const DONE = 1;
/** One bit per worker that has instantiated the module and parked. */
export const READY = 2;
export const JOB = 3;
export const TASK_COUNT = 4;
/** Workers with an index below this take part in the job (the thread count minus the caller). */
export const WORKERS_WANTED = 5;
/** Byte offset of the task states: two words per task (the task it follows or −1, and its state). */
export const TASK_STATES = 6;
/** Bumped and notified when a task is finished or more are published: threads with no ready task wait on it. */
export const PROGRESS = 7;
/** Worker i parks on word WAKE + i, which the caller sets to a new value at each publish to wake it. */
export const WAKE = 8;
/** Words for at most this many workers. */
export const MAX_WORKERS = 15;
/**
 * Byte offset of the task log while a call records its timeline (0: not recording): each thread
 * logs every task it runs as TASK_LOG_ENTRY_DOUBLES float64s (see runTaskLogged).
 */
export const TASK_LOG_AT = WAKE + MAX_WORKERS;
/** Entries in the task log. */
export const TASK_LOG_COUNT = TASK_LOG_AT + 1;
/** The last word stays 0 (the calling thread's test whether it may block waits on it). */
export const CONTROL_WORDS = TASK_LOG_COUNT + 2;
export const CONTROL_BYTES = 4 * CONTROL_WORDS;

/** CLAIM between jobs: tag 0xFFFFF and task 0xFFF, which no published job uses. */
export const CLOSED = -1;
export const TASK_BITS = 12;
export const MAX_TASKS = (1 << TASK_BITS) - 2;
const TASK_MASK = (1 << TASK_BITS) - 1;
const TAG_LIMIT = 0xFFFFF;

/** The CLAIM word opening job number `sequence` (its tag), its first task unclaimed. */
export function openClaim(sequence: number): number {
  return (jobTag(sequence) << TASK_BITS) | 0;
}

const jobTag = (sequence: number) => sequence % TAG_LIMIT;

/** A task's state: not claimed yet, claimed by a thread that runs it, finished. */
export const OPEN = 0;
export const CLAIMED = 1;
export const FINISHED = 2;
export const TASK_STATE_BITS = 2;

/** The state word of a task of the job with `tag` (from CLAIM) in `status`. */
export function taskState(tag: number, status: number): number {
  return (tag << TASK_STATE_BITS) | status;
}

/** The state word the caller writes for each task it publishes in job number `sequence`. */
export function openTaskState(sequence: number): number {
  return taskState(jobTag(sequence), OPEN);
}

/**
 * The task states of the open job, as an Int32Array on the memory's current buffer (the memory
 * may have grown since `control` was made).
 */
export function taskStates(memory: WebAssembly.Memory, control: Int32Array, taskCount: number): Int32Array {
  return new Int32Array(memory.buffer, Atomics.load(control, TASK_STATES), 2 * taskCount);
}

/**
 * Waits until PROGRESS differs from `seen` (a task finished or more were published). Returns
 * false if it gave up (the calling thread's waiter does when the job has stalled); then the job's
 * sums are not to be used.
 */
export type ProgressWaiter = (control: Int32Array, seen: number) => boolean;

/** A worker's waiter: it blocks until there is progress (a stalled job ends the worker). */
export const blockForProgress: ProgressWaiter = (control, seen) => {
  Atomics.wait(control, PROGRESS, seen);
  return true;
};

/** A task log entry: the thread (0 the calling thread, i + 1 worker i), the task, its start and end (ms since the epoch). */
export const TASK_LOG_ENTRY_DOUBLES = 4;

/** ms since the epoch, comparable between threads (each has its own performance.timeOrigin). */
export const epochMs = () => performance.timeOrigin + performance.now();

/**
 * Runs task `task` of `job`; while the call records its timeline (TASK_LOG_AT set), logs it:
 * which thread ran it, when it started and ended.
 */
export function runTaskLogged(
    memory: WebAssembly.Memory, control: Int32Array, thread: number, runTask: (job: number, task: number) => void,
    job: number, task: number) {
  const logAt = Atomics.load(control, TASK_LOG_AT);
  if (logAt === 0) {
    runTask(job, task);
    return;
  }
  const start = epochMs();
  runTask(job, task);
  const end = epochMs();
  const entry = Atomics.add(control, TASK_LOG_COUNT, 1);
  new Float64Array(memory.buffer, logAt + 8 * TASK_LOG_ENTRY_DOUBLES * entry, TASK_LOG_ENTRY_DOUBLES)
      .set([thread, task, start, end]);
}

/**
 * Claims and runs ready tasks of the open job until none is open; returns how many it ran, or
 * −1 if `waitForProgress` gave up. `runTask(job, task)` is the module's export; `thread` names
 * this thread in the task log (0 the calling thread, i + 1 worker i).
 */
export function claimAndRun(
    memory: WebAssembly.Memory, control: Int32Array, thread: number, runTask: (job: number, task: number) => void,
    waitForProgress: ProgressWaiter): number {
  let ran = 0;
  let states: Int32Array|undefined;
  let statesTag = -1;
  for (;;) {
    // Read first: a task finished or published after this changes PROGRESS, so the wait below ends.
    const progress = Atomics.load(control, PROGRESS);
    const claim = Atomics.load(control, CLAIM);
    if (claim === CLOSED) return ran;
    const tag = claim >>> TASK_BITS;
    const count = Atomics.load(control, TASK_COUNT);
    const job = Atomics.load(control, JOB);
    if ((claim & TASK_MASK) >= count) return ran;
    // The states of this job (the memory may have grown, and more tasks are published in steps).
    if (states === undefined || tag !== statesTag || states.length < 2 * count) {
      [states, statesTag] = [taskStates(memory, control, count), tag];
    }
    const [open, finished] = [taskState(tag, OPEN), taskState(tag, FINISHED)];
    let task = -1;
    let blocked = false;
    for (let t = claim & TASK_MASK; t < count && task < 0; t++) {
      if (Atomics.load(states, 2 * t + 1) !== open) continue;
      const follows = Atomics.load(states, 2 * t);
      if (follows >= 0 && Atomics.load(states, 2 * follows + 1) !== finished) {
        blocked = true;
      } else if (Atomics.compareExchange(states, 2 * t + 1, open, taskState(tag, CLAIMED)) === open) {
        task = t;
      }
    }
    if (task < 0) {
      if (!blocked) return ran;
      if (!waitForProgress(control, progress)) return -1;
      continue;
    }
    raiseLowWaterMark(control, states, claim, count, open);
    runTaskLogged(memory, control, thread, runTask, job, task);
    ran++;
    Atomics.store(states, 2 * task + 1, finished);
    Atomics.add(control, DONE, 1);
    Atomics.add(control, PROGRESS, 1);
    Atomics.notify(control, PROGRESS);
  }
}

/** Moves CLAIM's low-water mark past the tasks at its start that are no longer open. */
function raiseLowWaterMark(control: Int32Array, states: Int32Array, claim: number, count: number, open: number) {
  let first = claim & TASK_MASK;
  while (first < count && Atomics.load(states, 2 * first + 1) !== open) first++;
  // Fails if another thread moved it or the job closed: both fine.
  if (first !== (claim & TASK_MASK)) Atomics.compareExchange(control, CLAIM, claim, (claim & ~TASK_MASK) | first);
}

/**
 * How the calling thread and the worker threads of the micro-kernels (thread_pool.ts,
 * thread_worker.ts) share a job: words of an Int32Array on the shared WebAssembly memory, and
 * one claim loop both sides run. Imported by the worker's script too, so both agree by
 * construction.
 *
 * A job is a table of tasks (see runTask in assembly/micro_kernels.ts). The caller opens a job by
 * storing CLAIM = (tag << 12) | 0 with TASK_COUNT 0, then publishes its tasks in steps: it packs
 * the lines a step reads, writes its tasks, raises TASK_COUNT and wakes the workers it wants, each parked
 * on its own word (WAKE + index), so workers beyond the thread count stay asleep. Every thread
 * claims the next published task by compare-and-exchange on CLAIM, runs it and counts it in
 * DONE; a worker that finds no published task parks again until the next step wakes it. The
 * caller returns when DONE reaches the task count. Between jobs CLAIM holds CLOSED, so a thread
 * that read CLAIM for one job can never claim a task of the next (its exchange fails: the word
 * changed).
 *
 * Tasks of later steps add into the same sums as tasks of earlier ones, which must come first
 * (each sum sees its blocks in one order): every task has a state of two words in the array at
 * byte offset TASK_STATES — the task it follows (−1: none) and whether it is done — and a thread
 * that claims a task first waits until the task it follows is done. That task was claimed
 * earlier, so the wait ends. Which thread runs which task varies; what each task computes and in
 * which order tasks meet one sum do not.
 */

/** Word indices. */
export const CLAIM = 0;
export const DONE = 1;
/** One bit per worker that has instantiated the module and parked. */
export const READY = 2;
export const JOB = 3;
export const TASK_COUNT = 4;
/** Workers with an index below this take part in the job (the thread count minus the caller). */
export const WORKERS_WANTED = 5;
/** Byte offset of the task states: two words per task (the task it follows or −1, and done 0/1). */
export const TASK_STATES = 6;
/** Worker i parks on word WAKE + i, which the caller sets to a new value at each publish to wake it. */
export const WAKE = 7;
/** Words for at most this many workers. */
export const MAX_WORKERS = 15;
export const CONTROL_WORDS = WAKE + MAX_WORKERS + 1;
export const CONTROL_BYTES = 4 * CONTROL_WORDS;

/** CLAIM between jobs: tag 0xFFFFF and task 0xFFF, which no published job uses. */
export const CLOSED = -1;
export const TASK_BITS = 12;
export const MAX_TASKS = (1 << TASK_BITS) - 2;
const TASK_MASK = (1 << TASK_BITS) - 1;
const TAG_LIMIT = 0xFFFFF;

/** The CLAIM word opening job number `sequence` (its tag), its first task unclaimed. */
export function openClaim(sequence: number): number {
  return ((sequence % TAG_LIMIT) << TASK_BITS) | 0;
}

/**
 * The task states of the open job, as an Int32Array on the memory's current buffer (the memory
 * may have grown since `control` was made).
 */
export function taskStates(memory: WebAssembly.Memory, control: Int32Array, taskCount: number): Int32Array {
  return new Int32Array(memory.buffer, Atomics.load(control, TASK_STATES), 2 * taskCount);
}

/**
 * Waits until a task is done: `states[doneAt]` becomes 1. Returns false if it gave up (the
 * calling thread's waiter does when the job has stalled); then the job's sums are not to be used.
 */
export type TaskWaiter = (states: Int32Array, doneAt: number) => boolean;

/** A worker's waiter: it blocks until the task is done (a stalled job ends the worker). */
export const blockUntilDone: TaskWaiter = (states, doneAt) => {
  while (Atomics.load(states, doneAt) === 0) Atomics.wait(states, doneAt, 0);
  return true;
};

/**
 * Claims and runs the published tasks of the open job until none is left; returns how many it
 * ran, or −1 if `waitUntilDone` gave up. `runTask(job, task)` is the module's export.
 */
export function claimAndRun(
    memory: WebAssembly.Memory, control: Int32Array, runTask: (job: number, task: number) => void,
    waitUntilDone: TaskWaiter): number {
  let ran = 0;
  let states: Int32Array|undefined;
  let statesTag = -1;
  for (;;) {
    const claim = Atomics.load(control, CLAIM);
    if (claim === CLOSED) return ran;
    // Read before the exchange: if it succeeds, CLAIM did not change, so these are this job's
    // (TASK_COUNT only grows while a job is open).
    const count = Atomics.load(control, TASK_COUNT);
    const job = Atomics.load(control, JOB);
    const task = claim & TASK_MASK;
    if (task >= count) return ran;
    if (Atomics.compareExchange(control, CLAIM, claim, claim + 1) !== claim) continue;
    // The states of this job (a thread still looping when the next job opens claims its tasks).
    const tag = claim >>> TASK_BITS;
    if (states === undefined || tag !== statesTag || states.length < 2 * count) {
      [states, statesTag] = [taskStates(memory, control, count), tag];
    }
    const follows = Atomics.load(states, 2 * task);
    if (follows >= 0 && !waitUntilDone(states, 2 * follows + 1)) return -1;
    runTask(job, task);
    ran++;
    Atomics.store(states, 2 * task + 1, 1);
    Atomics.notify(states, 2 * task + 1);
    // The caller waits on DONE only once every task is published: wake it for the last one.
    if (Atomics.add(control, DONE, 1) + 1 === Atomics.load(control, TASK_COUNT)) Atomics.notify(control, DONE);
  }
}

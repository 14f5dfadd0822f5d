/**
 * How the calling thread and the worker threads of the micro-kernels (thread_pool.ts,
 * thread_worker.ts) share a job: words of an Int32Array on the shared WebAssembly memory, and
 * one claim loop both sides run. Imported by the worker's script too, so both agree by
 * construction.
 *
 * A job is a table of tasks (see runTask in assembly/micro_kernels.ts). The caller writes the
 * job, then publishes it by storing CLAIM = (tag << 12) | 0, bumps SEQUENCE and wakes the
 * workers it wants, each parked on its own word (WAKE + index), so workers beyond the thread
 * count stay asleep. Every thread claims the next task by compare-and-exchange on CLAIM, runs it
 * and counts it in DONE; the caller returns when DONE reaches the task count. Between jobs
 * CLAIM holds CLOSED, so a thread that read CLAIM for one job can never claim a task of the
 * next (its exchange fails: the word changed). Which thread runs which task varies; what each
 * task computes does not.
 */

/** Word indices. */
export const SEQUENCE = 0;
export const CLAIM = 1;
export const DONE = 2;
/** One bit per worker that has instantiated the module and parked. */
export const READY = 3;
export const JOB = 4;
export const TASK_COUNT = 5;
/** Workers with an index below this take part in the job (the thread count minus the caller). */
export const WORKERS_WANTED = 6;
/** Worker i parks on word WAKE + i, which the caller sets to the job's SEQUENCE to wake it. */
export const WAKE = 8;
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

/** The CLAIM word publishing job number `sequence`, its first task unclaimed. */
export function openClaim(sequence: number): number {
  return ((sequence % TAG_LIMIT) << TASK_BITS) | 0;
}

/**
 * Claims and runs tasks of the published job until none is left; returns how many it ran.
 * `runTask(job, task)` is the module's export.
 */
export function claimAndRun(control: Int32Array, runTask: (job: number, task: number) => void): number {
  let ran = 0;
  for (;;) {
    const claim = Atomics.load(control, CLAIM);
    if (claim === CLOSED) return ran;
    // Read before the exchange: if it succeeds, CLAIM did not change, so these are this job's.
    const count = Atomics.load(control, TASK_COUNT);
    const job = Atomics.load(control, JOB);
    const task = claim & TASK_MASK;
    if (task >= count) return ran;
    if (Atomics.compareExchange(control, CLAIM, claim, claim + 1) !== claim) continue;
    runTask(job, task);
    ran++;
    if (Atomics.add(control, DONE, 1) + 1 === count) Atomics.notify(control, DONE);
  }
}

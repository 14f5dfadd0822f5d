import {execFileSync} from 'child_process';
import * as fs from 'fs';
import * as os from 'os';

/**
 * `--pin` for the benches: each thread of ours on a CPU of its own, so the OS cannot put a woken
 * worker on the calling thread's core. This machine's guest kernel does that (docs/threads.md,
 * "Where a woken worker runs"); a user's process is not pinned, so pinned figures say what the kernel
 * gives when its threads keep their cores, not what a user here pays. Linux only: threads are
 * pinned with `taskset` (util-linux), by the ids /proc lists.
 */

/** The ids of this process's threads now (Linux). */
function threadIds(): Set<number> {
  return new Set(fs.readdirSync('/proc/self/task').map(Number));
}

/** Whether pinning can run here: Linux, with `taskset`; otherwise why not. */
export function pinUnavailable(): string|undefined {
  if (os.platform() !== 'linux') return `--pin needs Linux (this is ${os.platform()})`;
  try {
    execFileSync('taskset', ['-p', String(process.pid)], {stdio: 'ignore'});
  } catch {
    return '--pin needs taskset (util-linux)';
  }
  return undefined;
}

function pin(threadId: number, cpu: number) {
  execFileSync('taskset', ['-p', '-c', String(cpu), String(threadId)], {stdio: 'ignore'});
}

/**
 * Pins the calling (main) thread to CPU 0, then runs `start` (which starts worker threads) and
 * pins each thread it added to CPUs 1, 2, … in turn (wrapping around past the last CPU). Returns
 * what `start` returned and how many threads were pinned.
 */
export async function pinnedStart<T>(start: () => Promise<T>): Promise<{value: T; pinned: number}> {
  pin(process.pid, 0);
  const before = threadIds();
  const value = await start();
  const added = [...threadIds()].filter(id => !before.has(id));
  const cpus = os.cpus().length;
  added.forEach((id, i) => pin(id, cpus === 1 ? 0 : 1 + i % (cpus - 1)));
  return {value, pinned: added.length};
}

/**
 * The environment that binds an OpenMP program's threads one to a core, the first on CPU 0
 * (libgomp: OMP_PROC_BIND, OMP_PLACES), for PyTorch beside pinned threads of ours.
 */
export const OPENMP_PINNED_ENV = {OMP_PROC_BIND: 'close', OMP_PLACES: 'cores'};

/** A Chromium page's threads that `npm run bench:browser-threads -- --pin` pins (Linux /proc). */
export interface PageThreads {
  /** Each renderer process's main thread (its process id): a page's main thread is one of them. */
  readonly main: number[];
  /** The renderers' Web Worker threads (`DedicatedWorker` in /proc/<pid>/task/<tid>/comm). */
  readonly workers: number[];
}

/** The threads of Chromium's renderer processes (`--type=renderer` on their command line) under `procDir`. */
export function chromiumPageThreads(procDir = '/proc'): PageThreads {
  const main: number[] = [];
  const workers: number[] = [];
  for (const entry of fs.readdirSync(procDir)) {
    if (!/^\d+$/.test(entry)) continue;
    let commandLine: string;
    let tasks: string[];
    try {
      commandLine = fs.readFileSync(`${procDir}/${entry}/cmdline`, 'utf8');
      tasks = fs.readdirSync(`${procDir}/${entry}/task`);
    } catch {
      continue;  // a process that ended while we looked
    }
    // Chromium rewrites its children's command lines into one string with spaces.
    if (!commandLine.split(/[\0 ]/).includes('--type=renderer')) continue;
    main.push(Number(entry));
    for (const task of tasks) {
      try {
        if (fs.readFileSync(`${procDir}/${entry}/task/${task}/comm`, 'utf8').startsWith('DedicatedWorker')) workers.push(Number(task));
      } catch {
        // a thread that ended while we looked
      }
    }
  }
  return {main, workers};
}

/**
 * Pins the Chromium page threads not pinned yet (`pinned` holds those that are): renderer main
 * threads to CPU 0, Web Workers to CPUs 1, 2, … in the order found (wrapping around past the last
 * CPU). Returns how many of each are pinned in all.
 */
export function pinChromiumPageThreads(pinned: {main: Set<number>; workers: Set<number>}): {main: number; workers: number} {
  const cpus = os.cpus().length;
  const {main, workers} = chromiumPageThreads();
  const tryPin = (id: number, cpu: number, into: Set<number>) => {
    try {
      pin(id, cpu);
      into.add(id);
    } catch {
      // the thread ended between the scan and taskset
    }
  };
  for (const id of main) if (!pinned.main.has(id)) tryPin(id, 0, pinned.main);
  for (const id of workers) if (!pinned.workers.has(id)) tryPin(id, cpus === 1 ? 0 : 1 + pinned.workers.size % (cpus - 1), pinned.workers);
  return {main: pinned.main.size, workers: pinned.workers.size};
}

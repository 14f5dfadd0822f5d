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

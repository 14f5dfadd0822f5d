import {execFileSync} from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {Worker} from 'worker_threads';

import {parseOptions} from '../bench/cpu/options';
import {chromiumPageThreads, pinnedStart, pinUnavailable} from '../bench/pin_threads';

/** `npm run bench -- --pin` (bench/pin_threads.ts): each thread of ours on a CPU of its own. */
describe('npm run bench -- --pin', () => {
  it('names its result files cpu-pinned, and refuses --relaxed-ab, whose second pool would run unpinned', () => {
    const options = parseOptions(['--pin']);
    expect(options.pin).toBeTrue();
    expect(options.resultName).toMatch(/^cpu-pinned(-node\d+)?$/);
    expect(parseOptions([]).pin).toBeFalse();
    expect(() => parseOptions(['--pin', '--relaxed-ab'])).toThrowError(/--pin and --relaxed-ab/);
  });

  /** The CPUs thread `id` of this process may run on, as /proc lists them ("0", "1", "0-1"). */
  const allowedCpus = (id: number) =>
      /Cpus_allowed_list:\s*(\S+)/.exec(fs.readFileSync(`/proc/self/task/${id}/status`, 'utf8'))![1];

  it('pins the calling thread to CPU 0 and the threads its start added to CPU 1, 2, …', async () => {
    const unavailable = pinUnavailable() ?? (os.cpus().length < 2 ? 'one CPU' : undefined);
    if (unavailable !== undefined) {
      pending(`cannot pin here: ${unavailable}`);
      return;
    }
    const everyCpu = allowedCpus(process.pid);
    let worker: Worker|undefined;
    try {
      const {value, pinned} = await pinnedStart(async () => {
        worker = new Worker('require("worker_threads").parentPort.postMessage(0); setInterval(() => {}, 1000);', {eval: true});
        await new Promise(resolve => worker!.once('message', resolve));
        return 'started';
      });
      expect(value).toBe('started');
      expect(pinned).toBeGreaterThanOrEqual(1);
      expect(allowedCpus(process.pid)).toBe('0');
      const others = fs.readdirSync('/proc/self/task').map(Number).filter(id => id !== process.pid);
      expect(others.map(allowedCpus)).toContain('1');
    } finally {
      await worker?.terminate();
      // The rest of the suite runs on every CPU again.
      execFileSync('taskset', ['-p', '-c', everyCpu, String(process.pid)], {stdio: 'ignore'});
    }
    expect(allowedCpus(process.pid)).toBe(everyCpu);
  });

  it('finds a Chromium page\'s threads to pin: each renderer\'s main thread and its Web Workers', () => {
    // A made-up /proc: two renderers (main thread, Web Workers, a compositor), a GPU process with a
    // worker-named thread, a process without a command line and an entry that is not a process.
    const proc = fs.mkdtempSync(path.join(os.tmpdir(), 'proc-'));
    try {
      const addProcess = (pid: number, commandLine: string|null, threads: Record<number, string>) => {
        fs.mkdirSync(path.join(proc, String(pid), 'task'), {recursive: true});
        if (commandLine !== null) fs.writeFileSync(path.join(proc, String(pid), 'cmdline'), commandLine);
        for (const [tid, comm] of Object.entries(threads)) {
          fs.mkdirSync(path.join(proc, String(pid), 'task', tid));
          fs.writeFileSync(path.join(proc, String(pid), 'task', tid, 'comm'), `${comm}\n`);
        }
      };
      // Chromium rewrites a child's command line into one string with spaces.
      addProcess(100, '/usr/lib/chromium/chromium --type=renderer --lang=en\0', {100: 'chromium', 101: 'DedicatedWorker', 102: 'Compositor'});
      addProcess(150, '/usr/lib/chromium/chromium\0--type=renderer\0', {150: 'chromium', 151: 'DedicatedWorker', 152: 'DedicatedWorker'});
      addProcess(200, '/usr/lib/chromium/chromium\0--type=gpu-process\0', {200: 'chromium', 201: 'DedicatedWorker'});
      addProcess(300, null, {300: 'DedicatedWorker'});
      fs.mkdirSync(path.join(proc, 'self'));
      expect(chromiumPageThreads(proc)).toEqual({main: [100, 150], workers: [101, 151, 152]});
    } finally {
      fs.rmSync(proc, {recursive: true, force: true});
    }
  });
});

import {execFileSync} from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import {Worker} from 'worker_threads';

import {parseOptions} from '../bench/cpu/options';
import {pinnedStart, pinUnavailable} from '../bench/pin_threads';

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
});

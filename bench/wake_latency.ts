/**
 * `npm run bench:wake [-- --pin]`: how soon, and where, a worker thread parked in Atomics.wait
 * runs once the calling thread notifies it, as the SIMD kernel's pool does at the start of a
 * call. Two cases: the calling thread worked alone for 0–20 ms before (the worker's core idled
 * meanwhile), and the whole process idled 0–20 ms before (as between the filter gradients of a
 * training step, or a bench's implementations). After the wake both threads do the same
 * WORK_MS of work: "pair" is the wall time of the two together in units of one's work, 1.0× when
 * each has a core, 2.0× when they share one. On Linux it also reads which CPU each thread runs
 * on (/proc/thread-self/stat); `--pin` pins the calling thread to CPU 0 and the worker to CPU 1
 * (bench/pin_threads.ts), which the OS then cannot override. docs/threads.md quotes it.
 */
import {Worker} from 'worker_threads';

import {epochMs} from '../kernels/host/simd/thread_protocol';

import {commandLine, switchOption} from './args';
import {pinnedStart, pinUnavailable} from './pin_threads';
import {CPU_NOW_SOURCE, cpuNow} from './thread_cpu';

const options = commandLine({
  usage: 'npm run bench:wake [-- options]',
  summary: 'How soon, and on which CPU, a worker parked in Atomics.wait runs once notified.',
  options: {'pin': switchOption('pin the calling thread to CPU 0 and the worker to CPU 1 (Linux, taskset)')},
});

const ROUNDS = 30;
const WORK_MS = 2;
const linux = process.platform === 'linux';
/** Fixed work, the same on both threads: a dependent chain of float operations. */
const WORK_SOURCE = `(n) => { let x = 1; for (let i = 0; i < n; i++) x = x * 1.0000001 + 1e-9; return x; }`;
const work = eval(WORK_SOURCE) as (iterations: number) => number;

// Control words: 0 the job count (caller → worker), 1 jobs done (worker → caller).
const control = new Int32Array(new SharedArrayBuffer(16));
// Per job: the worker's wake time (ms since the epoch) and its CPU then.
const records = new Float64Array(new SharedArrayBuffer(8 * 2 * 4096));
/** Iterations of `work` taking WORK_MS here: the fastest of 5 timings, after a warm-up that compiles it. */
const workIterations = (() => {
  work(1e7);
  let fastest = Infinity;
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    work(4e6);
    fastest = Math.min(fastest, performance.now() - start);
  }
  return Math.round(WORK_MS * 4e6 / fastest);
})();

const busyFor = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end) work(1000);
};
const quantile = (values: number[], q: number) =>
    [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];

/** One round: `beforeWake` runs, then the wake, then both threads' work; returns its figures. */
async function round(beforeWake: () => unknown) {
  const job = Atomics.load(control, 0);
  await beforeWake();
  const callerCpu = cpuNow();
  const woke = epochMs();
  Atomics.store(control, 0, job + 1);
  Atomics.notify(control, 0);
  work(workIterations);
  Atomics.wait(control, 1, job);
  return {latencyUs: (records[2 * job] - woke) * 1000, sameCpu: records[2 * job + 1] === callerCpu, pair: (epochMs() - woke) / WORK_MS};
}

async function report(label: string, beforeWake: () => unknown) {
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round(beforeWake));
  const latency = rounds.map(r => r.latencyUs);
  const pair = rounds.map(r => r.pair);
  const same = rounds.filter(r => r.sameCpu).length;
  console.log(`${label.padEnd(34)} worker runs after ${quantile(latency, 0.5).toFixed(0).padStart(5)} µs median (p90 ${
      quantile(latency, 0.9).toFixed(0).padStart(5)})${linux ? `, on the caller's CPU in ${String(same).padStart(2)} of ${ROUNDS}` : ''}; pair ${
      quantile(pair, 0.5).toFixed(2)}× one's work (p90 ${quantile(pair, 0.9).toFixed(2)}×)`);
}

async function main() {
  const startWorker = async () => {
    const worker = new Worker(`
const {workerData: {control, records, iterations}} = require('worker_threads');
const cpuNow = ${CPU_NOW_SOURCE};
const work = ${WORK_SOURCE};
for (let job = 0;; job++) {
  Atomics.wait(control, 0, job);
  records[2 * job] = performance.timeOrigin + performance.now();
  records[2 * job + 1] = cpuNow();
  work(iterations);
  Atomics.store(control, 1, job + 1);
  Atomics.notify(control, 1);
}`, {eval: true, workerData: {control, records, iterations: workIterations}});
    worker.unref();
    await new Promise(resolve => setTimeout(resolve, 300));
  };
  if (options.pin) {
    const unavailable = pinUnavailable();
    if (unavailable !== undefined) throw new Error(unavailable);
    await pinnedStart(startWorker);
  } else {
    await startWorker();
  }
  console.log(`${ROUNDS} wakes each; after the wake both threads do ${WORK_MS} ms of work${
      options.pin ? '; pinned: caller on CPU 0, worker on CPU 1' : ''}`);
  for (const ms of [0, 1, 5, 20]) await report(`caller worked alone ${ms} ms before:`, () => busyFor(ms));
  for (const ms of [0, 1, 5, 20]) {
    await report(`process idled ${ms} ms before:`, () => ms === 0 ? undefined : new Promise(resolve => setTimeout(resolve, ms)));
  }
}

main().catch(error => {
  console.error(error);
  process.exitCode = 1;
});

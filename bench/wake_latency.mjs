// How soon, and where, a worker thread parked in Atomics.wait runs once the calling thread
// notifies it, as the SIMD kernel's pool does at the start of a call: `node bench/wake_latency.mjs
// [--pin]`. Two cases: the calling thread worked alone for 0–20 ms before (the worker's core
// idled meanwhile), and the whole process idled 0–20 ms before (as between the filter gradients
// of a training step, or a bench's implementations). After the wake both threads do the same
// 2 ms of work: "pair" is the wall time of the two together, 1.0× one's work when each has a
// core, 2.0× when they share one. On Linux it also reads which CPU each thread runs on
// (/proc/thread-self/stat), and `--pin` pins the calling thread to CPU 0 and the worker to CPU 1
// (taskset), which the OS then cannot override. docs/threads.md quotes it.
import {execFileSync} from 'node:child_process';
import {readFileSync, readdirSync} from 'node:fs';
import {Worker} from 'node:worker_threads';

const linux = process.platform === 'linux';
const pin = process.argv.includes('--pin');
const ROUNDS = 30;
// The CPU this thread runs on now (Linux; field 39 of /proc/thread-self/stat), or -1.
const cpuSource = `(() => { try { return Number(require('fs').readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ')[36]); } catch { return -1; } })()`;
const cpuNow = () => linux ? Number(readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ')[36]) : -1;
// Fixed work, the same on both threads: a dependent chain of float operations.
const workSource = `(n) => { let x = 1; for (let i = 0; i < n; i++) x = x * 1.0000001 + 1e-9; return x; }`;
const work = eval(workSource);

// Control words: 0 the job count (caller → worker), 1 jobs done (worker → caller).
const control = new Int32Array(new SharedArrayBuffer(16));
// Per job: the worker's wake time (ms since the epoch), its CPU then, its work's end time.
const records = new Float64Array(new SharedArrayBuffer(8 * 3 * 4096));
const iterationsPerMs = (() => {
  work(1e6);
  const start = performance.now();
  work(4e6);
  return 4e6 / (performance.now() - start);
})();
const WORK_ITERATIONS = Math.round(2 * iterationsPerMs);

const before = new Set(linux ? readdirSync('/proc/self/task') : []);
const worker = new Worker(`
const {workerData: {control, records, iterations}} = require('worker_threads');
const work = ${workSource};
for (let job = 0;; job++) {
  Atomics.wait(control, 0, job);
  records[3 * job] = performance.timeOrigin + performance.now();
  records[3 * job + 1] = ${cpuSource};
  work(iterations);
  records[3 * job + 2] = performance.timeOrigin + performance.now();
  Atomics.store(control, 1, job + 1);
  Atomics.notify(control, 1);
}`, {eval: true, workerData: {control, records, iterations: WORK_ITERATIONS}});
worker.unref();
await new Promise(resolve => setTimeout(resolve, 300));
if (pin) {
  if (!linux) throw new Error('--pin needs Linux');
  const added = readdirSync('/proc/self/task').filter(id => !before.has(id));
  execFileSync('taskset', ['-p', '-c', '0', String(process.pid)], {stdio: 'ignore'});
  for (const id of added) execFileSync('taskset', ['-p', '-c', '1', id], {stdio: 'ignore'});
}

const now = () => performance.timeOrigin + performance.now();
const busyFor = ms => { const end = performance.now() + ms; while (performance.now() < end) work(1000); };
const quantile = (values, q) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];

/** One round: `before` runs, then the wake, then both threads' work; returns its figures. */
async function round(beforeWake) {
  const job = Atomics.load(control, 0);
  await beforeWake();
  const callerCpu = cpuNow();
  const woke = now();
  Atomics.store(control, 0, job + 1);
  Atomics.notify(control, 0);
  work(WORK_ITERATIONS);
  Atomics.wait(control, 1, job);
  const end = now();
  return {latencyUs: (records[3 * job] - woke) * 1000, sameCpu: records[3 * job + 1] === callerCpu, pair: (end - woke) / 2};
}

async function report(label, beforeWake) {
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round(beforeWake));
  const latency = rounds.map(r => r.latencyUs);
  const pair = rounds.map(r => r.pair);
  const same = rounds.filter(r => r.sameCpu).length;
  console.log(`${label.padEnd(34)} worker runs after ${quantile(latency, 0.5).toFixed(0).padStart(5)} µs median (p90 ${
      quantile(latency, 0.9).toFixed(0).padStart(5)})${linux ? `, on the caller's CPU in ${String(same).padStart(2)} of ${ROUNDS}` : ''}; pair ${
      quantile(pair, 0.5).toFixed(2)}× one's work (p90 ${quantile(pair, 0.9).toFixed(2)}×)`);
}

console.log(`${ROUNDS} wakes each; after the wake both threads do 2 ms of work${pin ? '; pinned: caller on CPU 0, worker on CPU 1' : ''}`);
for (const ms of [0, 1, 5, 20]) await report(`caller worked alone ${ms} ms before:`, async () => busyFor(ms));
for (const ms of [0, 1, 5, 20]) {
  await report(`process idled ${ms} ms before:`, () => ms === 0 ? undefined : new Promise(resolve => setTimeout(resolve, ms)));
}

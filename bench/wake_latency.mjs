// How long a worker thread parked in Atomics.wait takes to run once notified, after the calling
// thread worked alone for 0–20 ms (the idle core sleeps deeper the longer it idles):
// `node bench/wake_latency.mjs`. docs/threads.md quotes it for the thresholds.
import {Worker} from 'node:worker_threads';
const sab = new SharedArrayBuffer(64);
const w = new Int32Array(sab);
const times = new Float64Array(new SharedArrayBuffer(8 * 1000));
const worker = new Worker(`
const {workerData: {sab, tsab}} = require('worker_threads');
const w = new Int32Array(sab); const times = new Float64Array(tsab);
for (let i = 0;; i++) { Atomics.wait(w, 0, i); times[i] = performance.timeOrigin + performance.now(); Atomics.store(w, 1, i + 1); Atomics.notify(w, 1); }
`, {eval: true, workerData: {sab, tsab: times.buffer}});
await new Promise(r => setTimeout(r, 300));
const busy = ms => { const end = performance.now() + ms; let x = 0; while (performance.now() < end) x++; return x; };
for (const idle of [0, 0.2, 1, 5, 20]) {
  const lat = [];
  for (let i = 0; i < 40; i++) {
    const k = Atomics.load(w, 0);
    busy(idle);
    const t = performance.timeOrigin + performance.now();
    Atomics.store(w, 0, k + 1); Atomics.notify(w, 0);
    Atomics.wait(w, 1, k);
    lat.push((times[k] - t) * 1000);
  }
  lat.sort((a, b) => a - b);
  console.log(`main busy ${idle} ms before the wake: worker wakes after median ${lat[20].toFixed(0)} µs (p10 ${lat[4].toFixed(0)}, p90 ${lat[36].toFixed(0)})`);
}
process.exit(0);

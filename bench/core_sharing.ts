/**
 * `npm run bench:cores [-- --rounds N --gap-ms MS]`: whether this machine runs two threads at
 * full speed together. In each round the calling thread does the same throughput-bound work
 * (eight independent multiply-add chains, which keep a core's floating-point units busy, as the
 * micro-kernels do) alone, then beside a worker that does it too at the same time; the round's
 * figure is the median of 7 such pairs, the time beside the worker over the time alone, and
 * which CPU each thread was on (Linux). 1.0× means two cores; near 2× on different CPUs means
 * the two CPUs share one core's units (the hardware threads of one core, or a host that runs
 * both virtual CPUs on one), which no placement inside the machine changes. docs/threads.md
 * quotes it. Prints only.
 */
import {Worker} from 'worker_threads';

import {commandLine, nonNegativeInteger, positiveInteger, valueOption} from './args';
import {summarize} from './report';
import {CPU_NOW_SOURCE, cpuNow} from './thread_cpu';

const options = commandLine({
  usage: 'npm run bench:cores [-- options]',
  summary: 'Whether two threads run at full speed together: throughput-bound work alone and beside a worker, in rounds.',
  options: {
    'rounds': valueOption('N', 'rounds', 30, positiveInteger),
    'gap-ms': valueOption('MS', 'idle time between rounds', 500, nonNegativeInteger),
  },
});

/** Throughput-bound work: eight independent chains of multiply-adds. */
const WORK_SOURCE = `(n) => {
  let a = 1, b = 1, c = 1, d = 1, e = 1, f = 1, g = 1, h = 1;
  for (let i = 0; i < n; i++) {
    a = a * 1.0000001 + 1e-9; b = b * 1.0000002 + 1e-9; c = c * 1.0000003 + 1e-9; d = d * 1.0000004 + 1e-9;
    e = e * 1.0000005 + 1e-9; f = f * 1.0000006 + 1e-9; g = g * 1.0000007 + 1e-9; h = h * 1.0000008 + 1e-9;
  }
  return a + b + c + d + e + f + g + h;
}`;
const work = eval(WORK_SOURCE) as (iterations: number) => number;
const ITERATIONS = 2e6;
const PAIRS_PER_ROUND = 7;

// Control words: 0 the job count (caller → worker), 1 jobs done (worker → caller), 2 the worker's CPU.
const control = new Int32Array(new SharedArrayBuffer(12));
const median = (values: number[]) => summarize(values).median;

async function main() {
  const worker = new Worker(`
const {workerData: {control, iterations}} = require('worker_threads');
const work = ${WORK_SOURCE};
const cpuNow = ${CPU_NOW_SOURCE};
for (let job = 0;; job++) {
  Atomics.wait(control, 0, job);
  work(iterations);
  Atomics.store(control, 2, cpuNow());
  Atomics.store(control, 1, job + 1);
  Atomics.notify(control, 1);
}`, {eval: true, workerData: {control, iterations: ITERATIONS}});
  worker.unref();
  await new Promise(resolve => setTimeout(resolve, 300));
  work(ITERATIONS);
  console.log(`${options.rounds} rounds, ${options['gap-ms']} ms apart; each the median of ${PAIRS_PER_ROUND} pairs`);
  const ratios: number[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const alone: number[] = [];
    const beside: number[] = [];
    let sameCpu = 0;
    for (let i = 0; i < PAIRS_PER_ROUND; i++) {
      let start = performance.now();
      work(ITERATIONS);
      alone.push(performance.now() - start);
      const job = Atomics.load(control, 0);
      start = performance.now();
      Atomics.store(control, 0, job + 1);
      Atomics.notify(control, 0);
      work(ITERATIONS);
      beside.push(performance.now() - start);
      const callerCpu = cpuNow();
      Atomics.wait(control, 1, job);
      if (Atomics.load(control, 2) === callerCpu) sameCpu++;
    }
    const ratio = median(beside) / median(alone);
    ratios.push(ratio);
    console.log(`${new Date().toISOString().slice(11, 19)} alone ${median(alone).toFixed(2)} ms, beside the worker ${
        median(beside).toFixed(2)} ms: ${ratio.toFixed(2)}×; the two on one CPU in ${sameCpu} of ${PAIRS_PER_ROUND}`);
    await new Promise(resolve => setTimeout(resolve, options['gap-ms']));
  }
  const shared = ratios.filter(r => r >= 1.3).length;
  console.log(`rounds at ≥ 1.3× (the two threads sharing one core's units): ${shared} of ${ratios.length}; ratios ${
      Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×`);
}

main().catch(error => {
  console.error(error);
  process.exitCode = 1;
});

/**
 * `npm run bench:adaptive-threads`: the adaptive choice of threads (CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE,
 * kernels/host/simd/thread_outcomes.ts) against fixed threads and one thread, on the cpu backend,
 * interleaved in one process: each round runs `--calls` back-to-back calls of one thread, of N
 * threads with the flag false and of N threads with it true (every other round in reverse
 * order), so the choice keeps its record
 * across rounds as it does for a user's repeated calls. `--busy` runs a CPU-bound process beside
 * it (a second core taken, as another program would), to time what the choice is for;
 * `--busy-from R` starts that process at round R of each layer and stops it after the layer, so
 * the choice, settled on a quiet machine, must notice the change, and the figures are those of
 * the busy rounds. Prints and writes bench/results/adaptive-threads{-busy|-busy-from<R>}.md: per
 * layer the median ms per call of each way and the paired median ratio of one thread's time to
 * each threaded way's.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import {spawn} from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import {convolutionBackpropFilters, CONV_BACKPROP_FILTERS_THREADS, CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, simdThreadsReady} from '../kernels/index';

import {commandLine, nonNegativeInteger, outOption, positiveInteger, switchOption, valueOption} from './args';
import {markdownTable, pairedMedianRatio, summarize} from './report';
import {sourceState} from './source_state';
import {msPerCall} from './timed_calls';

interface Layer {
  name: string;
  /** NHWC input, NHWC output delta, square kernel, pads on each side (stride 1). */
  input: [number, number, number, number];
  outputChannels: number;
  kernel: number;
  pad: number;
}

/** Layers where threads gain little to much (docs/threads.md, "When threads do not pay"). */
const LAYERS: Layer[] = [
  {name: 'MobileNet-0.25 conv2_1/sep (batch 16)', input: [16, 64, 64, 8], outputChannels: 16, kernel: 1, pad: 0},
  {name: 'MobileNet-0.25 conv2_2/sep (batch 16)', input: [16, 32, 32, 16], outputChannels: 32, kernel: 1, pad: 0},
  {name: 'ResNet-50 res2a_branch2a (batch 2)', input: [2, 56, 56, 64], outputChannels: 64, kernel: 1, pad: 0},
  {name: 'MNIST-3x3 conv2 (batch 64)', input: [64, 13, 13, 16], outputChannels: 32, kernel: 3, pad: 0},
  {name: 'ResNet-50 res2a_branch2b (batch 2)', input: [2, 56, 56, 64], outputChannels: 64, kernel: 3, pad: 1},
];

const options = commandLine({
  usage: 'npm run bench:adaptive-threads [-- options]',
  summary: 'The adaptive choice of threads against fixed threads and one thread, interleaved in one process.',
  options: {
    'threads': valueOption('N', 'threads of the threaded ways', 2, positiveInteger),
    'rounds': valueOption('N', 'rounds (each: every way, --calls calls)', 30, positiveInteger),
    'calls': valueOption('N', 'back-to-back calls per way and round', 5, positiveInteger),
    'busy': switchOption('run a CPU-bound process beside it (node -e "for(;;);")'),
    'busy-from': valueOption('R', 'start the CPU-bound process at round R of each layer, stop it after the layer; the figures are the busy rounds\'',
        null as number | null, nonNegativeInteger),
    'out': outOption(),
  },
});

const WAYS = [
  {label: '1 thread', threads: 1, adaptive: false},
  {label: `${options.threads} threads, fixed`, threads: options.threads, adaptive: false},
  {label: `${options.threads} threads, adaptive`, threads: options.threads, adaptive: true},
];

async function main() {
  await tf.setBackend('cpu');
  tf.env().set(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, 0);
  tf.env().set(CONV_BACKPROP_FILTERS_THREADS, options.threads);
  const ready = await simdThreadsReady();
  if (ready !== options.threads) throw new Error(`only ${ready} of ${options.threads} threads started`);
  const busyFrom = options['busy-from'];
  if (busyFrom !== null && busyFrom >= options.rounds) throw new Error(`--busy-from ${busyFrom}: there are only ${options.rounds} rounds`);
  const startBusy = () => spawn(process.execPath, ['-e', 'for(;;);'], {stdio: 'ignore'});
  let busy = options.busy && busyFrom === null ? startBusy() : undefined;
  const started = Date.now();
  const rows: string[][] = [];
  try {
    for (const layer of LAYERS) {
      const [n, h] = layer.input;
      const out = h + 2 * layer.pad - layer.kernel + 1;
      const x = tf.randomNormal(layer.input, 0, 1, 'float32', 1);
      const dy = tf.randomNormal([n, out, out, layer.outputChannels], 0, 1, 'float32', 2);
      const attrs = {strides: [1, 1], padsBegin: [layer.pad, layer.pad], padsEnd: [layer.pad, layer.pad], filterShape: [layer.kernel, layer.kernel]};
      const times = WAYS.map(() => [] as number[]);
      for (let round = 0; round < options.rounds; round++) {
        if (round === busyFrom) busy = startBusy();
        // Every other round in reverse order: in a fixed order the adaptive way, always right after
        // the fixed threads, ran its one-thread calls ~10% slower than the 1-thread way's.
        const order = WAYS.map((_, i) => i);
        if (round % 2 === 1) order.reverse();
        order.forEach(i => {
          const way = WAYS[i];
          tf.env().set(CONV_BACKPROP_FILTERS_THREADS, way.threads);
          tf.env().set(CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, way.adaptive);
          const ms = msPerCall(() => convolutionBackpropFilters(x, dy, attrs), options.calls);
          if (busyFrom === null || round >= busyFrom) times[i].push(ms);
        });
      }
      if (busyFrom !== null) {
        busy?.kill();
        busy = undefined;
      }
      tf.dispose([x, dy]);
      const oneOver = (i: number) => `${pairedMedianRatio(times[0], times[i]).toFixed(2)}×`;
      const row = [layer.name, ...times.map(t => summarize(t).median.toFixed(2)), oneOver(1), oneOver(2)];
      console.log(row.join(' | '));
      rows.push(row);
    }
  } finally {
    busy?.kill();
  }
  const cpus = os.cpus();
  const report = [
    `# Adaptive threads: ${WAYS.map(w => w.label).join(', ')}${
        busyFrom !== null ? `, a CPU-bound process beside from round ${busyFrom}` : options.busy ? ', a CPU-bound process beside' : ''}\n`,
    `Code: ${sourceState()}.`,
    `\`npm run bench:adaptive-threads${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\` on ${
        cpus[0]?.model?.trim()}, ${cpus.length} cores, Node ${process.version}; ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${
        ((Date.now() - started) / 1000).toFixed(0)} s.`,
    `cpu backend, ${options.rounds} rounds of ${options.calls} back-to-back calls per way, every other round in reverse order (ms per call: the median over rounds); ` +
        `"÷" is the paired median of one thread's time over the way's in the same round. The adaptive way keeps its record ` +
        `across rounds; the fixed one runs every call on ${options.threads} threads.${busyFrom !== null ?
            ` The CPU-bound process starts at round ${busyFrom} of each layer, after the choice has settled on a quiet machine, ` +
                `and stops after the layer; the figures are those of rounds ${busyFrom}–${options.rounds - 1}.` : ''}\n`,
    markdownTable(['layer', ...WAYS.map(w => `${w.label} ms`), `1 thread ÷ fixed`, `1 thread ÷ adaptive`], rows,
                  [false, true, true, true, true, true]),
  ].join('\n');
  if (options.out !== null) {
    const file = path.join(options.out, `adaptive-threads${busyFrom !== null ? `-busy-from${busyFrom}` : options.busy ? '-busy' : ''}.md`);
    fs.writeFileSync(file, `${report}\n`);
    console.log(`wrote ${path.relative(process.cwd(), file)}`);
  }
}

main().catch(e => {
  console.error(e);
  process.exit(1);
});

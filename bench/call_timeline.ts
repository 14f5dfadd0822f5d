/**
 * `npm run bench:timeline [-- options]`: where the time of a SIMD call goes, on one thread and on
 * N, from the call's timeline (kernels/host/simd/call_timeline.ts): each thread's tasks, the
 * calling thread's packing and its wait, and what the op costs outside the SIMD path. Calls
 * alternate one thread and N threads on the cpu backend, the adaptive choice off; `--before`
 * says what precedes each call: nothing (back to back), the calling thread working alone
 * (`busy`, as a training step's other ops), or the whole process idling (`idle`, as between a
 * bench's implementations), for `--gap-ms`. `--pin` pins the calling thread to CPU 0 and the
 * workers to the others (bench/pin_threads.ts). Prints the medians per layer and, with `--each`,
 * every call; writes bench/results/timeline[-targets][-busy|-idle][-pinned].md (`--targets`: the layers of
 * issue 31's thread targets instead of `--layers`).
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import {convolutionBackpropFilters, CONV_BACKPROP_FILTERS_THREADS, CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, convTransposeBackpropFilters, simdThreadsReady} from '../kernels/index';
import {simdTesting} from '../kernels/host/simd/simd_filter_gradient';
import {epochMs} from '../kernels/host/simd/thread_protocol';

import {CallFigures, figuresOf, mflopOf, namedLayers, targetLayers} from './call_figures';
import {commandLine, commaList, nonNegativeInteger, oneOf, outOption, positiveInteger, switchOption, valueOption} from './args';
import {THREAD_TARGETS} from './cpu/picks';
import {pinnedStart, pinUnavailable} from './pin_threads';
import {markdownTable, pairedMedianRatio, summarize} from './report';
import {sourceState} from './source_state';

/** The layers docs/threads.md discusses: the lowest of the ≥ 50 MFLOP ones, a short training layer, a long 3×3 one. */
const DEFAULT_LAYERS = ['resnet_50:res2a_branch2a', 'tfjs-mobilenet025:conv2_2/sep', 'resnet_50:res2a_branch2b'];
const WARM_UP_CALLS = 150;

const options = commandLine({
  usage: 'npm run bench:timeline [-- options]',
  summary: 'Where the time of a SIMD call goes on one thread and on N: tasks per thread, packing, waiting.',
  options: {
    'layers': valueOption('a,b', 'workloads by name (file:name or name)', DEFAULT_LAYERS, commaList),
    'targets': switchOption(`instead of --layers, the layers of the thread targets: npm run bench's of ≥ ${
        THREAD_TARGETS.bigLayerMflop} MFLOP and the training layers of ≥ ${THREAD_TARGETS.trainingLayerMflop} MFLOP`),
    'threads': valueOption('N', 'threads of the threaded calls', 2, positiveInteger),
    'calls': valueOption('N', 'timed calls per way and layer (1 thread and N alternate)', 30, positiveInteger),
    'before': valueOption('none|busy|idle', 'what precedes each call: nothing, the calling thread working, the process idling',
                          'none' as 'none'|'busy'|'idle', oneOf('none', 'busy', 'idle')),
    'gap-ms': valueOption('MS', 'how long --before busy or idle lasts', 20, nonNegativeInteger),
    'pin': switchOption('pin the calling thread to CPU 0 and each worker to a CPU of its own (Linux, taskset)'),
    'each': switchOption('print every call'),
    'out': outOption(),
  },
});

const busyFor = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // the calling thread works alone
  }
};

async function before() {
  if (options.before === 'busy') busyFor(options['gap-ms']);
  if (options.before === 'idle') await new Promise(resolve => setTimeout(resolve, options['gap-ms']));
}

const ms = (value: number) => Number.isNaN(value) ? '–' : value.toFixed(3);
const median = (values: number[]) => summarize(values.filter(v => !Number.isNaN(v))).median;

async function main() {
  await tf.setBackend('cpu');
  tf.env().set(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, 0);
  tf.env().set(CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, false);
  tf.env().set(CONV_BACKPROP_FILTERS_THREADS, options.threads);
  const start = async () => simdThreadsReady();
  let ready: number;
  if (options.pin) {
    const unavailable = pinUnavailable();
    if (unavailable !== undefined) throw new Error(unavailable);
    ready = (await pinnedStart(start)).value;
  } else {
    ready = await start();
  }
  if (ready !== options.threads) throw new Error(`only ${ready} of ${options.threads} threads started`);
  simdTesting.recordTimeline = true;
  const started = Date.now();
  const rows: string[][] = [];
  for (const {problem, args} of options.targets ? targetLayers() : namedLayers(options.layers)) {
    const name = problem.name;
    const x = tf.randomNormal(args.inputShape, 0, 1, 'float32', 1);
    const dy = tf.randomNormal(args.outputDeltaShape, 0, 1, 'float32', 2);
    const op = () => args.kind === 'conv' ? convolutionBackpropFilters(x, dy, args.attrs) :
                                            convTransposeBackpropFilters(x, dy, args.attrs);
    const call = (threads: number): CallFigures => {
      tf.env().set(CONV_BACKPROP_FILTERS_THREADS, threads);
      const begin = epochMs();
      const result = op();
      result.dataSync();
      const wall = epochMs() - begin;
      result.dispose();
      const timeline = simdTesting.lastTimeline!;
      if (timeline.threads !== threads) throw new Error(`${name}: a call on ${threads} threads ran on ${timeline.threads}`);
      return figuresOf(timeline, wall);
    };
    for (let i = 0; i < WARM_UP_CALLS; i++) call(i % 2 === 0 ? options.threads : 1);
    const one: CallFigures[] = [];
    const many: CallFigures[] = [];
    for (let i = 0; i < options.calls; i++) {
      for (const threads of i % 2 === 0 ? [1, options.threads] : [options.threads, 1]) {
        await before();
        const figures = call(threads);
        (threads === 1 ? one : many).push(figures);
        if (options.each) {
          console.log(`  ${threads} thread(s): wall ${ms(figures.wall)}, packed ${ms(figures.packed)}, tasks ${
              figures.tasks.map(ms).join(' + ')}, worker from ${ms(figures.workerStart)}, caller waits ${ms(figures.callerWait)}`);
        }
      }
    }
    tf.dispose([x, dy]);
    const row = [
      `${problem.name}${problem.kind === 'deconv' ? ' (deconv)' : ''}, batch ${args.batch} (${mflopOf(args).toFixed(1)} MFLOP)`,
      ms(median(one.map(f => f.wall))), ms(median(one.map(f => f.tasks[0]))), ms(median(one.map(f => f.simd - f.tasks[0]))),
      ms(median(many.map(f => f.wall))), ms(median(many.map(f => f.planned))), ms(median(many.map(f => f.packed))),
      ms(median(many.map(f => f.workerStart))),
      many[0].tasks.map((_, t) => ms(median(many.map(f => f.tasks[t])))).join(' + '),
      `${(median(many.map(f => f.tasks.reduce((a, b) => a + b, 0))) / median(one.map(f => f.tasks[0]))).toFixed(2)}×`,
      ms(median(many.map(f => f.callerWait))), ms(median(many.map(f => f.wall - f.simd))),
      `${pairedMedianRatio(one.map(f => f.wall), many.map(f => f.wall)).toFixed(2)}×`,
    ];
    console.log(row.join(' | '));
    rows.push(row);
  }
  const suffix = `${options.targets ? '-targets' : ''}${options.before === 'none' ? '' : `-${options.before}`}${
      options.pin ? '-pinned' : ''}`;
  const cpus = os.cpus();
  const n = options.threads;
  const report = [
    `# Where a SIMD call's time goes: 1 thread and ${n}\n`,
    `Code: ${sourceState()}.`,
    `\`npm run bench:timeline${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\` on ${
        cpus[0]?.model?.trim()}, ${cpus.length} cores, Node ${process.version}; ${
        new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${((Date.now() - started) / 1000).toFixed(0)} s.`,
    `cpu backend, the adaptive choice off; ${options.calls} calls per way and layer, 1 and ${n} threads alternating, after ${
        WARM_UP_CALLS} untimed; before each call: ${
        {none: 'nothing (back to back)', busy: `the calling thread works alone ${options['gap-ms']} ms`,
         idle: `the process idles ${options['gap-ms']} ms`}[options.before]}${options.pin ? '; threads pinned' : ''}. ` +
        `Medians in ms. "tasks" is the time each thread spent in tasks (calling thread first); "packing, other" the rest ` +
        `of a 1-thread call's SIMD path; "planned" the ${n}-thread call's time in the SIMD path before it opens its job; ` +
        `"packed" when it published its last step; "worker from" when worker 0 started its first task; "all tasks ÷ 1 ` +
        `thread's" the ${n} threads' task time over one thread's (above 1: the split's overhead, or threads running ` +
        `slower together); "caller waits" its ` +
        `wait for other threads' last tasks; "outside" the op's time outside the SIMD path (tfjs, the geometry, the ` +
        `read-back); "1 ÷ ${n}" the paired median of the walls.\n`,
    markdownTable(
        ['layer', '1 thread: wall', 'tasks', 'packing, other', `${n} threads: wall`, 'planned', 'packed', 'worker from',
         'tasks', 'all tasks ÷ 1 thread\'s', 'caller waits', 'outside', `1 ÷ ${n}`],
        rows, [false, ...Array(12).fill(true)]),
  ].join('\n');
  if (options.out !== null) {
    const file = path.join(options.out, `timeline${suffix}.md`);
    fs.writeFileSync(file, `${report}\n`);
    console.log(`wrote ${path.relative(process.cwd(), file)}`);
  }
}

main().catch(e => {
  console.error(e);
  process.exit(1);
});

/**
 * `npm run bench` — filter-gradient throughput of the cpu kernels on real workloads (benchdnn
 * shape lists, see workloads.ts), next to tfjs's own Conv2DBackpropFilter on a shape small
 * enough for it; then the composite kernel of kernels/node (the one registered for tfjs-node's
 * `tensorflow` and for `wasm`) on the same workloads and data, on wasm and on tfjs's own cpu
 * ops ('cpu-composite'), its results checked against the cpu kernel's.
 *
 *   npx tsx bench/cpu.ts [--runs N]
 *
 * Each workload: one warm-up call, then N timed calls (default 5); the table gives the median,
 * min and max wall time of a call (including reading the result back) and the median GFLOP/s
 * (2·N·O·(C/G)·K·out-spatial per gradient, from computeGeometry). Batches are scaled down from
 * the files' (mb50, mb256 …) to what a JavaScript run can do; the table states the batch used.
 * The composite on tfjs's cpu ops is slow (its slices and transposes go element by element):
 * it gets one timed run after the warm-up whatever --runs says.
 */
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-wasm';

import * as tf from '@tensorflow/tfjs-core';
import * as os from 'os';

import {computeGeometry, CONV_BACKPROP_FILTERS_CHUNK_BYTES, convolutionBackpropFilters, convTransposeBackpropFilters} from '../kernels/index';
import {planChunks} from '../kernels/node/chunk_plan';
import {CPU_COMPOSITE, registerCpuCompositeBackend} from '../test/helpers/composite_backends';

import {describeProblem, findProblem, listWorkloadFiles, loadWorkloadFile, parseDescriptor, Problem, toOpArguments, workloadsDir} from './workloads';

interface Pick {
  readonly file: string;
  readonly name: string;
  readonly batch: number;
}

/** The workloads of this run: one per kind of problem the design names (§7), batch ≤ 2. */
const PICKS: readonly Pick[] = [
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res2a_branch2b', batch: 2},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res2a_branch2a', batch: 2},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res3a_branch2c', batch: 2},
  {file: 'conv/shapes_mobilenet_dw', name: 'mobilenet:conv3_1/dw', batch: 1},
  {file: 'conv/shapes_mobilenet_dw', name: 'mobilenet:conv2_2/dw', batch: 1},
  {file: 'conv/shapes_1d', name: 'conv1d:8', batch: 1},
  {file: 'conv/shapes_3d', name: '3d_conv_pad:2', batch: 1},
  {file: 'conv/shapes_3d_unet', name: '3d_unet:conv_7', batch: 1},
  {file: 'conv/shapes_dilated', name: 'dilated_conv:19', batch: 2},
  {file: 'conv/shapes_dilated', name: 'dilated_conv:22', batch: 2},
  {file: 'deconv/shapes_2d', name: 'googlenet_v1:inception_3a/3x3', batch: 2},
  {file: 'deconv/shapes_2d', name: 'resnet_50:res3a_branch1', batch: 2},
];

/** The shape tfjs's built-in kernel is compared on (it runs at a few MFLOP/s): x [1,14,14,16], 3x3, 16→16, pad 1. */
const COMPARISON_DESCRIPTOR = 'mb1ic16ih14oc16oh14kh3ph1n"small:3x3_16x16_14x14"';

function parseRuns(argv: readonly string[]): number {
  const index = argv.findIndex(a => a === '--runs' || a.startsWith('--runs='));
  if (index < 0) return 5;
  const text = argv[index].includes('=') ? argv[index].split('=')[1] : argv[index + 1];
  const runs = Number(text);
  if (!Number.isSafeInteger(runs) || runs < 1) throw new Error(`--runs needs a positive integer, got '${text}'`);
  return runs;
}

interface Timing {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

function summarize(times: readonly number[]): Timing {
  const sorted = [...times].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return {median, min: sorted[0], max: sorted[sorted.length - 1]};
}

/**
 * Warm-up once, then `runs` timed calls; each call's result is read back and disposed. The
 * warm-up's result is handed to `warmUp` first, if given.
 */
function time(runs: number, call: () => tf.Tensor, warmUp?: (result: tf.Tensor) => void): Timing {
  const first = readBack(call());
  warmUp?.(first);
  first.dispose();
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const start = performance.now();
    const result = readBack(call());
    times.push(performance.now() - start);
    result.dispose();
  }
  return summarize(times);
}

function readBack(t: tf.Tensor): tf.Tensor {
  t.dataSync();
  return t;
}

const opName = (p: Problem) => p.kind === 'conv' ? 'ConvolutionBackpropFilters' : 'ConvTransposeBackpropFilters';

/** Random input/outputDelta for a problem, our call, and the geometry's flop count. */
function setUp(problem: Problem, batch: number, seed: number) {
  const args = toOpArguments(problem, batch);
  const input = tf.randomUniform(args.inputShape, -1, 1, 'float32', seed);
  const outputDelta = tf.randomUniform(args.outputDeltaShape, -1, 1, 'float32', seed + 1);
  const geometry = computeGeometry(opName(problem), {input, outputDelta}, args.attrs as unknown as Record<string, unknown>);
  const call = () => args.kind === 'conv' ? convolutionBackpropFilters(input, outputDelta, args.attrs) :
                                             convTransposeBackpropFilters(input, outputDelta, args.attrs);
  return {args, input, outputDelta, geometry, call, dispose: () => tf.dispose([input, outputDelta])};
}

/** max |a − b| / max |b|: the worst difference on the scale of the result. */
function relativeDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let worst = 0;
  let scale = 0;
  for (let i = 0; i < b.length; i++) {
    worst = Math.max(worst, Math.abs(a[i] - b[i]));
    scale = Math.max(scale, Math.abs(b[i]));
  }
  return worst / Math.max(scale, Number.MIN_VALUE);
}

const ms = (v: number) => v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
const gflops = (flops: number, milliseconds: number) => flops / milliseconds / 1e6;

function markdownTable(header: readonly string[], rows: readonly string[][], right: readonly boolean[]): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map(r => r[c].length)));
  const line = (cells: readonly string[]) =>
      `| ${cells.map((cell, c) => right[c] ? cell.padStart(widths[c]) : cell.padEnd(widths[c])).join(' | ')} |`;
  const rule = `|${widths.map((w, c) => right[c] ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

async function main() {
  const runs = parseRuns(process.argv.slice(2));
  const wallStart = performance.now();
  await tf.setBackend('cpu');
  const tensorsAtStart = tf.memory().numTensors;
  const checkLeaks = (where: string) => {
    const now = tf.memory().numTensors;
    if (now !== tensorsAtStart) throw new Error(`${where}: ${now - tensorsAtStart} tensor(s) leaked`);
  };

  const cpus = os.cpus();
  console.log('# filter-gradient benchmark: cpu kernel, and the composite (tensorflow/wasm) kernel\n');
  console.log(`machine: ${cpus[0]?.model ?? 'unknown cpu'}, ${cpus.length} cores, node ${process.version}, ${
      os.platform()} ${os.arch()}; tfjs-core ${tf.version_core}, backend ${tf.getBackend()}`);

  // Every descriptor of every file must parse and pass our geometry (catches parser drift).
  const dir = workloadsDir();
  const files = listWorkloadFiles(dir);
  let descriptors = 0;
  for (const file of files) {
    for (const problem of loadWorkloadFile(file, dir)) {
      const args = toOpArguments(problem, 1);
      computeGeometry(
          opName(problem),
          {input: {shape: args.inputShape, dtype: 'float32'}, outputDelta: {shape: args.outputDeltaShape, dtype: 'float32'}},
          args.attrs as unknown as Record<string, unknown>);
      descriptors++;
    }
  }
  console.log(`workloads: ${dir} — ${descriptors} descriptors in ${files.length} files parsed and checked`);
  console.log(`timing: 1 warm-up + ${runs} timed run(s) per workload, NXC input, XIO filter, float32\n`);

  const rows: string[][] = [];
  const cpuKernel: Array<{values: Float32Array; gflops: number}> = [];
  PICKS.forEach((pick, index) => {
    const problem = findProblem(loadWorkloadFile(pick.file, dir), pick.name);
    const bench = setUp(problem, pick.batch, 1000 + 10 * index);
    try {
      let values: Float32Array = new Float32Array(0);
      const t = time(runs, bench.call, result => values = result.dataSync() as Float32Array);
      const flops = bench.geometry.flops;
      cpuKernel.push({values, gflops: gflops(flops, t.median)});
      rows.push([
        `${problem.name}${problem.kind === 'deconv' ? ' (deconv)' : ''}`,
        `${problem.source}:${problem.line}`,
        `${pick.batch} (file ${problem.batch})`,
        describeProblem(problem),
        (flops / 1e9).toFixed(3),
        ms(t.median),
        `${ms(t.min)}–${ms(t.max)}`,
        gflops(flops, t.median).toFixed(2),
      ]);
      process.stderr.write(`  done ${problem.name}: ${ms(t.median)} ms\n`);
    } finally {
      bench.dispose();
    }
    checkLeaks(problem.name);
  });
  console.log(markdownTable(
      ['workload', 'descriptor source', 'batch', 'shape (C→O, in→out, kernel, stride, pads begin/end)', 'GFLOP',
       'median ms', 'min–max ms', 'GFLOP/s'],
      rows, [false, false, false, false, true, true, true, true]));

  // tfjs's own Conv2DBackpropFilter on a small shape, same data, results compared.
  const small = parseDescriptor(COMPARISON_DESCRIPTOR, 'conv', 'bench/cpu.ts');
  const bench = setUp(small, small.batch, 7);
  try {
    const {attrs, inputShape, outputDeltaShape} = bench.args;
    const filterShape: [number, number, number, number] = [small.kernel[0], small.kernel[1], small.ic, small.oc];
    const pad = [[0, 0], [small.padsBegin[0], small.padsEnd[0]], [small.padsBegin[1], small.padsEnd[1]], [0, 0]];
    const builtIn = () => tf.engine().runKernel(
        'Conv2DBackpropFilter', {x: bench.input, dy: bench.outputDelta},
        {strides: [...small.strides], pad, dataFormat: 'NHWC', dimRoundingMode: undefined, filterShape} as unknown as
            tf.NamedAttrMap) as tf.Tensor;

    const ours = bench.call();
    const reference = builtIn();
    const diff = tf.tidy(() => tf.max(tf.abs(tf.sub(ours, reference))).dataSync()[0]);
    const scale = tf.tidy(() => tf.max(tf.abs(reference)).dataSync()[0]);
    tf.dispose([ours, reference]);

    const tBuiltIn = time(runs, builtIn);
    const tOurs = time(runs, bench.call);
    const flops = bench.geometry.flops;
    console.log(`\n## vs tfjs built-in Conv2DBackpropFilter (cpu), x [${inputShape}], dy [${outputDeltaShape}], filter [${
        filterShape}], pads ${attrs.padsBegin}/${attrs.padsEnd} (${(flops / 1e6).toFixed(2)} MFLOP)\n`);
    console.log(`- tfjs built-in: median ${ms(tBuiltIn.median)} ms (${ms(tBuiltIn.min)}–${ms(tBuiltIn.max)}), ${
        gflops(flops, tBuiltIn.median).toFixed(4)} GFLOP/s`);
    console.log(`- ours:          median ${ms(tOurs.median)} ms (${ms(tOurs.min)}–${ms(tOurs.max)}), ${
        gflops(flops, tOurs.median).toFixed(3)} GFLOP/s`);
    console.log(`- time ours/built-in = ${(tOurs.median / tBuiltIn.median).toPrecision(3)} (ours ${
        (tBuiltIn.median / tOurs.median).toFixed(0)}× faster)`);
    console.log(`- max |ours − built-in| = ${diff.toExponential(2)} (max |built-in| = ${scale.toFixed(3)}, ${
        small.batch * small.outputSize[0] * small.outputSize[1]}-term sums per element)`);
    if (!(diff <= 1e-3 * Math.max(1, scale))) throw new Error(`ours and tfjs's built-in disagree: max |diff| ${diff}`);
  } finally {
    bench.dispose();
  }
  checkLeaks('comparison');

  // The composite kernel (kernels/node) on the same workloads and data: on wasm, as the package
  // registers it there (tfjs-node's `tensorflow` runs the same function), and on tfjs's cpu ops.
  registerCpuCompositeBackend();
  const budget = tf.env().getNumber(CONV_BACKPROP_FILTERS_CHUNK_BYTES);
  const compositeRows = PICKS.map(pick => {
    const problem = findProblem(loadWorkloadFile(pick.file, dir), pick.name);
    return [`${problem.name}${problem.kind === 'deconv' ? ' (deconv)' : ''}`];
  });
  for (const [backendName, backendRuns] of [['wasm', runs], [CPU_COMPOSITE, 1]] as const) {
    await tf.setBackend(backendName);
    PICKS.forEach((pick, index) => {
      const problem = findProblem(loadWorkloadFile(pick.file, dir), pick.name);
      const bench = setUp(problem, pick.batch, 1000 + 10 * index);
      try {
        let difference = NaN;
        const t = time(backendRuns, bench.call, result => difference = relativeDifference(result.dataSync(), cpuKernel[index].values));
        if (!(difference <= 1e-4)) {
          throw new Error(`${problem.name} on ${backendName}: the composite and the cpu kernel differ (${difference})`);
        }
        const rate = gflops(bench.geometry.flops, t.median);
        const row = compositeRows[index];
        if (backendName === 'wasm') {
          row.push(
              `${planChunks(bench.geometry, budget).chunks.length}`, cpuKernel[index].gflops.toFixed(2), ms(t.median),
              `${ms(t.min)}–${ms(t.max)}`, rate.toFixed(2), `${(rate / cpuKernel[index].gflops).toFixed(1)}×`);
        } else {
          row.push(ms(t.median), rate.toFixed(2));
        }
        row.push(difference.toExponential(1));
        process.stderr.write(`  done ${problem.name} on ${backendName}: ${ms(t.median)} ms\n`);
      } finally {
        bench.dispose();
      }
      checkLeaks(`${problem.name} on ${backendName}`);
    });
  }
  await tf.setBackend('cpu');
  console.log(`\n## composite kernel (kernels/node: the tensorflow and wasm kernel) on wasm and on tfjs cpu ops\n`);
  console.log(`Same workloads and data as above; chunk budget ${(budget / 2 ** 20).toFixed(0)} MiB (${
      CONV_BACKPROP_FILTERS_CHUNK_BYTES}); wasm: 1 warm-up + ${runs} run(s); cpu-composite: 1 warm-up + 1 run. ` +
      `"diff" is max |composite − cpu kernel| / max |cpu kernel|.\n`);
  console.log(markdownTable(
      ['workload', 'chunks', 'cpu kernel GFLOP/s', 'wasm median ms', 'wasm min–max ms', 'wasm GFLOP/s', 'wasm ÷ cpu kernel',
       'wasm diff', 'cpu-composite ms', 'cpu-composite GFLOP/s', 'cpu-composite diff'],
      compositeRows, [false, true, true, true, true, true, true, true, true, true, true]));

  console.log(`\ntensors: ${tf.memory().numTensors} live at the end (${tensorsAtStart} at the start); total ${
      ((performance.now() - wallStart) / 1000).toFixed(1)} s`);
}

main().catch(error => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});

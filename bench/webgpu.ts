/**
 * `npm run bench:webgpu [-- options]` (`-- --help` lists them: --runs, --only, --built-in-runs, --variant, --out):
 * our webgpu kernel against
 * tfjs-backend-webgpu's built-in filter gradients (Conv2DBackpropFilter,
 * DepthwiseConv2dNativeBackpropFilter, Conv3DBackpropFilterV2) on the same tensors in the same
 * headless Chromium (WebGPU on SwiftShader's Vulkan here: the CPU), as bench/webgl.ts does for
 * webgl: karma loads bench/webgpu_page.ts with the workloads as client args, the page sends one
 * result line back, this side writes bench/results/webgpu.md and prints it.
 *
 * Timing is amortized (DESIGN.md §7): a run is `reps` back-to-back calls and one read-back,
 * divided by `reps`; reps is chosen after the warm-up so a run takes ~0.3 s (1 to 1,000: timed
 * from 8 back-to-back calls where one call and its read-back take under 30 ms).
 * The built-in kernels run one invocation per filter element over the whole reduction and
 * take seconds per call on SwiftShader: they get 2 runs, and the batch of a workload is
 * reduced (stated in the table) where a built-in call would pass ~0.25 GFLOP (~2 s there).
 */
import * as fs from 'fs';
import * as path from 'path';

import {commandLine, nonNegativeInteger, outOption, positiveInteger, regularExpression, valueOption} from './args';
import {runKarmaPage} from './karma_page';
import {gflops, markdownTable, parseVariant, rate, ratio, summarize, Timing, TuningVariant} from './report';
import {sourceState} from './source_state';
import type {BuiltIn} from './webgl';
import {describeProblem, findProblem, loadWorkloadFile, Problem, toOpArguments} from './workloads';

export interface WebgpuWorkload {
  name: string;
  shape: string;
  fileBatch: number;
  builtIn: BuiltIn | null;
  /** Which target of issue 17 applies: ≥ 10× (ResNet-50, MobileNet, 3-D) or ≥ 8× (shapes_tfjs_training). */
  target: number | null;
  args: ReturnType<typeof toOpArguments>;
}

export interface WebgpuPageInput {
  workloads: WebgpuWorkload[];
  runs: number;
  builtInRuns: number;
  /** `--variant FLAG=VALUE`: ours is also timed with this tfjs flag set, alternating with the rest (A/B in one run). */
  variant: TuningVariant | null;
}

export interface WebgpuImplResult {
  /** Milliseconds per call, one entry per run. */
  perCall: number[];
  reps: number;
  warmUpMs: number;
  /** max |ours − built-in| / max |built-in| (built-in only). */
  difference: number | null;
}

export interface WebgpuPageResult {
  userAgent: string;
  adapter: string;
  workloads: Array<{name: string; flops: number; ours: WebgpuImplResult; builtIn: WebgpuImplResult | null;
                    variant?: WebgpuImplResult | null; error?: string}>;
}

const BENCH_FILES: Array<{file: string; name: string; batch: number; builtIn: BuiltIn | null; target: number}> = [
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res2a_branch2b', batch: 1, builtIn: 'Conv2DBackpropFilter', target: 10},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res3a_branch2b', batch: 1, builtIn: 'Conv2DBackpropFilter', target: 10},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res2a_branch1', batch: 1, builtIn: 'Conv2DBackpropFilter', target: 10},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res3a_branch2c', batch: 1, builtIn: 'Conv2DBackpropFilter', target: 10},
  {file: 'conv/shapes_mobilenet_dw', name: 'mobilenet:conv3_1/dw', batch: 4, builtIn: 'DepthwiseConv2dNativeBackpropFilter', target: 10},
  {file: 'conv/shapes_mobilenet_dw', name: 'mobilenet:conv2_2/dw', batch: 4, builtIn: 'DepthwiseConv2dNativeBackpropFilter', target: 10},
  {file: 'conv/shapes_3d', name: '3d_conv_pad:1', batch: 1, builtIn: 'Conv3DBackpropFilterV2', target: 10},
];

/** The largest built-in call, in FLOP, before the batch is reduced (~2 s at its 0.14 GFLOP/s). */
const MAX_BUILT_IN_FLOPS = 0.25e9;

function flopsOf(problem: Problem, batch: number): number {
  const out = problem.outputSize.reduce((a, b) => a * b, 1);
  const k = problem.kernel.reduce((a, b) => a * b, 1);
  return 2 * batch * problem.oc * (problem.ic / problem.groups) * k * out;
}

function builtInFor(problem: Problem): BuiltIn | null {
  if (problem.kind !== 'conv' || problem.dilations.some(d => d !== 1)) return null;
  if (problem.kernel.length === 3) return problem.groups === 1 ? 'Conv3DBackpropFilterV2' : null;
  if (problem.kernel.length !== 2) return null;
  if (problem.groups === 1) return 'Conv2DBackpropFilter';
  return problem.groups === problem.ic ? 'DepthwiseConv2dNativeBackpropFilter' : null;
}

function workloadsOf(only: RegExp | null): WebgpuWorkload[] {
  const picks = BENCH_FILES.map(pick => ({problem: findProblem(loadWorkloadFile(pick.file), pick.name), batch: pick.batch, target: pick.target}));
  const training = loadWorkloadFile('conv/shapes_tfjs_training').map(problem => ({problem, batch: problem.batch, target: 8}));
  return [...picks, ...training].filter(({problem}) => only === null || only.test(problem.name)).map(({problem, batch, target}) => {
    let reduced = batch;
    while (reduced > 1 && flopsOf(problem, reduced) > MAX_BUILT_IN_FLOPS) reduced = Math.ceil(reduced / 2);
    return {
      name: problem.name, shape: describeProblem(problem), fileBatch: problem.batch, builtIn: builtInFor(problem), target,
      args: toOpArguments(problem, reduced),
    };
  });
}

function report(workloads: WebgpuWorkload[], page: WebgpuPageResult, input: WebgpuPageInput, command: string, seconds: number): string {
  const {runs, builtInRuns, variant} = input;
  const variantLabel = variant ? `${variant.flag}=${variant.value}` : null;
  const out: string[] = [];
  out.push('# Filter-gradient benchmark: webgpu\n');
  out.push(`Code: ${sourceState()}.`);
  out.push(`\`${command}\`; ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${
      seconds.toFixed(0)} s. Headless ${/Chrome\/[\d.]+/.exec(page.userAgent)?.[0] ?? page.userAgent}, WebGPU adapter ${page.adapter}.`);
  out.push(`Ours and tfjs-backend-webgpu's built-in kernel on the same tensors (made by a tfjs op, so already in GPU buffers): ` +
           `1 warm-up each, then ${runs} runs of ours${variantLabel ? `, ${runs} of ours with ${variantLabel}` : ''} and ${builtInRuns} of the built-in, alternating (ours, ${variantLabel ? 'variant, ' : ''}built-in, ours, …); a run is reps back-to-back calls and one ` +
           `read-back, divided by reps, with reps chosen for ~0.3 s a run (at most 1,000; amortized, DESIGN.md §7). Time per call: median of the runs. GFLOP/s = 2·N·O·(C/G)·K·out-spatial / time. ` +
           `Batch reduced from the file's where a built-in call would pass ${MAX_BUILT_IN_FLOPS / 1e9} GFLOP (it runs ~0.1 GFLOP/s here). ` +
           `SwiftShader runs WebGPU on the (shared, loaded) CPU: compare columns of one run only.\n`);
  const byName = new Map(page.workloads.map(r => [r.name, r]));
  const rows: string[][] = [];
  const misses: string[] = [];
  for (const w of workloads) {
    const r = byName.get(w.name);
    if (!r) continue;
    if (r.error) {
      rows.push([w.name, String(w.args.batch), w.shape, '–', '–', '–', '–', '–', '–', `error: ${r.error}`, ...(variantLabel ? ['–'] : [])]);
      continue;
    }
    const ours = summarize(r.ours.perCall);
    const builtIn = r.builtIn ? summarize(r.builtIn.perCall) : null;
    const speedUp = builtIn ? builtIn.median / ours.median : NaN;
    if (builtIn && w.target !== null && speedUp < w.target) misses.push(`${w.name} ${ratio(speedUp)} (target ${w.target}×)`);
    const ms = (t: Timing) => t.median < 10 ? t.median.toFixed(2) : t.median.toFixed(1);
    rows.push([
      w.name, w.args.batch === w.fileBatch ? String(w.args.batch) : `${w.args.batch} (file ${w.fileBatch})`, w.shape,
      `${ms(ours)} (×${r.ours.reps})`, rate(gflops(r.flops, ours.median)), w.builtIn ?? 'none in tfjs',
      builtIn ? `${ms(builtIn)} (×${r.builtIn!.reps})` : '–', builtIn ? rate(gflops(r.flops, builtIn.median)) : '–',
      builtIn ? `**${ratio(speedUp)}**${w.target !== null ? ` (≥ ${w.target}×)` : ''}` : '–',
      r.builtIn?.difference == null ? '–' : r.builtIn.difference.toExponential(1),
      ...(variantLabel ? [r.variant ? (() => {
        const v = summarize(r.variant!.perCall);
        return `${ms(v)} (${ratio(v.median / ours.median)}; diff ${r.variant!.difference!.toExponential(1)})`;
      })() : '–'] : []),
    ]);
  }
  out.push(markdownTable(
      ['workload', 'batch', 'shape', 'ours ms/call (reps)', 'ours GFLOP/s', 'tfjs built-in', 'built-in ms/call (reps)',
       'built-in GFLOP/s', 'speed-up (target)', 'max rel. diff',
       ...(variantLabel ? [`ours with ${variantLabel} ms/call (its time / ours; max rel. diff to ours)`] : [])],
      rows));
  out.push(`\nBelow target: ${misses.length === 0 ? 'none' : misses.join('; ')}.`);
  return out.join('\n') + '\n';
}

/** The command line (bench/args.ts); `npm run bench:webgpu -- --help` prints it. */
const COMMAND = {
  usage: 'npm run bench:webgpu [-- options]',
  summary: "Our webgpu kernel against tfjs-backend-webgpu's built-in filter gradients in headless Chromium.\n" +
      'Writes webgpu.{md,json}.',
  options: {
    runs: valueOption('N', 'timed runs of ours per workload', 5, positiveInteger),
    only: valueOption('REGEX', 'only the workloads whose name matches', null as RegExp | null, regularExpression),
    'built-in-runs': valueOption('N', "timed runs of tfjs's built-in kernel (0 leaves it out)", null as number | null,
        nonNegativeInteger, 'min(runs, 2)'),
    variant: valueOption('FLAG=VALUE', 'also time ours with this tfjs flag set (an A/B in one run)', null as TuningVariant | null,
        text => parseVariant(text)),
    out: outOption(),
  },
};

async function main() {
  const argv = process.argv.slice(2);
  const {runs, out, only, variant, ...options} = commandLine(COMMAND, argv);
  const builtInRuns = options['built-in-runs'];
  const start = performance.now();
  sourceState();
  const workloads = workloadsOf(only);
  const input: WebgpuPageInput = {workloads, runs, builtInRuns: builtInRuns ?? Math.min(runs, 2), variant};
  const root = path.resolve(__dirname, '..');
  const page = path.join(root, 'bench', 'webgpu_page.ts');
  const {result, exitCode} = await runKarmaPage<WebgpuPageResult>([page], input, 'BENCH_RESULT');
  if (result === null) {
    console.error('the page sent no results');
    process.exit(exitCode || 1);
  }
  const command = `npm run bench:webgpu${argv.length > 0 ? ` -- ${argv.map(a => /^[\w=.:-]+$/.test(a) ? a : `'${a}'`).join(' ')}` : ''}`;
  const markdown = report(workloads, result, input, command, (performance.now() - start) / 1000);
  console.log(`\n${markdown}`);
  if (out !== null) {
    fs.mkdirSync(out, {recursive: true});
    fs.writeFileSync(path.join(out, 'webgpu.md'), markdown);
    fs.writeFileSync(path.join(out, 'webgpu.json'), `${JSON.stringify(result, null, 1)}\n`);
    console.error(`wrote ${path.relative(process.cwd(), path.join(out, 'webgpu.md'))}, webgpu.json`);
  }
  process.exit(exitCode);
}

if (require.main === module) {
  main().catch(error => {
    console.error(error);
    process.exit(1);
  });
}

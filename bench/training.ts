/**
 * `npm run bench:training [-- options]`: the training step a tfjs user pays for —
 * `model.trainOnBatch` of the small convnets of bench/training_models.ts (MNIST, CIFAR-10, a
 * speech spectrogram model, MobileNet v1 α 0.25), built with tf.layers — with tfjs's own
 * gradients and with this package's drop-in ones (`tfjs-conv-backprop-filters/gradients`), on
 * the same model and batch, steps alternating between the two (bench/training_step.ts), with
 * tf.profile's time of the filter-gradient kernels and of the top kernels of one step of each.
 *
 * cpu and wasm run here in Node; webgl (and webgpu, when @tensorflow/tfjs-backend-webgpu is
 * installed) run in headless Chromium through karma, bench/training_page.ts receiving the plan
 * through karma's client args and sending its results back as one console line, as
 * bench:webgl does. Prints the tables and writes the latest result into bench/results:
 * training.{md,json,svg} for a run of the default backends, training-<backend>….{md,json,svg}
 * when --backends names some (training-webgl.md: the latest webgl run); older runs stay in git
 * history.
 *
 * Options (`npm run bench:training -- --help` prints them): --models a,b, --backends a,b,
 * --pairs N, --threads N (cpu and wasm: the drop-in's SIMD kernel on N threads), --threads-ab
 * (cpu and wasm: the drop-in on 1 thread too, its steps in the same rounds), --out DIR.
 */
import '@tensorflow/tfjs';  // as Node users load tfjs: tfjs-core, its gradients, tf.layers, the cpu backend
import '@tensorflow/tfjs-backend-wasm';

import * as tf from '@tensorflow/tfjs-core';
import * as fs from 'fs';
import * as path from 'path';

import {CONV_BACKPROP_FILTERS_THREADS, simdThreadsReady} from '../kernels/index';

import {commandLine, commaList, outOption, positiveInteger, switchOption, valueOption} from './args';
import {runKarmaPage} from './karma_page';
import {sourceState} from './source_state';
import {barChartSvg, COLORS, markdownTable, ms, pairedMedianRatio, ratio} from './report';
import {buildTrainingModel, modelConvolutions, TRAINING_MODELS, TrainingModel} from './training_models';
import {ConfigResult, GRADIENT_CONFIGS, GradientConfig, ModelResult, runTrainingModel, StepPlan, THREADS_AB_CONFIGS} from './training_step';
import {loadWorkloadFile, Problem} from './workloads';

export type BackendName = 'cpu' | 'wasm' | 'webgl' | 'webgpu';

/** A backend of the run: where it runs, the batches where the file's would not fit the time budget, and its step plan. */
export interface TrainingBackend {
  readonly name: BackendName;
  readonly where: 'node' | 'browser';
  /**
   * 'always', or 'if-installed': only when the backend's package resolves (webgpu: its package
   * is not a dependency of every build); 'off' leaves it out.
   */
  readonly run: 'always' | 'if-installed' | 'off';
  /** The package that provides the backend, for 'if-installed'. */
  readonly packageName: string;
  /** The models it trains, by id. */
  readonly models: readonly string[];
  /** Batches used instead of the workload file's, by model id (stated in the tables). */
  readonly batch: Readonly<Record<string, number>>;
  readonly plan: StepPlan;
  /** Why a batch differs from the file's, for the report. */
  readonly note?: string;
}

const FULL_MODELS = ['mnist', 'mnist3x3', 'cifar', 'speech', 'mobilenet'];

/**
 * The backends and how much each runs, as data. On tfjs's cpu backend its own filter gradients
 * run at a few MFLOP/s (a CIFAR-10 step at batch 32 would take minutes), so the larger models
 * train at a smaller batch there, and MobileNet as its first blocks; a step's cost is close to
 * linear in the batch.
 */
export const TRAINING_BACKENDS: readonly TrainingBackend[] = [
  {
    name: 'cpu', where: 'node', run: 'always', packageName: '@tensorflow/tfjs-backend-cpu',
    models: ['mnist', 'mnist3x3', 'cifar', 'speech', 'mobilenet-lite'],
    batch: {mnist3x3: 16, cifar: 1, speech: 1, 'mobilenet-lite': 1},
    plan: {warmUpSteps: 1, minPairs: 1, maxPairs: 4, budgetMs: 25000, profile: 'every-step'},
    note: "tfjs's own cpu filter gradients run at a few MFLOP/s, so the larger models run at a smaller batch here " +
          'and MobileNet as its first 4 blocks, with fewer timed pairs',
  },
  {
    name: 'wasm', where: 'node', run: 'always', packageName: '@tensorflow/tfjs-backend-wasm', models: FULL_MODELS, batch: {},
    plan: {warmUpSteps: 1, minPairs: 2, maxPairs: 6, budgetMs: 6000, profile: 'every-step'},
  },
  {
    name: 'webgl', where: 'browser', run: 'always', packageName: '@tensorflow/tfjs-backend-webgl', models: FULL_MODELS, batch: {},
    plan: {warmUpSteps: 1, minPairs: 1, maxPairs: 5, budgetMs: 10000, profile: 'extra-step'},
  },
  {
    name: 'webgpu', where: 'browser', run: 'if-installed', packageName: '@tensorflow/tfjs-backend-webgpu', models: FULL_MODELS,
    batch: {}, plan: {warmUpSteps: 1, minPairs: 1, maxPairs: 5, budgetMs: 10000, profile: 'extra-step'},
  },
];

/** What the page gets through karma's client args. */
export interface TrainingPageInput {
  readonly backends: ReadonlyArray<{name: BackendName; models: readonly string[]; batch: Readonly<Record<string, number>>; plan: StepPlan}>;
}

export interface BackendRun {
  readonly name: BackendName;
  /** Why the backend did not run (not installed, failed to initialise), or null. */
  readonly unavailable: string | null;
  /** The environment: renderer and WebGL version in the browser, Node's version here. */
  readonly environment: string;
  readonly models: readonly ModelResult[];
}

export interface TrainingPageResult {
  readonly userAgent: string;
  readonly tfjs: string;
  readonly backends: readonly BackendRun[];
}

interface Options {
  models: TrainingModel[];
  backends: TrainingBackend[];
  maxPairs: number | null;
  threads: number | null;
  /** cpu and wasm: the drop-in on 1 thread as a third configuration, beside the N-thread one. */
  threadsAb: boolean;
  out: string | null;
  /**
   * The result files' name: 'training', or 'training-<backend>…' when --backends names some,
   * '-threads<N>' with --threads, '-threads-ab' with --threads-ab.
   */
  resultName: string;
}

/** The command line (bench/args.ts); `npm run bench:training -- --help` prints it. */
const COMMAND = {
  usage: 'npm run bench:training [-- options]',
  summary: "model.trainOnBatch of small tf.layers convnets with tfjs's gradients and with the drop-in ones.\n" +
      'Writes training.{md,json,svg}, or training-<backend>….{md,json,svg} when --backends names some.',
  options: {
    models: valueOption('a,b', `only these models (${TRAINING_MODELS.filter(m => m.subsetOf === undefined).map(m => m.id).join(', ')})`,
        [...TRAINING_MODELS], (text, flag) => {
          const ids = commaList(text, flag);
          const unknown = ids.filter(id => !TRAINING_MODELS.some(m => m.id === id));
          if (unknown.length > 0) throw new Error(`${flag} takes ids from ${TRAINING_MODELS.map(m => m.id).join(', ')}, got '${text}'`);
          return TRAINING_MODELS.filter(m => ids.includes(m.id) || (m.subsetOf !== undefined && ids.includes(m.subsetOf)));
        }, 'all'),
    backends: valueOption('a,b', `only these backends (${TRAINING_BACKENDS.map(b => b.name).join(', ')}), run whatever their 'run' field says`,
        null as TrainingBackend[] | null, (text, flag) => {
          const names = commaList(text, flag);
          const unknown = names.filter(n => !TRAINING_BACKENDS.some(b => b.name === n));
          if (unknown.length > 0) throw new Error(`${flag} takes names from ${TRAINING_BACKENDS.map(b => b.name).join(', ')}, got '${text}'`);
          // Named on the command line: run even when the table says 'off'.
          return TRAINING_BACKENDS.filter(b => names.includes(b.name)).map(b => b.run === 'off' ? {...b, run: 'always' as const} : b);
        }, TRAINING_BACKENDS.filter(b => b.run !== 'off').map(b => b.name).join(',')),
    pairs: valueOption('N', 'at most N timed pairs per model', null as number | null, positiveInteger, "each backend's plan"),
    threads: valueOption('N', "cpu and wasm: the drop-in's SIMD kernel on N threads (CONV_BACKPROP_FILTERS_THREADS)",
        null as number | null, positiveInteger, "the flag's: the cores reported, at most 8"),
    'threads-ab': switchOption("cpu and wasm: the drop-in also on 1 thread, its steps in the same rounds as the N-thread ones (paired N÷1)"),
    out: outOption(),
  },
};

function parseOptions(argv: readonly string[]): Options {
  const values = commandLine(COMMAND, argv);
  return {
    models: values.models,
    backends: values.backends ?? TRAINING_BACKENDS.filter(b => b.run !== 'off'),
    maxPairs: values.pairs,
    threads: values.threads,
    threadsAb: values['threads-ab'],
    out: values.out,
    resultName: [values.backends === null ? 'training' : ['training', ...values.backends.map(b => b.name)].join('-'),
                 ...(values.threads === null ? [] : [`threads${values.threads}`]), ...(values['threads-ab'] ? ['threads-ab'] : [])].join('-'),
  };
}

function installed(packageName: string): boolean {
  try {
    require.resolve(packageName);
    return true;
  } catch {
    return false;
  }
}

const batchOf = (backend: TrainingBackend, model: TrainingModel) => backend.batch[model.id] ?? model.batch;

/** The backend's models that the command line selects (a subset counts as its whole model). */
const modelsOf = (backend: TrainingBackend, options: Options) =>
    options.models.filter(m => backend.models.includes(m.id));

function effectivePlan(backend: TrainingBackend, options: Options): StepPlan {
  if (options.maxPairs === null) return backend.plan;
  return {...backend.plan, maxPairs: options.maxPairs, minPairs: Math.min(backend.plan.minPairs, options.maxPairs)};
}

/**
 * Checks that every convolution of each model is a line of workloads/conv/shapes_tfjs_training
 * (input and output sizes, channels, kernel, stride, groups), so the models and the file agree;
 * returns one line per model.
 */
function checkAgainstWorkloads(models: readonly TrainingModel[]): string[] {
  let problems: Problem[];
  try {
    problems = loadWorkloadFile('conv/shapes_tfjs_training');
  } catch (e) {
    return [`workloads not checked: ${String((e as Error).message ?? e)}`];
  }
  const lines: string[] = [];
  for (const spec of models) {
    const model = buildTrainingModel(spec);
    const convolutions = modelConvolutions(model, spec.batch);
    model.optimizer.dispose();
    model.dispose();
    const listed = problems.filter(p => p.name.startsWith(spec.workloadPrefix));
    const matched = convolutions.filter(c => listed.some(p =>
        p.groups === c.groups && p.ic === c.inputShape[3] && p.oc === c.outputShape[3] &&
        p.inputSize.join() === c.inputShape.slice(1, 3).join() && p.outputSize.join() === c.outputShape.slice(1, 3).join() &&
        p.kernel.join() === c.kernel.join() && p.strides.join() === c.strides.join() && p.batch === spec.batch));
    const unlisted = convolutions.filter(c => !matched.includes(c));
    const unused = spec.subsetOf !== undefined ? [] : listed.filter(p => !convolutions.some(c => p.ic === c.inputShape[3] && p.oc === c.outputShape[3] &&
        p.inputSize.join() === c.inputShape.slice(1, 3).join() && p.kernel.join() === c.kernel.join()));
    lines.push(`${spec.id}: ${matched.length} of ${convolutions.length} convolutions are lines of shapes_tfjs_training${
        unlisted.length > 0 ? `; not listed: ${unlisted.map(c => `${c.layer} [${c.inputShape}]→[${c.outputShape}] k${c.kernel} s${c.strides}`).join(', ')}` : ''}${
        unused.length > 0 ? `; listed but not in the model: ${unused.map(p => p.name).join(', ')}` : ''}`);
  }
  return lines;
}

async function runNodeBackend(backend: TrainingBackend, options: Options): Promise<BackendRun> {
  if (options.threads !== null) tf.env().set(CONV_BACKPROP_FILTERS_THREADS, options.threads);
  // The workers start before the first step, so every timed step sees the same threads.
  const threads = await simdThreadsReady();
  const environment = `Node ${process.version}, the drop-in's SIMD kernel on ${threads} thread${threads === 1 ? '' : 's'} (${
      CONV_BACKPROP_FILTERS_THREADS} ${tf.env().getNumber(CONV_BACKPROP_FILTERS_THREADS)})`;
  if (!(await tf.setBackend(backend.name).catch(() => false))) {
    return {name: backend.name, unavailable: `tf.setBackend('${backend.name}') failed`, environment, models: []};
  }
  const results: ModelResult[] = [];
  for (const spec of modelsOf(backend, options)) {
    console.error(`${backend.name}: ${spec.id} at batch ${batchOf(backend, spec)}`);
    results.push(await runTrainingModel(
        spec, batchOf(backend, spec), effectivePlan(backend, options), line => console.error(line), spec.inputShape,
        options.threadsAb ? THREADS_AB_CONFIGS : GRADIENT_CONFIGS));
  }
  return {name: backend.name, unavailable: null, environment, models: results};
}

/**
 * Runs the browser backends in headless Chromium (karma, as bench:webgl), one page per backend,
 * and returns their results. Only the webgpu page bundles tfjs-backend-webgpu, and each backend
 * starts on a fresh page: in one page bundling it, MobileNet's step after the four other models
 * fails on webgl and webgpu alike, with tfjs's gradients and the drop-in ones ("Cannot read
 * properties of null (reading 'clone')", docs/training-benchmark.md), while the same sequence
 * on webgl without it, and MobileNet alone with it, train.
 */
async function runBrowserBackends(backends: readonly TrainingBackend[], options: Options): Promise<TrainingPageResult> {
  const root = path.resolve(__dirname, '..');
  const page = path.join(root, 'bench', 'training_page.ts');
  const webgpu = path.join(root, 'bench', 'training_webgpu.ts');
  const results: TrainingPageResult[] = [];
  for (const b of backends) {
    const files = [...(b.name === 'webgpu' ? [webgpu] : []), page];
    const input: TrainingPageInput = {
      backends: [{name: b.name, models: modelsOf(b, options).map(m => m.id), batch: b.batch, plan: effectivePlan(b, options)}],
    };
    const {result, exitCode} = await runKarmaPage<TrainingPageResult>(files, input, 'TRAINING_RESULT');
    if (result === null) throw new Error(`the ${b.name} page sent no results (karma exit code ${exitCode})`);
    results.push(result);
  }
  return {userAgent: results[0].userAgent, tfjs: results[0].tfjs, backends: results.flatMap(r => r.backends)};
}

const CONFIG_LABEL: Record<GradientConfig, string> =
    {tfjs: "tfjs's gradients", dropIn: 'drop-in gradients', dropInOneThread: 'drop-in gradients, 1 thread'};

/** The median over rounds of `slow`'s step ÷ `fast`'s step in the same round ('–' without both). */
function pairedRatio(slow: ConfigResult | undefined, fast: ConfigResult | undefined): string {
  if (!slow?.timing || !fast?.timing) return '–';
  return ratio(pairedMedianRatio(slow.stepMs, fast.stepMs));
}

/** "123 (110–140)" ms, or what happened instead. */
function stepCell(c: ConfigResult | undefined, unavailable: string): string {
  if (c === undefined) return unavailable;
  if (c.error !== null) return `fails: ${c.error}`;
  if (c.timing === null) return '–';
  return `${ms(c.timing.median)} (${ms(c.timing.min)}–${ms(c.timing.max)})`;
}

/** The filter-gradient kernels' ms (median over the profiled steps) and their share of the kernel time. */
function filterGradientCell(c: ConfigResult | undefined): string {
  const p = c?.profile;
  if (!p) return '–';
  const fg = c!.filterGradientTiming?.median ?? p.filterGradientMs;
  return `${ms(fg)} (${(100 * p.filterGradientMs / Math.max(p.kernelMs, 1e-9)).toFixed(0)}%)`;
}

function topKernelsCell(c: ConfigResult | undefined): string {
  const p = c?.profile;
  if (!p) return '–';
  return p.topKernels.slice(0, 4).map(k => `${k.name} ${ms(k.ms)}`).join(', ');
}

function report(runs: readonly BackendRun[], options: Options, seconds: number, workloadLines: readonly string[], userAgent: string | null):
    {markdown: string; svg: string} {
  const out: string[] = [];
  out.push('# Training-step benchmark: `model.trainOnBatch` with tfjs\'s gradients and with the drop-in ones\n');
  out.push(`Code: ${sourceState()}. \`npm run bench:training${process.argv.slice(2).length > 0 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\`; ${
      new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${seconds.toFixed(0)} s in all; tfjs ${tf.version_core}; ${
      runs.map(r => `${r.name}: ${r.unavailable === null ? r.environment : 'not run'}`).join('; ')}${userAgent ? `; ${/Chrome\/[\d.]+/.exec(userAgent)?.[0] ?? userAgent}` : ''}.`);
  out.push('Each model is built with tf.layers (bench/training_models.ts) and compiled with Adam and categorical ' +
           'cross-entropy; one batch of random inputs and one-hot labels. On one model instance and batch: warm-up ' +
           "steps with tfjs's own gradients, then with the drop-in ones (`tfjs-conv-backprop-filters/gradients`), then " +
           'timed pairs of steps alternating between the two (ABBA order). A step is `await model.trainOnBatch(x, y)` ' +
           'and the read-back of the last updated weight (so a GPU backend has finished the update). "ms" is the ' +
           'median step (fastest–slowest). tf.profile gives each kernel\'s time: on cpu and wasm every timed step runs ' +
           'under it (its cost there is a clock read per kernel), on webgl and webgpu one extra step of each ' +
           'configuration does (without GPU timer queries it reads back every kernel\'s output, so that step is slower ' +
           'than the timed ones and its kernel times include a read-back each). "filter-gradient kernels" is the time ' +
           'of Conv2DBackpropFilter and DepthwiseConv2dNativeBackpropFilter (tfjs) or ConvolutionBackpropFilters (drop-in), ' +
           'with any kernels they run inside them (median over the profiled steps), and its share of the kernel time of ' +
           'the profiled step nearest the median; top kernels are by own time (without the kernels they run inside ' +
           'them). The machine (2 cores) was shared with other jobs: compare the columns of one row, not rows of ' +
           'different runs.\n');
  for (const run of runs) {
    const backend = TRAINING_BACKENDS.find(b => b.name === run.name)!;
    out.push(`## ${run.name}\n`);
    if (run.unavailable !== null) {
      out.push(`Not run: ${run.unavailable}.\n`);
      continue;
    }
    out.push(`${run.environment}.${backend.note ? ` ${backend.note}.` : ''}\n`);
    const threadsAb = run.models.some(r => r.configs.dropInOneThread !== undefined);
    const rows = run.models.map(r => {
      const spec = TRAINING_MODELS.find(m => m.id === r.model)!;
      const [a, b, one] = [r.configs.tfjs, r.configs.dropIn, r.configs.dropInOneThread];
      const speedUp = a?.timing && b?.timing ? ratio(a.timing.median / b.timing.median) : '–';
      return [
        spec.label, r.batch === spec.batch ? `${r.batch}` : `${r.batch} (file ${spec.batch})`,
        `${r.pairs}${r.leakedTensors !== 0 ? ` (${r.leakedTensors} tensors leaked)` : ''}`,
        stepCell(a, '–'), stepCell(b, '–'), speedUp, filterGradientCell(a), filterGradientCell(b),
        ...(threadsAb ? [stepCell(one, '–'), pairedRatio(one, b), filterGradientCell(one)] : []),
      ];
    });
    out.push(markdownTable(
        ['model', 'batch', 'timed steps each', "ms: tfjs's gradients", 'ms: drop-in', 'speed-up', "filter-gradient kernels: tfjs's",
         'filter-gradient kernels: drop-in',
         ...(threadsAb ? ['ms: drop-in, 1 thread', 'drop-in N÷1 (paired)', 'filter-gradient kernels: drop-in, 1 thread'] : [])],
        rows, [false, true, true, true, true, true, true, true, ...(threadsAb ? [true, true, true] : [])]));
    if (threadsAb) {
      out.push('\n"drop-in, 1 thread": the drop-in gradients with CONV_BACKPROP_FILTERS_THREADS 1, its steps in the same ' +
               'rounds as the others (--threads-ab); "N÷1": the median over rounds of its step ÷ the N-thread drop-in step of that round.');
    }
    out.push('');
    out.push(`<details><summary>${run.name}: top kernels of the profiled steps (own ms)</summary>\n`);
    out.push(markdownTable(
        ['model', 'config', 'profiled step ms', 'kernel ms (calls)', 'top kernels (own ms)'],
        run.models.flatMap(r => (Object.keys(r.configs) as GradientConfig[]).map(c => {
          const p = r.configs[c]?.profile;
          return [
            TRAINING_MODELS.find(m => m.id === r.model)!.label, CONFIG_LABEL[c], p ? ms(p.wallMs) : '–',
            p ? `${ms(p.kernelMs)} (${p.kernelCalls})` : '–', topKernelsCell(r.configs[c]),
          ];
        })),
        [false, false, true, true, false]));
    out.push('\n</details>\n');
  }
  out.push('## The models\n');
  out.push(markdownTable(['id', 'model', 'batch (file)', 'input', 'from'], options.models.map(m => [
    m.id, m.label, `${m.batch}`, m.inputShape.join('×'), m.origin,
  ])));
  out.push('');
  out.push(...workloadLines.map(line => `- ${line}`));
  out.push('\nDropout layers of the originals are left out (the same cost under either gradient, and noise).\n');
  out.push(`![trainOnBatch step time per model and backend](${options.resultName}.svg)`);

  const groups = runs.filter(r => r.unavailable === null).flatMap(r => r.models.map(m => ({
    label: `${r.name}: ${TRAINING_MODELS.find(s => s.id === m.model)!.label} ×${m.batch}`,
    values: GRADIENT_CONFIGS.map(c => m.configs[c]?.timing?.median ?? NaN),
  })));
  const svg = barChartSvg({
    title: 'model.trainOnBatch: ms per step (median), log scale — shorter is faster',
    subtitle: `tf.layers models, Adam; tfjs ${tf.version_core}; ${sourceState()}; batch after ×; webgl on SwiftShader (CPU), 2 shared cores`,
    unit: 'ms per training step (log scale)',
    series: [{name: "tfjs's own gradients", color: COLORS.builtIn}, {name: 'drop-in gradients (this package)', color: COLORS.simd}],
    missing: 'does not train here (see table)',
    groups,
  });
  return {markdown: out.join('\n') + '\n', svg};
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const start = performance.now();
  sourceState();  // the code as the run starts (cached)
  await tf.setBackend('cpu');
  const workloadLines = checkAgainstWorkloads(options.models);
  for (const line of workloadLines) console.error(line);
  const runs: BackendRun[] = [];
  const skipped = (b: TrainingBackend): string | null =>
      b.run === 'if-installed' && !installed(b.packageName) ? `${b.packageName} is not installed: not available on this build` : null;
  for (const backend of options.backends.filter(b => b.where === 'node')) {
    runs.push(skipped(backend) !== null ?
        {name: backend.name, unavailable: skipped(backend), environment: '', models: []} :
        await runNodeBackend(backend, options));
  }
  const browser = options.backends.filter(b => b.where === 'browser');
  const runnable = browser.filter(b => skipped(b) === null);
  let userAgent: string | null = null;
  if (runnable.length > 0) {
    const page = await runBrowserBackends(runnable, options);
    userAgent = page.userAgent;
    runs.push(...page.backends);
  }
  for (const b of browser.filter(b => skipped(b) !== null)) runs.push({name: b.name, unavailable: skipped(b), environment: '', models: []});
  const order = TRAINING_BACKENDS.map(b => b.name);
  runs.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
  const {markdown, svg} = report(runs, options, (performance.now() - start) / 1000, workloadLines, userAgent);
  console.log(`\n${markdown}`);
  if (options.out !== null) {
    const name = options.resultName;
    fs.mkdirSync(options.out, {recursive: true});
    fs.writeFileSync(path.join(options.out, `${name}.md`), markdown);
    fs.writeFileSync(path.join(options.out, `${name}.svg`), svg);
    fs.writeFileSync(path.join(options.out, `${name}.json`), `${JSON.stringify({
      code: sourceState(), date: new Date().toISOString(), tfjs: tf.version_core, userAgent, backends: runs}, null, 1)}\n`);
    console.error(`wrote ${path.relative(process.cwd(), path.join(options.out, `${name}.md`))}, ${name}.svg, ${name}.json`);
  }
  process.exit(0);
}

if (require.main === module) {
  main().catch(error => {
    console.error(error);
    process.exit(1);
  });
}

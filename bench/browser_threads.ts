/**
 * `npm run bench:browser-threads [-- options]` (`-- --help` lists them: --threads, --quick, --runs,
 * --key-runs, --training-runs, --only, --out): our SIMD kernel on 1 thread and on N threads (Web
 * Workers) in headless Chromium, on the cross-origin-isolated karma page the browser suite runs on
 * (karma.conf.js sends COOP/COEP headers, so SharedArrayBuffer exists).
 *
 * The workloads and their batches are `npm run bench`'s (bench/cpu/picks.ts: the ResNet-50,
 * GoogLeNet and other picked layers, then every layer of shapes_tfjs_training at its file's
 * batch), and so are the timing (warm-up, then rounds over the implementations, every other round
 * reversed, a run amortized over RUN_MS) and the summary table (bench/cpu/report.ts), so a
 * row reads against bench/results/cpu.md. The implementations: ours on `cpu` and on `wasm`, each
 * with CONV_BACKPROP_FILTERS_THREADS 1 and N; problems under CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP
 * stay on one thread, as they do for a user.
 *
 * Node picks the workloads and starts karma with bench/browser_threads_page.ts (bench/karma_page.ts),
 * which measures and sends the results back as one `BROWSER_THREADS_RESULT {json}` console line.
 * The page fails, and nothing is written, when the page is not cross-origin isolated or a call
 * asked for N threads ran on fewer for any reason but the threshold. Writes bench/results/
 * cpu-browser.{md,json} (`-threads<N>` appended for N other than 2, `-quick` for a smoke run).
 */
import * as fs from 'fs';
import * as path from 'path';

import {commandLine} from './args';
import {BROWSER_THREADS_COMMAND, browserThreadsOptions, BrowserThreadsOptions, QUICK} from './browser_threads_options';
import type {ImplKey} from './cpu/implementations';
import {MAX_CALLS_PER_RUN, PICKS, TRAINING_FILE, RUN_MS} from './cpu/picks';
import {pairedSpeedUp, threadScalingTable, TimedWorkload} from './cpu/report';
import {runKarmaPage} from './karma_page';
import {pinChromiumPageThreads, pinUnavailable} from './pin_threads';
import {markdownTable, rateRange, ratio, Timing} from './report';
import {sourceState} from './source_state';
import {describeProblem, findProblem, loadWorkloadFile, OpArguments, Problem, shortName, toOpArguments} from './workloads';

/** One implementation the page times: ours on a backend with CONV_BACKPROP_FILTERS_THREADS `threads`. */
export interface BrowserImpl {
  readonly key: ImplKey;
  readonly label: string;
  readonly backend: 'cpu' | 'wasm';
  readonly threads: number;
}

export interface BrowserWorkload {
  /** The problem's name, ' (deconv)' appended for a transposed one (the files share names). */
  readonly name: string;
  readonly label: string;
  /** describeProblem's "C→O, in→out, kernel, stride, pads". */
  readonly shape: string;
  readonly set: 'picked' | 'training';
  readonly args: OpArguments;
  readonly seed: number;
  readonly runs: number;
}

/** `--pin`: how long the page waits for Node to pin its workers once they are ready (Node looks every tenth of it). */
const PIN_WAIT_MS = 1000;

export interface BrowserThreadsPageInput {
  readonly workloads: readonly BrowserWorkload[];
  readonly implementations: readonly BrowserImpl[];
  readonly threads: number;
  /** A timed run is as many back-to-back calls as take about `runMs` (at least one, at most `maxCalls`), with one read-back. */
  readonly amortized: {readonly runMs: number; readonly maxCalls: number};
  /** ms the page waits once its workers are ready, so that Node pins them first (`--pin`; 0 otherwise). */
  readonly pinWaitMs: number;
  /** The N-thread implementations with the adaptive choice on (`--adaptive`); off, every call runs on the threads asked for. */
  readonly adaptive: boolean;
}

export interface BrowserMeasurement {
  readonly impl: ImplKey;
  /** ms per call of each timed run, in the order run (round r at index r). */
  readonly times: number[];
  readonly timing: Timing;
  readonly callsPerRun: number;
  /** The path the warm-up call's verbose line printed, e.g. `simd relaxed threads=2`. */
  readonly path: string;
}

/** The N-thread result against the 1-thread one on a backend, element by element. */
export interface BitwiseCheck {
  readonly backend: 'cpu' | 'wasm';
  readonly elements: number;
  /** Elements whose bits differ (0: bitwise equal), and the largest |difference|. */
  readonly differing: number;
  readonly maxAbs: number;
}

/** The N-thread plan after the timed runs (simdPlanOf), the split as the report shows it. */
export interface PlanSummary {
  readonly threads: number;
  readonly reason: string | null;
  readonly units: number;
  readonly slices: number;
  readonly unitParts: number;
  readonly steps: number;
}

export interface BrowserWorkloadResult {
  readonly name: string;
  readonly flops: number;
  readonly measurements: BrowserMeasurement[];
  readonly plan: PlanSummary | null;
  readonly bitwise: BitwiseCheck[];
}

export interface BrowserEnvironment {
  readonly userAgent: string;
  readonly crossOriginIsolated: boolean;
  readonly hardwareConcurrency: number;
  /** The SIMD build the kernel runs: relaxed (f32x4.relaxed_madd) or plain. */
  readonly relaxedSimd: boolean;
  readonly thresholdMflop: number;
  /** Threads simdThreadsReady() reported before the first workload. */
  readonly threadsReady: number;
  readonly tfjs: string;
  /** tfjs-backend-wasm's own build (its kernels; ours runs beside it). */
  readonly wasmBackendSimd: boolean;
  readonly wasmBackendThreads: boolean;
}

export interface BrowserThreadsPageResult {
  readonly environment: BrowserEnvironment;
  readonly workloads: BrowserWorkloadResult[];
  /** Why the run is not a measurement of threads (not isolated, a threaded call on fewer threads), or null. */
  readonly failure: string | null;
}

/** The implementations, each 1-thread one right before its N-thread one (none on N threads when N is 1). */
function browserImplementations(threads: number): BrowserImpl[] {
  const label = (backend: string, n: number) => `ours ${backend}, ${n} thread${n === 1 ? '' : 's'}`;
  return ([['simd', 'simdThreads', 'cpu'], ['wasm', 'wasmThreads', 'wasm']] as const).flatMap(([one, many, backend]) => [
    {key: one, label: label(backend, 1), backend, threads: 1},
    ...(threads > 1 ? [{key: many, label: label(backend, threads), backend, threads}] : []),
  ]);
}

/** The picked layers at their batches, then the training layers at their files', as `npm run bench` runs them. */
function browserWorkloads(options: BrowserThreadsOptions): BrowserWorkload[] {
  const selected = (name: string, quickNames: readonly string[]) =>
      (!options.quick || quickNames.includes(name)) && (options.only === null || options.only.some(o => name.includes(o)));
  const workload = (problem: Problem, batch: number, set: BrowserWorkload['set'], seed: number, runs: number) => ({
    name: `${problem.name}${problem.kind === 'deconv' ? ' (deconv)' : ''}`, label: shortName(problem), shape: describeProblem(problem), set,
    args: toOpArguments(problem, batch), seed, runs,
  });
  const picked = PICKS.filter(p => selected(p.name, QUICK.picks)).map((pick, index) =>
      workload(findProblem(loadWorkloadFile(pick.file), pick.name), pick.batch, 'picked', 1000 + 10 * index,
               pick.key ? options.keyRuns : options.runs));
  const training = loadWorkloadFile(TRAINING_FILE).filter(p => selected(p.name, QUICK.training)).map((problem, index) =>
      workload(problem, problem.batch, 'training', 5000 + 10 * index, options.trainingRuns));
  return [...picked, ...training];
}

/** "simd threads=2: 36 units × 1 slice, 4 parts, 16 steps", or the path alone on one thread. */
function planCell(r: BrowserWorkloadResult, impls: readonly BrowserImpl[]): string {
  const paths = [...new Set(impls.filter(i => i.threads > 1).map(i => r.measurements.find(m => m.impl === i.key)?.path ?? '–'))];
  const p = r.plan;
  const split = p === null || p.threads === 1 ? '' :
      `: ${p.units} units × ${p.slices} slice${p.slices === 1 ? '' : 's'}, ${p.unitParts} parts, ${p.steps} steps`;
  return `${paths.join(' / ')}${split}`;
}

function bitwiseCell(r: BrowserWorkloadResult): string {
  const differing = r.bitwise.filter(b => b.differing > 0);
  if (r.bitwise.length === 0) return '–';
  return differing.length === 0 ? '✓' :
      `✗ ${differing.map(b => `${b.backend} ${b.differing} of ${b.elements} (max ${b.maxAbs.toExponential(1)})`).join(', ')}`;
}

function report(options: BrowserThreadsOptions, workloads: readonly BrowserWorkload[], page: BrowserThreadsPageResult,
                impls: readonly BrowserImpl[], seconds: number, pinned: {main: number; workers: number}|null):
    {markdown: string; json: object} {
  const n = options.threads;
  const e = page.environment;
  const command = `npm run bench:browser-threads${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  const byName = new Map(page.workloads.map(r => [r.name, r]));
  const rows = workloads.flatMap(w => {
    const r = byName.get(w.name);
    if (r === undefined) return [];
    const timed: TimedWorkload = {label: w.label, flops: r.flops, measurements: r.measurements};
    return [{w, r, timed}];
  });
  const pairs = ([['ours cpu', 'simdThreads', 'simd'], ['ours wasm', 'wasmThreads', 'wasm']] as const)
                    .filter(([, many, one]) => impls.some(i => i.key === many) && impls.some(i => i.key === one));
  const out: string[] = [];
  out.push(`# Filter-gradient benchmark: cpu and wasm in Chromium, 1 thread${n > 1 ? ` and ${n} threads` : ''}\n`);
  if (options.quick) out.push('**Smoke run (`--quick`): a handful of layers and few runs; not a measurement.**\n');
  out.push(`Code: ${sourceState()}.`);
  out.push(`\`${command}\`; ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${seconds.toFixed(0)} s. Headless ${
      /Chrome\/[\d.]+/.exec(e.userAgent)?.[0] ?? e.userAgent}, crossOriginIsolated ${e.crossOriginIsolated}, hardwareConcurrency ${
      e.hardwareConcurrency}, ${e.relaxedSimd ? 'relaxed' : 'plain'} SIMD build, ${e.threadsReady === 1 ? '1 thread (the page\'s main thread)' :
      `${e.threadsReady} threads ready (the page's main thread and ${e.threadsReady - 1} Web Worker${e.threadsReady === 2 ? '' : 's'})`
      }; tfjs-core ${e.tfjs}, tfjs-backend-wasm's own build ${
      e.wasmBackendThreads ? 'threaded ' : ''}${e.wasmBackendSimd ? 'SIMD' : 'plain'}.${
      pinned === null ? '' :
                        ` **Pinned** (\`--pin\`, taskset): ${pinned.main} renderer main thread(s) on CPU 0, ${
                            pinned.workers} Web Worker thread(s) on CPUs 1… (tfjs-backend-wasm's own workers among them): ` +
                            'what threads give where the OS cannot put a woken worker on the main thread\'s CPU, not what a ' +
                            'user\'s page gets.'}`);
  out.push([
    `\`npm run bench\`'s layers (bench/cpu/picks.ts) at its batches, NXC input, XIO filter, float32, on the karma page of ` +
        'the browser suite (cross-origin isolated through COOP/COEP headers).',
    `Ours on \`cpu\` and on \`wasm\`, each with CONV_BACKPROP_FILTERS_THREADS ${n > 1 ? `1 and ${n}` : '1'}; problems under ` +
        `CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP (${e.thresholdMflop}) stay on one thread, as they do for a user. The calling ` +
        'thread is the page\'s main thread, which spins while it waits for the workers (Atomics.wait throws there).',
    ...(n > 1 ? [options.adaptive ?
        `On ${n} threads with the adaptive choice on (\`--adaptive\`, CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE true, a user's ` +
            'default): a problem runs on one thread while its calls on threads measure slower, and the tries of the other way ' +
            'are in the times (docs/threads.md).' :
        `On ${n} threads with the adaptive choice off (CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE false): every call on the ` +
            'threads, to time what they give (`--adaptive` times a user\'s default).'] : []),
    `Each implementation: 1 warm-up call (its verbose line gives the path that ran), then ${options.runs} timed runs (${
        options.keyRuns} on ResNet-50 res2a/res3a_branch2b, ${options.trainingRuns} on the training layers), round-robin ` +
        `with the others on the same tensors, every other round in reverse order; a run is as many back-to-back calls as ` +
        `take about ${RUN_MS} ms (from the fastest of 3 untimed calls; at least one, at most ${MAX_CALLS_PER_RUN}) with ` +
        `one read-back, divided by the calls (DESIGN.md §7: small problems amortized).`,
    'GFLOP/s = 2·N·O·(C/G)·K·out-spatial / median time; "(a–b)" is the slowest–fastest run.',
    ...(n > 1 ? [`"N÷1" is the paired median speed-up: the median over rounds of the 1-thread time ÷ the ${n}-thread time ` +
                 `of that round. The warm-up results of 1 and ${n} threads are compared bit for bit (the split does not ` +
                 'depend on the thread count).'] : []),
    'The machine is shared and noisy: compare figures of one run only.\n',
  ].join(' '));

  if (pairs.length > 0) {
    out.push(`## ${n} threads ÷ 1 thread\n`);
    out.push(threadScalingTable(rows.filter(x => x.w.set === 'picked').map(x => x.timed),
                                rows.filter(x => x.w.set === 'training').map(x => x.timed), pairs));
    out.push('\nThe same table as bench/results/cpu.md\'s (`npm run bench`, Node), targets included (issue 31, THREAD_TARGETS).\n');
    const unequal = rows.filter(x => x.r.bitwise.some(b => b.differing > 0));
    out.push(unequal.length === 0 ?
        `1 and ${n} threads bitwise equal on all ${rows.length} layers, cpu and wasm.\n` :
        `**1 and ${n} threads differ** on ${unequal.length} of ${rows.length} layers: ${
            unequal.map(x => `${x.w.label} (${bitwiseCell(x.r)})`).join('; ')}.\n`);
  }

  const table = (set: BrowserWorkload['set']) => {
    const members = rows.filter(x => x.w.set === set);
    const header = ['layer', 'batch', 'shape (C→O, in→out, kernel, stride, pads)', 'MFLOP',
                    ...impls.map(i => `${i.label} GFLOP/s`), ...pairs.map(([name]) => `${name} N÷1`),
                    'calls per run', ...(n > 1 ? [`path on ${n} threads (cpu / wasm)`, `1 = ${n} bitwise`] : [])];
    const body = members.map(({w, r, timed}) => [
      w.label, String(w.args.batch), w.shape, (r.flops / 1e6).toFixed(r.flops < 1e7 ? 2 : 1),
      ...impls.map(i => {
        const m = r.measurements.find(x => x.impl === i.key);
        return m ? rateRange(r.flops, m.timing) : '–';
      }),
      ...pairs.map(([, many, one]) => ratio(pairedSpeedUp(timed, many, one))),
      impls.map(i => r.measurements.find(x => x.impl === i.key)?.callsPerRun ?? '–').join(', '),
      ...(n > 1 ? [planCell(r, impls), bitwiseCell(r)] : []),
    ]);
    return markdownTable(header, body, header.map((_, c) => c === 1 || (c >= 3 && c < header.length - (n > 1 ? 2 : 0))));
  };
  if (rows.some(x => x.w.set === 'picked')) {
    out.push('## Picked layers (GFLOP/s: median (slowest–fastest))\n');
    out.push(table('picked'));
    out.push(`\ncalls per run, in order: ${impls.map(i => i.label).join('; ')}.\n`);
  }
  if (rows.some(x => x.w.set === 'training')) {
    out.push(`## Training layers (\`${TRAINING_FILE}\`)\n`);
    out.push(table('training'));
    out.push(`\ncalls per run, in order: ${impls.map(i => i.label).join('; ')}.\n`);
  }
  if (n > 1) out.push(`Path: what the verbose line (CONV_BACKPROP_FILTERS_VERBOSE) of the ${n}-thread warm-up call printed; ` +
           `"(below threshold)": under ${e.thresholdMflop} MFLOP, one thread by design. The split (simdPlanOf after the ` +
           `timed runs): output units × reduction slices, unit parts per slice, steps per chunk (docs/threads.md).`);
  const markdown = out.join('\n') + '\n';
  const json = {
    code: sourceState(), command, date: new Date().toISOString(), seconds, threads: n, runs: options.runs, keyRuns: options.keyRuns,
    trainingRuns: options.trainingRuns, runMs: RUN_MS, quick: options.quick, environment: e, pinned,
    implementations: impls,
    workloads: rows.map(({w, r}) => ({...r, label: w.label, set: w.set, batch: w.args.batch, shape: w.shape})),
  };
  return {markdown, json};
}

async function main() {
  const options = browserThreadsOptions(commandLine(BROWSER_THREADS_COMMAND));
  const start = performance.now();
  sourceState();  // the code as the run starts (cached)
  const workloads = browserWorkloads(options);
  if (workloads.length === 0) throw new Error(`--only ${options.only?.join(',')}: no layer matches`);
  const impls = browserImplementations(options.threads);
  const root = path.resolve(__dirname, '..');
  if (options.pin) {
    const unavailable = pinUnavailable();
    if (unavailable !== undefined) throw new Error(unavailable);
  }
  const input: BrowserThreadsPageInput = {
    workloads, implementations: impls, threads: options.threads, amortized: {runMs: RUN_MS, maxCalls: MAX_CALLS_PER_RUN},
    pinWaitMs: options.pin ? PIN_WAIT_MS : 0,
    adaptive: options.adaptive,
  };
  console.error(`${workloads.length} layers, ${impls.map(i => i.label).join('; ')}`);
  // --pin: Chromium's page threads are pinned as they appear (the page waits PIN_WAIT_MS for its workers).
  const pinnedIds = {main: new Set<number>(), workers: new Set<number>()};
  let pinned = {main: 0, workers: 0};
  const pinner = options.pin ? setInterval(() => pinned = pinChromiumPageThreads(pinnedIds), PIN_WAIT_MS / 10) : undefined;
  const {result, exitCode} = await runKarmaPage<BrowserThreadsPageResult>(
      [path.join(root, 'bench', 'browser_threads_page.ts')], input, 'BROWSER_THREADS_RESULT',
      ['node_modules/@tensorflow/tfjs-backend-wasm/dist/*.wasm']).finally(() => clearInterval(pinner));
  if (options.pin && result !== null && (pinned.main === 0 || pinned.workers < result.environment.threadsReady - 1)) {
    console.error(`\nFAILED, nothing written: --pin pinned ${pinned.main} renderer main thread(s) and ${pinned.workers} Web Worker(s), ` +
                  `the page ran ${result.environment.threadsReady} threads`);
    process.exit(1);
  }
  if (result === null) {
    console.error(`the page sent no results (karma exit code ${exitCode})`);
    process.exit(exitCode || 1);
  }
  if (result.failure !== null) {
    console.error(`\nFAILED, nothing written: ${result.failure}`);
    process.exit(1);
  }
  const {markdown, json} = report(options, workloads, result, impls, (performance.now() - start) / 1000, options.pin ? pinned : null);
  console.log(`\n${markdown}`);
  if (options.out !== null) {
    fs.mkdirSync(options.out, {recursive: true});
    fs.writeFileSync(path.join(options.out, `${options.resultName}.md`), markdown);
    fs.writeFileSync(path.join(options.out, `${options.resultName}.json`), `${JSON.stringify(json, null, 1)}\n`);
    console.error(`wrote ${path.relative(process.cwd(), path.join(options.out, `${options.resultName}.md`))}, ${options.resultName}.json`);
  }
  process.exit(exitCode);
}

if (require.main === module) {
  main().catch(error => {
    console.error(error);
    process.exit(1);
  });
}

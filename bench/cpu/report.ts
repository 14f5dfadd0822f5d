import * as path from 'path';

import {barChartSvg, bytes, markdownTable, ms, pairedMedianRatio, rate, rateRange, ratio, summarize} from '../report';
import {sourceState} from '../source_state';

import {IMPL_COLORS, Impl, ImplKey} from './implementations';
import {Options} from './options';
import {MAX_CALLS_PER_RUN, PICKS, THREAD_TARGETS, TRAINING_FILE, RUN_MS} from './picks';
import {Measurement, WorkloadResult} from './run_workload';

export interface ReportInput {
  options: Options;
  command: string;
  machine: string;
  dir: string;
  descriptors: number;
  files: number;
  notes: string[];
  /** The "all threads" count of this run. */
  threads: number;
  labels: Map<ImplKey, string>;
  results: WorkloadResult[];
  anchor: WorkloadResult | null;
  training: WorkloadResult[];
  seconds: number;
  impls: Impl[];
}

const find = (w: WorkloadResult, key: ImplKey) => w.measurements.find(m => m.impl === key);

/** What the thread figures read of a workload's result (bench/browser_threads.ts's results have it too). */
export interface TimedWorkload {
  readonly label: string;
  readonly flops: number;
  /** ms per call of each timed run, round r of every implementation at index r. */
  readonly measurements: ReadonlyArray<{readonly impl: ImplKey; readonly times: readonly number[]}>;
}

/** The ms per call of `key`'s timed runs on `w`, in round order (none if it did not run). */
const runTimes = (w: TimedWorkload, key: ImplKey) => w.measurements.find(m => m.impl === key)?.times ?? [];

/**
 * How much faster `fast` ran than `slow` on one workload, paired (pairedMedianRatio): the two run
 * next to each other in every round (round-robin, every other round reversed).
 */
export function pairedSpeedUp(w: TimedWorkload, fast: ImplKey, slow: ImplKey): number {
  return pairedMedianRatio(runTimes(w, slow), runTimes(w, fast));
}

/**
 * The fastest `slow` run's time ÷ the fastest `fast` run's: what the code gives where neither run
 * met the machine's noise (the target reads the paired median, pairedSpeedUp).
 */
export function fastestSpeedUp(w: TimedWorkload, fast: ImplKey, slow: ImplKey): number {
  return Math.min(...runTimes(w, slow)) / Math.min(...runTimes(w, fast));
}

/** min (its workload) and median of `of` over `ws`, skipping workloads where it is not defined. */
function spread<W extends TimedWorkload>(ws: readonly W[], of: (w: W) => number) {
  const values = ws.map(w => ({w, v: of(w)})).filter(x => Number.isFinite(x.v)).sort((a, b) => a.v - b.v);
  if (values.length === 0) return null;
  return {min: values[0].v, worst: values[0].w.label, median: summarize(values.map(x => x.v)).median, count: values.length};
}

/**
 * The "N threads ÷ 1 thread" table against issue 31's targets (THREAD_TARGETS): for each
 * [name, N-thread key, 1-thread key], the count, min (its layer) and median of the paired N÷1
 * over the layers of ≥ 50 MFLOP (picked and training layers), the training layers of ≥ 10 MFLOP
 * and every layer; beside them the same of the fastest runs' ratio (fastestSpeedUp), which tells
 * a layer the machine slowed in some runs from one the code holds back.
 */
export function threadScalingTable(
    picked: readonly TimedWorkload[], training: readonly TimedWorkload[],
    implementations: ReadonlyArray<readonly [string, ImplKey, ImplKey]>): string {
  const all = [...picked, ...training];
  const t = THREAD_TARGETS;
  const groups: Array<[string, TimedWorkload[], string]> = [
    [`layers of ≥ ${t.bigLayerMflop} MFLOP`, all.filter(w => w.flops >= t.bigLayerMflop * 1e6), `≥ ${t.bigLayerSpeedUp}× each`],
    [`training layers of ≥ ${t.trainingLayerMflop} MFLOP`, training.filter(w => w.flops >= t.trainingLayerMflop * 1e6),
     `≥ ${t.trainingSpeedUp}× each`],
    ['every layer', all, `≥ ${t.floor}× each`],
  ];
  const rows: string[][] = [];
  for (const [name, many, one] of implementations) {
    for (const [group, ws, target] of groups) {
      const s = spread(ws, w => pairedSpeedUp(w, many, one));
      const f = spread(ws, w => fastestSpeedUp(w, many, one));
      rows.push([name, group, String(s?.count ?? 0), s ? `**${ratio(s.min)}** (${s.worst})` : '–', s ? ratio(s.median) : '–',
                 f ? `${ratio(f.min)} (${f.worst})` : '–', f ? ratio(f.median) : '–',
                 name.startsWith('PyTorch') ? '(reference)' : target]);
    }
  }
  return markdownTable(['implementation', 'layers', 'count', 'min (layer)', 'median', 'fastest runs: min (layer)',
                        'fastest runs: median', 'target (on the paired figures)'], rows,
                       [false, false, true, false, true, false, true, false]);
}

export function writeReport(r: ReportInput): {markdown: string; svg: string | null; trainingSvg: string | null; json: object} {
  const has = (key: ImplKey) => r.impls.some(i => i.key === key);
  const label = (key: ImplKey) => r.labels.get(key) ?? key;
  const n = r.threads;
  const out: string[] = [];
  out.push('# Filter-gradient benchmark: cpu and wasm, 1 thread and all threads\n');
  out.push(`Code: ${sourceState()}.`);
  const keyRuns = Math.max(r.options.runs, r.options.keyRuns);
  out.push(`\`${r.command}\` on ${r.machine}; ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${r.seconds.toFixed(0)} s.`);
  out.push(`Workloads from \`${path.basename(path.dirname(r.dir))}/${path.basename(r.dir)}\` (${r.descriptors} descriptors in ${
      r.files} files parsed and checked); NXC input, XIO filter, float32; batch scaled down from the files' and stated.`);
  out.push(`Each implementation: 1 warm-up call (it also measures memory), then ${r.options.runs} timed run${r.options.runs === 1 ? '' : 's'}, ` +
           `round-robin with the others on the same workload, every other round in reverse order (${keyRuns} on the key ` +
           `workloads ResNet-50 res2a/res3a_branch2b and the built-in's shape; TypeScript loops: at most 5; wasm built-in: ${
               Math.min(r.options.runs, 3)}); ` +
           `a run of ours is as many back-to-back calls as take about ${RUN_MS} ms (from the fastest of 3 untimed calls; ` +
           `at least one, at most ${MAX_CALLS_PER_RUN}) with one read-back of the last result, divided by the calls ` +
           `(DESIGN.md §7: small problems amortized); PyTorch times one call per run itself. Ours on ${n} threads: CONV_BACKPROP_FILTERS_THREADS ${n}, ` +
           `problems under the threshold (CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, docs/threads.md) stay on one thread, ` +
           `as they do for a user. GFLOP/s = 2·N·O·(C/G)·K·out-spatial / median time; "(a–b)" is the slowest–fastest ` +
           `run; "N÷1" is the paired median speed-up (the median over rounds of the 1-thread time ÷ the ${n}-thread time ` +
           `of that round). The machine is shared and noisy: compare figures of one run only.\n`);
  for (const note of r.notes) out.push(`- ${note}`);
  out.push('');

  // Key figures.
  const keyResults = r.results.filter(w => PICKS.find(p => p.name === w.name && p.file === w.source.split(':')[0])?.key);
  if (keyResults.length > 0 || r.anchor) out.push('## Key figures\n');
  for (const w of keyResults) {
    const parts = [`- ${w.label} (batch ${w.batch}):`];
    for (const [one, many, name] of [['simd', 'simdThreads', 'ours cpu'], ['wasm', 'wasmThreads', 'ours wasm'],
                                     ['pytorch', 'pytorchThreads', 'PyTorch']] as Array<[ImplKey, ImplKey, string]>) {
      const a = find(w, one);
      const b = find(w, many);
      if (!a && !b) continue;
      parts.push(`${name} ${rate(a?.gflops ?? NaN)} GFLOP/s on 1 thread, **${rate(b?.gflops ?? NaN)}** on ${n} (N÷1 ${
          ratio(pairedSpeedUp(w, many, one))});`);
    }
    const t1 = find(w, 'pytorch');
    const tn = find(w, 'pytorchThreads');
    if (t1 || tn) {
      parts.push(`ours cpu ÷ PyTorch: ${ratio((find(w, 'simd')?.gflops ?? NaN) / (t1?.gflops ?? NaN))} on 1 thread, ${
          ratio((find(w, 'simdThreads')?.gflops ?? NaN) / (tn?.gflops ?? NaN))} on ${n}.`);
    }
    out.push(parts.join(' '));
  }
  if (r.anchor) {
    const b = find(r.anchor, 'cpuBuiltIn')!;
    for (const m of r.anchor.measurements.filter(m => m.impl !== 'cpuBuiltIn')) {
      out.push(`- ${r.anchor.label} batch ${r.anchor.batch}: ${label(m.impl)} **${ratio(m.gflops / b.gflops)}** tfjs's built-in cpu ` +
               `Conv2DBackpropFilter (${rate(m.gflops)} vs ${rate(b.gflops)} GFLOP/s).`);
    }
  }
  out.push('');

  // Thread scaling against the targets.
  const all = [...r.results, ...r.training];
  const speedUps: Array<[string, ImplKey, ImplKey]> = [
    ['ours cpu', 'simdThreads', 'simd'], ['ours wasm', 'wasmThreads', 'wasm'], ['ours cpu, relaxed SIMD', 'simdRelaxedThreads', 'simdRelaxed'],
    ['PyTorch', 'pytorchThreads', 'pytorch'],
  ];
  const present = speedUps.filter(([, many, one]) => has(many) && has(one));
  if (present.length > 0 && all.length > 0) {
    out.push(`## ${n} threads ÷ 1 thread\n`);
    out.push(threadScalingTable(r.results, r.training, present));
    out.push(`\n"fastest runs": each layer's fastest 1-thread run ÷ its fastest ${n}-thread run, which the machine's ` +
             'noise disturbs least: where it is high and the paired median low, the machine took the second core in ' +
             'some runs; where both are low, the code holds the layer back (docs/threads.md, "Figures today").\n');
  }

  // Throughput.
  const allColumns: ImplKey[] = (['pytorch', 'pytorchThreads', 'simd', 'simdThreads', 'simdRelaxed', 'simdRelaxedThreads', 'wasm',
                               'wasmThreads', 'typescript'] as ImplKey[]).filter(has);
  const builtInNote = '"n/a": tfjs-backend-wasm\'s only filter gradient is Conv3DBackpropFilterV2 (no Conv2DBackpropFilter, ' +
      'no depthwise one): it runs 2-D problems here as 3-D ones of depth 1, but takes no groups, no dilation, no ' +
      'transposed problem and only "valid"/"same" pads.';
  // --adaptive: how many of the N-thread columns' timed calls the choice ran on the threads.
  const adaptive = [...r.results, ...r.training].some(w => w.measurements.some(m => m.adaptiveCalls !== undefined));
  const throughputTable = (ws: WorkloadResult[], training: boolean) => {
    const columns = allColumns.filter(key => ws.some(w => find(w, key) !== undefined));
    const header = ['workload', 'batch', 'shape (C→O, in→out, kernel, stride, pads)', training ? 'MFLOP' : 'GFLOP',
                    ...columns.map(key => `${label(key)} GFLOP/s`), ...present.map(([name]) => `${name} N÷1`),
                    ...(has('pytorch') ? ['ours cpu ÷ PyTorch (1 thread)'] : []),
                    ...(has('pytorchThreads') ? [`ours cpu ÷ PyTorch (${n} threads)`] : []),
                    'tfjs built-in (wasm) GFLOP/s', 'ours wasm ÷ built-in', 'calls per run (cpu, wasm)',
                    ...(adaptive ? [`timed calls on ${n} threads (cpu, wasm)`] : []), 'diff'];
    const rows = ws.map(w => {
      const b = find(w, 'wasmBuiltIn');
      const worstDiff = Math.max(...w.measurements.map(m => m.difference ?? 0));
      return [
        w.label, training ? String(w.batch) : `${w.batch} (file ${w.fileBatch})`, w.shape,
        training ? (w.flops / 1e6).toFixed(w.flops < 1e7 ? 2 : 1) : (w.flops / 1e9).toFixed(3),
        ...columns.map(key => {
          const m = find(w, key);
          return m ? rateRange(w.flops, m.timing) : '–';
        }),
        ...present.map(([, many, one]) => ratio(pairedSpeedUp(w, many, one))),
        ...(has('pytorch') ? [ratio((find(w, 'simd')?.gflops ?? NaN) / (find(w, 'pytorch')?.gflops ?? NaN))] : []),
        ...(has('pytorchThreads') ? [ratio((find(w, 'simdThreads')?.gflops ?? NaN) / (find(w, 'pytorchThreads')?.gflops ?? NaN))] : []),
        b ? rateRange(w.flops, b.timing) : 'n/a', b ? ratio((find(w, 'wasm')?.gflops ?? NaN) / b.gflops) : '–',
        `${find(w, 'simd')?.callsPerRun ?? '–'}, ${find(w, 'wasm')?.callsPerRun ?? '–'}`,
        ...(adaptive ? [(['simdThreads', 'wasmThreads'] as ImplKey[]).map(key => {
          const calls = find(w, key)?.adaptiveCalls;
          return calls === undefined ? '–' : `${calls.onThreads} of ${calls.all}`;
        }).join(', ')] : []),
        worstDiff > 0 ? worstDiff.toExponential(1) : '0',
      ];
    });
    return markdownTable(header, rows, header.map((_, c) => c === 1 || c >= 3));
  };
  const diffNote = `diff: the largest max |result − ${label(has('typescript') ? 'typescript' : 'simd')}| / max |${
      label(has('typescript') ? 'typescript' : 'simd')}| over the other implementations of ours (PyTorch's values are not compared).`;
  if (r.results.length > 0) {
    out.push('## Throughput (GFLOP/s: median (slowest–fastest))\n');
    out.push(throughputTable(r.results, false));
    out.push(`\n${builtInNote} ${diffNote}\n`);
  }

  // Anchor.
  if (r.anchor) {
    const a = r.anchor;
    const b = find(a, 'cpuBuiltIn')!;
    out.push(`## Against tfjs's built-in cpu kernel\n`);
    out.push(`${a.label} at batch ${a.batch} (${a.shape}, ${(a.flops / 1e9).toFixed(3)} GFLOP): tfjs's Conv2DBackpropFilter on ` +
             `the cpu backend gets a single call, timed (it takes seconds; no warm-up), in the middle of the others' ${keyRuns} ` +
             `timed runs (after their warm-up). Same input data for tfjs and ours; results compared.\n`);
    out.push(markdownTable(
        ['implementation', 'median ms', 'min–max ms', 'GFLOP/s', '× built-in', 'max rel. diff'],
        a.measurements.map(m => [label(m.impl), ms(m.timing.median), `${ms(m.timing.min)}–${ms(m.timing.max)}`, rate(m.gflops),
                                 ratio(m.gflops / b.gflops), m.difference === null ? '–' : m.difference.toExponential(1)]),
        [false, true, true, true, true, true]));
    out.push('');
  }

  // Memory.
  const ours = allColumns.filter(key => !key.startsWith('pytorch'));
  if (r.results.length > 0) {
    out.push('## Memory (peak extra, measured on the warm-up call)\n');
    out.push(`RSS: the process's resident-set high-water mark during the call above the resident set just before it ` +
             `(Linux VmHWM reset through /proc/self/clear_refs after a full GC); it includes scratch buffers, tensors and ` +
             `WebAssembly memory growth. wasm: growth during the call of the WebAssembly memories the implementation ` +
             `uses (the micro-kernels' own memory, shared with the worker threads on N threads; on wasm also ` +
             `tfjs-backend-wasm's heap, where the result is allocated) → their size after the call (a WebAssembly memory ` +
             `never shrinks: a workload smaller than an earlier one shows no growth).\n`);
    const header = ['workload', 'x + dy', 'gradient', ...(has('pytorch') ? ['PyTorch RSS'] : []),
                    ...ours.flatMap(key => [`${label(key)}: RSS`, ...(key === 'typescript' ? [] : ['wasm'])])];
    const rows = r.results.map(w => {
      const rss = (m: Measurement | undefined) => m?.memory.peakRss == null ? '–' : bytes(m.memory.peakRss);
      return [w.label, bytes(w.dataBytes), bytes(w.outputBytes), ...(has('pytorch') ? [rss(find(w, 'pytorch'))] : []),
              ...ours.flatMap(key => {
                const m = find(w, key);
                return [rss(m), ...(key === 'typescript' ? [] :
                    [m?.memory.wasmGrowth == null ? '–' : `+${bytes(m.memory.wasmGrowth)} → ${bytes(m.memory.wasmTotal ?? NaN)}`])];
              })];
    });
    out.push(markdownTable(header, rows, header.map((_, c) => c > 0)));
    out.push('');
    out.push(`![GFLOP/s per workload and implementation](${r.options.resultName}.svg)`);
    out.push('');
  }

  // Training layers.
  if (r.training.length > 0) {
    out.push(`## Training layers (\`${TRAINING_FILE}\`)\n`);
    out.push(`Every layer of the file at the batch it gives (what tfjs users train: MNIST, CIFAR-10, a speech spectrogram ` +
             `model, MobileNet v1 α 0.25 at 128 px, and batch 1–2 ResNet-50/MobileNet layers). ${r.options.trainingRuns} ` +
             `timed runs per implementation after 1 warm-up (built-in: ${Math.min(r.options.trainingRuns, 3)}), round-robin, ` +
             `every other round in reverse order; runs amortized as above. ` +
             `Inputs are tensors of the backend, as a model passes them.\n`);
    out.push(throughputTable(r.training, true));
    out.push(`\n${builtInNote} ${diffNote}\n`);
    out.push(`![GFLOP/s per training layer and implementation](${r.options.resultName}_training.svg)`);
    out.push('');
  }
  const markdown = out.join('\n') + '\n';

  const series: ImplKey[] = [...allColumns, 'wasmBuiltIn', ...(r.anchor ? ['cpuBuiltIn'] : [])] as ImplKey[];
  const chart = (title: string, subtitle: string, ws: WorkloadResult[]) => barChartSvg({
    title,
    subtitle,
    unit: 'GFLOP/s (log scale)',
    series: series.map(key => ({name: label(key), color: IMPL_COLORS[key]})),
    groups: ws.map(w => ({
      label: `${w.label} ×${w.batch}${w === r.anchor ? ' (anchor)' : ''}`,
      values: series.map(key => find(w, key)?.gflops ?? NaN),
    })),
  });
  const svg = r.results.length === 0 ? null :
      chart('Filter gradient, Node: GFLOP/s (median), log scale',
            `${r.machine.split(',')[0]}, 1 and ${n} threads; ${r.options.runs} runs (key workloads ${keyRuns}) after 1 warm-up; ${
                sourceState()}; batch after ×`,
            [...r.results, ...(r.anchor ? [r.anchor] : [])]);
  const trainingSvg = r.training.length === 0 ? null :
      chart(`Filter gradient on the training layers (${TRAINING_FILE}), Node: GFLOP/s (median), log scale`,
            `${r.machine.split(',')[0]}, 1 and ${n} threads; ${r.options.trainingRuns} amortized runs after 1 warm-up; ${
                sourceState()}; batch after ×`,
            r.training);
  const json = {
    machine: r.machine,
    code: sourceState(),
    command: r.command,
    threads: n,
    runs: r.options.runs,
    keyRuns,
    notes: r.notes,
    implementations: Object.fromEntries(r.labels),
    workloads: r.results,
    anchor: r.anchor,
    training: r.training,
    runMs: RUN_MS,
  };
  return {markdown, svg, trainingSvg, json};
}

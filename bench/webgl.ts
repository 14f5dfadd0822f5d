/**
 * `npm run bench:webgl [-- options]` (`-- --help` lists them: --runs, --set, --only, --inputs, --variant, --out):
 * our webgl kernel against tfjs's built-in webgl filter gradients (Conv2DBackpropFilter,
 * DepthwiseConv2dNativeBackpropFilter, Conv3DBackpropFilterV2) on the same tensors in the same
 * headless Chromium, round-robin.
 *
 * Two sets of workloads: 'big' — layers of ResNet-50, MobileNet, GoogLeNet and others at batch
 * sizes where a call takes on the order of a second (bench/results/webgl.md), inputs as
 * `--inputs` says, one call per timed run; 'training' — every layer of
 * workloads/conv/shapes_tfjs_training at its file's batch (the layers tfjs users train), inputs
 * always as a model passes them (packed: outputs of earlier ops), and small calls amortized:
 * a timed run is several back-to-back calls with one read-back, divided by their number (a
 * synchronous read-back alone costs ~5 ms on SwiftShader), written to webgl-training.md.
 * `--set` picks one set (default both).
 *
 * Node picks the workloads from the benchdnn lists (bench/workloads.ts) and starts karma with
 * bench/webgl_page.ts, which receives them through karma's client args, measures, and sends the
 * results back as one console line; this side prints the tables and writes the latest result of
 * each set into bench/results: webgl.{md,json,svg} (big set, uploaded inputs), webgl-packed.*
 * (big set, `--inputs packed`) and webgl-training.* (older runs stay in git history). On this project's machine WebGL runs on SwiftShader (the CPU): compare the
 * columns of one run with each other, never with the cpu bench.
 */
import * as fs from 'fs';
import * as path from 'path';

import {WEBGL_PROGRAM_NAMES} from '../kernels/webgl/plan/planner';
import {commandLine, oneOf, outOption, positiveInteger, regularExpression, valueOption} from './args';
import {runKarmaPage} from './karma_page';
import {sourceState} from './source_state';
import {barChartSvg, bytes, COLORS, gflops, markdownTable, ms, parseVariant, rate, rateRange, ratio, Timing, TuningVariant} from './report';
import {describeProblem, findProblem, loadWorkloadFile, Problem, toOpArguments} from './workloads';

/** Which built-in tfjs kernel computes the same gradient, for the page to call. */
export type BuiltIn = 'Conv2DBackpropFilter' | 'DepthwiseConv2dNativeBackpropFilter' | 'Conv3DBackpropFilterV2';

export interface WebglWorkload {
  name: string;
  label: string;
  source: string;
  shape: string;
  fileBatch: number;
  /** null: tfjs has no kernel for the case (dilated dense convolutions, 1-D). */
  builtIn: BuiltIn | null;
  /** Whether the issue's ≥ 10× target applies (ResNet-50 3x3 and 1x1, MobileNet depthwise). */
  key: boolean;
  args: ReturnType<typeof toOpArguments>;
  /** Which set the workload belongs to (see the header). */
  set: WorkloadSet;
  /**
   * Training set: inputs always packed, several calls per timed run (as many as fit in about
   * AMORTIZED_RUN_MS, at most MAX_CALLS_PER_RUN), one read-back, time divided by the calls.
   */
  amortized: boolean;
}

export type WorkloadSet = 'big' | 'training';

/**
 * How x and dy reach the kernels: 'uploaded' — made on the CPU and uploaded as they are
 * (unpacked textures: what tfjs's built-in kernels read, so only ours converts them);
 * 'packed' — made by a packed tfjs op, as in a model running with WEBGL_PACK (the default),
 * so only the built-in ones convert them.
 */
export type InputPlacement = 'uploaded' | 'packed';

export interface WebglPageInput {
  workloads: WebglWorkload[];
  runs: number;
  inputs: InputPlacement;
  /** Amortized workloads: a run's calls fill about `runMs`, at most `maxCalls`. */
  amortized: {runMs: number; maxCalls: number};
  /** `--variant FLAG=VALUE`: ours is also timed with this tfjs flag set, round-robin with the rest, the two taking turns going first (A/B in one run). */
  variant: TuningVariant | null;
}

export interface WebglImplResult {
  /** Milliseconds per call (amortized workloads: per run divided by callsPerRun). */
  timing: Timing;
  /** Back-to-back calls per timed run (1 unless the workload is amortized). */
  callsPerRun: number;
  warmUpMs: number;
  /** Shader programs compiled by the warm-up call, by program class. */
  programs: Record<string, number>;
  /** tfjs tensor bytes (distinct data buffers): high-water mark during the warm-up call above the bytes before it. */
  tfPeakBytes: number;
  /** Texture bytes in use: high-water mark during the warm-up call above those in use before it. */
  texturePeakBytes: number;
  /** Growth of the texture pool (allocated bytes) during the warm-up call. */
  textureAllocatedGrowth: number;
  /** Built-in only: max |ours − built-in| / max |built-in|. */
  difference: number | null;
}

export interface WebglWorkloadResult {
  name: string;
  flops: number;
  /** Programs compiled uploading x and dy to textures before the calls (not counted as the kernels'). */
  uploadPrograms: Record<string, number>;
  ours: WebglImplResult | null;
  /** Ours with the `--variant` flag set (its difference: against ours). */
  variant?: WebglImplResult | null;
  builtIn: WebglImplResult | null;
  /** Our kernel's first call at another batch: the programs it compiled. */
  secondBatch: {batch: number; programs: Record<string, number>; uploadPrograms: Record<string, number>; ms: number} | null;
}

export interface WebglPageResult {
  userAgent: string;
  renderer: string;
  webglVersion: number;
  packed: boolean;
  tfjs: string;
  runs: number;
  inputs: InputPlacement;
  workloads: WebglWorkloadResult[];
  variant?: WebglPageInput['variant'];
}

/**
 * Batches chosen, as issue 3 asks, so a call takes on the order of a second on SwiftShader
 * (tfjs's built-in: ~0.5–3 s): at batch 1 the MobileNet layers take ~20 ms, which measures
 * dispatch and read-back more than either kernel.
 */
const PICKS: Array<{file: string; name: string; batch: number; builtIn: BuiltIn | null; key?: boolean}> = [
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res2a_branch2b', batch: 4, builtIn: 'Conv2DBackpropFilter', key: true},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res3a_branch2b', batch: 4, builtIn: 'Conv2DBackpropFilter', key: true},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res2a_branch1', batch: 4, builtIn: 'Conv2DBackpropFilter', key: true},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res3a_branch2c', batch: 4, builtIn: 'Conv2DBackpropFilter', key: true},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:conv1', batch: 2, builtIn: 'Conv2DBackpropFilter'},
  {file: 'conv/shapes_mobilenet_dw', name: 'mobilenet:conv3_1/dw', batch: 8, builtIn: 'DepthwiseConv2dNativeBackpropFilter', key: true},
  {file: 'conv/shapes_mobilenet_dw', name: 'mobilenet:conv2_2/dw', batch: 8, builtIn: 'DepthwiseConv2dNativeBackpropFilter', key: true},
  {file: 'conv/shapes_googlenet_v1', name: 'googlenet_v1:inception_3a/3x3', batch: 4, builtIn: 'Conv2DBackpropFilter'},
  {file: 'conv/shapes_3d', name: '3d_conv_pad:1', batch: 4, builtIn: 'Conv3DBackpropFilterV2'},
  {file: 'conv/shapes_dilated', name: 'dilated_conv:22', batch: 8, builtIn: null},
  {file: 'deconv/shapes_2d', name: 'googlenet_v1:inception_3a/3x3', batch: 4, builtIn: 'Conv2DBackpropFilter'},
];

/** The command line (bench/args.ts); `npm run bench:webgl -- --help` prints it. */
const COMMAND = {
  usage: 'npm run bench:webgl [-- options]',
  summary: "Our webgl kernel against tfjs's built-in webgl filter gradients, round-robin in headless Chromium.\n" +
      'Writes webgl.{md,json,svg} (the big set; webgl-packed.* with --inputs packed) and webgl-training.{md,json,svg}.',
  options: {
    runs: valueOption('N', 'timed runs per workload and kernel', 5, positiveInteger),
    set: valueOption('SET', "which workloads: 'big', 'training' or 'all'", 'all' as 'all' | WorkloadSet, oneOf('all', 'big', 'training')),
    only: valueOption('REGEX', 'only the workloads whose name matches', null as RegExp | null, regularExpression),
    inputs: valueOption('HOW', "the big set's x and dy: 'uploaded' (unpacked textures) or 'packed' (outputs of a packed op)",
        'uploaded' as InputPlacement, oneOf('uploaded', 'packed')),
    variant: valueOption('FLAG=VALUE', 'also time ours with this tfjs flag set (an A/B in one run)', null as TuningVariant | null,
        text => parseVariant(text)),
    out: outOption(),
  },
};

/** The programs of this package's webgl kernel, from its passes (the others in a call's counts are tfjs's). */
const OWN_PROGRAMS = new Set(WEBGL_PROGRAM_NAMES);

const totalPrograms = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** "3: FilterGradientProgram 1, PackProgram 2", or "0". */
function programList(counts: Record<string, number>): string {
  const n = totalPrograms(counts);
  if (n === 0) return '0';
  return `${n}: ${Object.entries(counts).map(([name, count]) => `${name.replace(/Program$/, '')} ${count}`).join(', ')}`;
}

const shortName = (name: string) =>
    name.replace(/^resnet_50:/, 'ResNet-50 ').replace(/^mobilenet:/, 'MobileNet ').replace(/^googlenet_v1:/, 'GoogLeNet ');

function report(workloads: WebglWorkload[], page: WebglPageResult, seconds: number): {markdown: string; svg: string} {
  const out: string[] = [];
  out.push('# Filter-gradient benchmark: webgl\n');
  out.push(`Code: ${sourceState()}.`);
  const flags = [page.runs !== 5 ? `--runs ${page.runs}` : '', page.inputs !== 'uploaded' ? `--inputs ${page.inputs}` : ''].filter(Boolean);
  out.push(`\`npm run bench:webgl${flags.length > 0 ? ` -- ${flags.join(' ')}` : ''}\`; ${
      new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${seconds.toFixed(0)} s. Headless ${
      /Chrome\/[\d.]+/.exec(page.userAgent)?.[0] ?? page.userAgent}, renderer ${page.renderer}, WebGL ${page.webglVersion}${
      page.packed ? ' (packed)' : ''}, tfjs ${page.tfjs}.`);
  out.push(`Our kernel and tfjs's built-in one on the same tensors, ${page.inputs === 'uploaded' ?
      'made on the CPU and uploaded as they are (unpacked textures: tfjs\'s built-in kernels read them as they are, ours packs them on every call)' :
      'made by a packed tfjs op, as a model\'s activations are under WEBGL_PACK (packed textures: ours reads them as they are, tfjs\'s built-in kernels unpack them on every call)'}` +
           `: 1 warm-up each (shader compiles; it also measures memory), ` +
           `then ${page.runs} timed runs round-robin; a run is one call until its result is read back. GFLOP/s = ` +
           `2·N·O·(C/G)·K·out-spatial / median time; "(a–b)" is the slowest–fastest run. Workloads from benchdnn's lists, ` +
           `batch stated. SwiftShader runs WebGL on the (shared, noisy) CPU: compare columns of one run only.\n`);

  const byName = new Map(page.workloads.map(r => [r.name, r]));
  const rows: string[][] = [];
  const memRows: string[][] = [];
  const keyLines: string[] = [];
  let slower = 0;
  for (const w of workloads) {
    const r = byName.get(w.name);
    if (!r || !r.ours) continue;
    const speedUp = r.builtIn ? r.builtIn.timing.median / r.ours.timing.median : NaN;
    if (r.builtIn && speedUp < 1) slower++;
    if (w.key && r.builtIn) {
      keyLines.push(`- ${w.label}: **${ratio(speedUp)}** tfjs's ${w.builtIn} (${rate(gflops(r.flops, r.ours.timing.median))} vs ${
          rate(gflops(r.flops, r.builtIn.timing.median))} GFLOP/s; target ≥ 10×); fastest runs ${
          ratio(r.builtIn.timing.min / r.ours.timing.min)}`);
    }
    rows.push([
      w.label, `${w.args.batch} (file ${w.fileBatch})`, w.shape, (r.flops / 1e9).toFixed(3), rateRange(r.flops, r.ours.timing),
      w.builtIn ?? 'none in tfjs', r.builtIn ? rateRange(r.flops, r.builtIn.timing) : '–',
      r.builtIn ? (w.key ? `**${ratio(speedUp)}**` : ratio(speedUp)) : '–',
      r.builtIn?.difference == null ? '–' : r.builtIn.difference.toExponential(1),
    ]);
    memRows.push([
      w.label, programList(r.ours.programs),
      r.secondBatch ? `${programList(r.secondBatch.programs)} (batch ${r.secondBatch.batch})` : '–',
      r.builtIn ? programList(r.builtIn.programs) : '–', programList(r.uploadPrograms), bytes(r.ours.tfPeakBytes), bytes(r.ours.texturePeakBytes),
      bytes(r.ours.textureAllocatedGrowth), r.builtIn ? bytes(r.builtIn.tfPeakBytes) : '–',
      r.builtIn ? bytes(r.builtIn.texturePeakBytes) : '–',
    ]);
  }
  out.push('## Key figures (issue 7)\n');
  out.push(...keyLines);
  const compared = page.workloads.filter(r => r.builtIn).length;
  out.push(`- Slower than the built-in on ${slower} of the ${compared} workloads it can run (target: none).`);
  // Our own shaders, apart from the conversions tfjs runs around them (Pack, Unpack: keyed by shape).
  const ownPrograms = (counts: Record<string, number>) =>
      Object.entries(counts).filter(([name]) => OWN_PROGRAMS.has(name)).reduce((sum, [, n]) => sum + n, 0);
  const recompiled = page.workloads.filter(r => ownPrograms(r.secondBatch?.programs ?? {}) > 0);
  out.push(`- Shaders of ours compiled on the first call at another batch size (same workload, batch + 1, inputs ` +
           `already uploaded; tfjs's own pack/unpack programs, keyed by shape, not counted): ${
               recompiled.length === 0 ?
                   '0 on every workload — no recompilation per batch size' :
                   `${recompiled.length} of ${page.workloads.length} workloads recompile (${
                       recompiled.map(r => `${shortName(r.name)} ${ownPrograms(r.secondBatch!.programs)}`).join(', ')
                   }): their cache keys include the tensor shapes (see the table below)`}.\n`);
  out.push('## Throughput (GFLOP/s: median (slowest–fastest))\n');
  out.push(markdownTable(
      ['workload', 'batch', 'shape (C→O, in→out, kernel, stride, pads)', 'GFLOP', 'ours GFLOP/s', 'tfjs built-in',
       'built-in GFLOP/s', 'speed-up', 'max rel. diff'],
      rows, [false, true, false, true, true, false, true, true, true]));
  out.push('\nspeed-up = built-in median time / ours. "none in tfjs": tfjs has no webgl kernel for a dilated dense ' +
           'filter gradient. The deconvolution is compared with Conv2DBackpropFilter on x and dy swapped (what ' +
           "tfjs's conv2dTranspose gradient runs).\n");
  out.push('## Shader programs and memory (warm-up call)\n');
  out.push(markdownTable(
      ['workload', 'ours: programs compiled', 'ours, then at another batch', 'built-in: programs', 'input upload: programs',
       'ours: tf peak', 'ours: textures peak', 'ours: texture pool growth', 'built-in: tf peak', 'built-in: textures peak'],
      memRows, [false, false, false, false, false, true, true, true, true, true]));
  out.push('\nPrograms: entries added to the webgl backend\'s binary cache by the call — tfjs compiles one program per ' +
           'cache key, which is the program class, its shader text and (without shape uniforms) the input and output ' +
           'shapes — by program class, plus the multi-target shaders our kernel compiles itself (DenseLoops, DepthwiseLoops: ' +
           'outside tfjs\'s cache, keyed by their text alone). x and dy are uploaded to textures before the calls ("input upload": tfjs\'s ' +
           'encode programs, keyed by shape), so the kernels\' counts are their own, including any pack/unpack ' +
           'programs tfjs runs around them. "ours, then at another batch": our kernel\'s first call on the same ' +
           'workload with batch + 1 (new tensors, uploaded first). ' +
           'tf peak: the high-water mark of tfjs tensor bytes during the call, each data buffer counted once, above the ' +
           'bytes before it. ' +
           'textures peak: texture bytes in use (allocated − pooled free), high-water mark during the call above before it ' +
           '(tracked at every texture acquisition). texture pool growth: new texture bytes allocated by the call.\n');
  out.push('![GFLOP/s per workload, ours and tfjs built-in on webgl](webgl.svg)');

  const svg = gflopsChart(
      'Filter gradient, webgl (SwiftShader): GFLOP/s (median), log scale',
      `${/SwiftShader/.test(page.renderer) ? 'SwiftShader' : page.renderer.slice(0, 60)}, WebGL ${page.webglVersion}; ${
          page.runs} runs after 1 warm-up; ${sourceState()}; batch after ×`,
      workloads, page);
  return {markdown: out.join('\n') + '\n', svg};
}

/** The training set's targets (issue 15): speed-up over the built-in, and GFLOP/s on layers of ≥ 10 MFLOP. */
export const TRAINING_TARGETS = {speedUp: 8, smallSpeedUp: 4, smallFlops: 2e6, gflops: 3, gflopsFromFlops: 10e6};

const speedUpTarget = (flops: number) => flops < TRAINING_TARGETS.smallFlops ? TRAINING_TARGETS.smallSpeedUp : TRAINING_TARGETS.speedUp;

/** tfjs's kernel for a training-set problem: depthwise where each group has one channel on both sides. */
/** The bar chart of both reports: GFLOP/s of ours and of tfjs's built-in per workload that ran. */
function gflopsChart(title: string, subtitle: string, workloads: WebglWorkload[], page: WebglPageResult): string {
  const byName = new Map(page.workloads.map(r => [r.name, r]));
  return barChartSvg({
    title,
    subtitle,
    unit: 'GFLOP/s (log scale)',
    series: [{name: 'ours (webgl)', color: COLORS.webgl}, {name: "tfjs built-in (webgl)", color: COLORS.builtIn}],
    missing: 'no tfjs kernel for this case',
    groups: workloads.flatMap(w => {
      const r = byName.get(w.name);
      if (!r || !r.ours) return [];
      return [{
        label: `${w.label} ×${w.args.batch}`,
        values: [gflops(r.flops, r.ours.timing.median), r.builtIn ? gflops(r.flops, r.builtIn.timing.median) : NaN],
      }];
    }),
  });
}

function builtInFor(problem: Problem): BuiltIn | null {
  if (problem.spatialRank !== 2 || problem.kind !== 'conv') return null;
  if (problem.groups === 1) return 'Conv2DBackpropFilter';
  return problem.groups === problem.ic && problem.groups === problem.oc ? 'DepthwiseConv2dNativeBackpropFilter' : null;
}

function trainingReport(workloads: WebglWorkload[], page: WebglPageResult, seconds: number): {markdown: string; svg: string} {
  const out: string[] = [];
  out.push('# Filter-gradient benchmark: webgl, the layers tfjs users train\n');
  out.push(`Code: ${sourceState()}.`);
  out.push(`\`npm run bench:webgl -- --set training${page.runs !== 5 ? ` --runs ${page.runs}` : ''}\` (also part of the ` +
           `default \`npm run bench:webgl\`); ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${
               seconds.toFixed(0)} s for the whole run. Headless ${/Chrome\/[\d.]+/.exec(page.userAgent)?.[0] ?? page.userAgent}, renderer ${
               page.renderer}, WebGL ${page.webglVersion}${page.packed ? ' (packed)' : ''}, tfjs ${page.tfjs}.`);
  out.push(`Every layer of \`workloads/conv/shapes_tfjs_training\` at its file's batch (the training batch), ours and ` +
           `tfjs's built-in webgl kernel on the same tensors, made by a packed tfjs op as a model's activations are ` +
           `(ours reads them as they are, tfjs's built-in kernels unpack them on every call). Small calls amortized: ` +
           `after 1 warm-up (shader compiles), a timed run is as many back-to-back calls as fit in about ${
               AMORTIZED_RUN_MS} ms (at most ${MAX_CALLS_PER_RUN}) with one read-back of the last result, divided by their ` +
           `number (a synchronous read-back alone costs ~5 ms on SwiftShader); ${page.runs} timed runs round-robin, ` +
           `medians. SwiftShader runs WebGL on the (shared, noisy) CPU: compare columns of one run only.\n`);
  out.push(`Targets (issue 15): at least ${TRAINING_TARGETS.speedUp}× the built-in on every layer (at least ${
               TRAINING_TARGETS.smallSpeedUp}× on layers under ${TRAINING_TARGETS.smallFlops / 1e6} MFLOP), and at least ${
               TRAINING_TARGETS.gflops} GFLOP/s on every layer of ≥ ${TRAINING_TARGETS.gflopsFromFlops / 1e6} MFLOP.\n`);
  const byName = new Map(page.workloads.map(r => [r.name, r]));
  const rows: string[][] = [];
  const speedUps: number[] = [];
  const missedSpeedUp: string[] = [];
  const missedRate: string[] = [];
  let rateLayers = 0;
  const mark = (held: boolean) => held ? '✓' : '✗';
  const variantLabel = page.variant ? `${page.variant.flag}=${page.variant.value}` : null;
  for (const w of workloads) {
    const r = byName.get(w.name);
    if (!r || !r.ours) continue;
    const oursMs = r.ours.timing.median;
    const oursRate = gflops(r.flops, oursMs);
    const speedUp = r.builtIn ? r.builtIn.timing.median / oursMs : NaN;
    const target = speedUpTarget(r.flops);
    const speedHeld = r.builtIn ? speedUp >= target : null;
    const rateApplies = r.flops >= TRAINING_TARGETS.gflopsFromFlops;
    if (rateApplies) rateLayers++;
    const rateHeld = rateApplies ? oursRate >= TRAINING_TARGETS.gflops : null;
    if (r.builtIn) speedUps.push(speedUp);
    if (speedHeld === false) missedSpeedUp.push(`${w.label} ${ratio(speedUp)}`);
    if (rateHeld === false) missedRate.push(`${w.label} ${rate(oursRate)}`);
    rows.push([
      w.label, w.shape, String(w.args.batch), (r.flops / 1e6).toFixed(r.flops < 10e6 ? 2 : 1),
      `${ms(oursMs)} (×${r.ours.callsPerRun})`, rate(oursRate),
      r.builtIn ? `${ms(r.builtIn.timing.median)} (×${r.builtIn.callsPerRun})` : '–',
      r.builtIn ? `${ratio(speedUp)} ${mark(speedHeld!)}` : '–', r.builtIn ? `≥ ${target}×` : '–',
      rateHeld === null ? '–' : mark(rateHeld),
      r.builtIn?.difference == null ? '–' : r.builtIn.difference.toExponential(1),
      ...(variantLabel ? [r.variant ? `${ms(r.variant.timing.median)} (${ratio(r.variant.timing.median / oursMs)})` : '–'] : []),
    ]);
  }
  const sorted = [...speedUps].sort((a, b) => a - b);
  const median = sorted.length === 0 ? NaN : sorted.length % 2 ? sorted[sorted.length >> 1] :
      (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  out.push('## Summary\n');
  out.push(`- Speed-up over tfjs's built-in: min **${ratio(sorted[0])}**, median **${ratio(median)}**, max ${
      ratio(sorted[sorted.length - 1])} over ${sorted.length} layers.`);
  out.push(`- Speed-up target held on ${sorted.length - missedSpeedUp.length} of ${sorted.length} layers${
      missedSpeedUp.length > 0 ? ` (missed: ${missedSpeedUp.join(', ')})` : ''}.`);
  out.push(`- ≥ ${TRAINING_TARGETS.gflops} GFLOP/s held on ${rateLayers - missedRate.length} of the ${rateLayers} layers of ≥ ${
      TRAINING_TARGETS.gflopsFromFlops / 1e6} MFLOP${missedRate.length > 0 ? ` (missed: ${missedRate.join(', ')})` : ''}.\n`);
  out.push('## Per layer (per call, medians)\n');
  out.push(markdownTable(
      ['layer', 'shape (C→O, in→out, kernel, stride, pads)', 'batch', 'MFLOP', 'ours ms (calls/run)', 'ours GFLOP/s',
       'built-in ms (calls/run)', 'speed-up', 'target', '≥ 3 GFLOP/s', 'max rel. diff',
       ...(variantLabel ? [`ours with ${variantLabel} ms (its time / ours)`] : [])],
      rows, [false, false, true, true, true, true, true, true, true, false, true, true]));
  out.push(`\nbuilt-in: ${[...new Set(workloads.map(w => w.builtIn).filter(Boolean))].join(' / ')} (depthwise layers: ` +
           `the depthwise one). GFLOP/s = 2·N·O·(C/G)·K·out-spatial / time per call. "–" under ≥ 3 GFLOP/s: the layer ` +
           `has under ${TRAINING_TARGETS.gflopsFromFlops / 1e6} MFLOP. A name's \`*5\` says the network has the layer 5 times.\n`);
  out.push('![GFLOP/s per layer, ours and tfjs built-in on webgl](webgl-training.svg)');
  const svg = gflopsChart(
      'Filter gradient, webgl (SwiftShader), the layers tfjs users train: GFLOP/s (median), log scale',
      `packed inputs, amortized calls; ${page.runs} runs after 1 warm-up; ${sourceState()}; batch after ×`, workloads, page);
  return {markdown: out.join('\n') + '\n', svg};
}

/** Amortized runs: calls per run so that a run takes about this long (at least one call). */
export const AMORTIZED_RUN_MS = 300;
export const MAX_CALLS_PER_RUN = 32;

function trainingWorkloads(only: RegExp | null): WebglWorkload[] {
  return loadWorkloadFile('conv/shapes_tfjs_training')
      .filter(problem => only === null || only.test(problem.name))
      .map(problem => ({
        name: problem.name,
        label: problem.name.replace(/^resnet_50:/, 'ResNet-50 ').replace(/^mobilenet:/, 'MobileNet '),
        source: `${problem.source}:${problem.line}`,
        shape: describeProblem(problem),
        fileBatch: problem.batch,
        builtIn: builtInFor(problem),
        key: false,
        args: toOpArguments(problem),
        set: 'training' as const,
        amortized: true,
      }));
}

async function main() {
  const options = commandLine(COMMAND);
  const start = performance.now();
  sourceState();  // the code as the run starts (cached)
  const picks = options.set === 'training' ? [] : PICKS.filter(pick => options.only === null || options.only.test(pick.name));
  const big: WebglWorkload[] = picks.map(pick => {
    const problem = findProblem(loadWorkloadFile(pick.file), pick.name);
    return {
      name: `${problem.name}${problem.kind === 'deconv' ? ' (deconv)' : ''}`,
      label: `${shortName(problem.name)}${problem.kind === 'deconv' ? ' (deconv)' : ''}`,
      source: `${problem.source}:${problem.line}`,
      shape: describeProblem(problem),
      fileBatch: problem.batch,
      builtIn: pick.builtIn,
      key: pick.key ?? false,
      args: toOpArguments(problem, pick.batch),
      set: 'big' as const,
      amortized: false,
    };
  });
  const training = options.set === 'big' ? [] : trainingWorkloads(options.only);
  // Training names are distinct from the big set's ('mb1'/'mb2' suffixes, 'tfjs-' prefixes).
  const workloads = [...big, ...training];
  if (workloads.length === 0) throw new Error(`--only ${options.only}: no workload matches in set '${options.set}'`);
  const root = path.resolve(__dirname, '..');
  const page = path.join(root, 'bench', 'webgl_page.ts');
  const input: WebglPageInput = {workloads, runs: options.runs, inputs: options.inputs, amortized: {runMs: AMORTIZED_RUN_MS, maxCalls: MAX_CALLS_PER_RUN}, variant: options.variant};
  const {result, exitCode} = await runKarmaPage<WebglPageResult>([page], input, 'BENCH_RESULT');
  if (result === null) {
    console.error('the page sent no results');
    process.exit(exitCode || 1);
  }
  const seconds = (performance.now() - start) / 1000;
  const pageResult = result;
  // One file set per bench: the latest run of each is kept (older ones in git history).
  const bigFile = options.inputs === 'packed' ? 'webgl-packed' : 'webgl';
  const sets: Array<[string, WebglWorkload[], typeof report]> = [[bigFile, big, report], ['webgl-training', training, trainingReport]];
  for (const [file, members, write] of sets) {
    if (members.length === 0) continue;
    const names = new Set(members.map(w => w.name));
    const part = {...pageResult, workloads: pageResult.workloads.filter(r => names.has(r.name))};
    const {markdown, svg} = write(members, part, seconds);
    console.log(`\n${markdown}`);
    if (options.out !== null) {
      fs.mkdirSync(options.out, {recursive: true});
      fs.writeFileSync(path.join(options.out, `${file}.md`), markdown);
      fs.writeFileSync(path.join(options.out, `${file}.svg`), svg);
      fs.writeFileSync(path.join(options.out, `${file}.json`), `${JSON.stringify(part, null, 1)}\n`);
      console.error(`wrote ${path.relative(process.cwd(), path.join(options.out, `${file}.md`))}, ${file}.svg, ${file}.json`);
    }
  }
  process.exit(exitCode);
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});

/**
 * What `npm run bench:training` measures on one backend, shared by its Node half (cpu, wasm) and
 * its browser half (webgl, webgpu), so it imports no Node module: `model.trainOnBatch` of one of
 * bench/training_models.ts's models with tfjs's own gradients and with this package's drop-in
 * ones, on the same model and batch, steps alternating between the two after a warm-up, and one
 * step of each under tf.profile for each kernel's share.
 */
import * as tf from '@tensorflow/tfjs-core';

import {
  CONV_BACKPROP_FILTERS_THREADS, ConvolutionBackpropFilters, ConvolutionBackwardWeights, ConvTransposeBackpropFilters,
  ConvTransposeBackwardWeights, installDropInGradients, uninstallDropInGradients,
} from '../kernels/index';

import {summarize, Timing} from './report';
import {buildTrainingModel, TrainingModel, trainingBatch} from './training_models';

/**
 * tfjs's own gradients; the drop-in ones (on cpu and wasm with CONV_BACKPROP_FILTERS_THREADS as
 * set); the drop-in ones with CONV_BACKPROP_FILTERS_THREADS 1, for a paired threads A/B.
 */
export type GradientConfig = 'tfjs' | 'dropIn' | 'dropInOneThread';
export const GRADIENT_CONFIGS: readonly GradientConfig[] = ['tfjs', 'dropIn'];
/** With the drop-in on 1 thread beside the N-thread one (bench:training --threads-ab). */
export const THREADS_AB_CONFIGS: readonly GradientConfig[] = ['tfjs', 'dropIn', 'dropInOneThread'];

/** The kernels that compute a filter gradient: tfjs's own and this package's (under both names). */
export const FILTER_GRADIENT_KERNELS: ReadonlySet<string> = new Set([
  'Conv2DBackpropFilter', 'DepthwiseConv2dNativeBackpropFilter', 'Conv3DBackpropFilterV2',
  ConvolutionBackpropFilters, ConvTransposeBackpropFilters, ConvolutionBackwardWeights, ConvTransposeBackwardWeights,
]);

/** How many steps to run: warm-up steps per configuration, then alternating pairs within a time budget. */
export interface StepPlan {
  readonly warmUpSteps: number;
  readonly minPairs: number;
  readonly maxPairs: number;
  /** Time for the timed pairs: another pair starts while the pairs so far and one more fit in it (at least minPairs run). */
  readonly budgetMs: number;
  /**
   * 'every-step': every timed step runs under tf.profile (on cpu and wasm its cost is a clock
   * read per kernel); 'extra-step': one more step of each configuration does, after the timed
   * ones (on webgl without GPU timer queries tf.profile reads back each kernel's output).
   */
  readonly profile: 'every-step' | 'extra-step';
}

export interface KernelTime {
  readonly name: string;
  readonly ms: number;
  readonly calls: number;
}

export interface StepProfile {
  /** Wall time of the profiled step (with the profiler's own overhead: see `kernelTiming`). */
  readonly wallMs: number;
  /** Sum of the outermost kernels' times: the step's kernel time. */
  readonly kernelMs: number;
  /** Filter-gradient kernels (FILTER_GRADIENT_KERNELS), including any kernels they run inside. */
  readonly filterGradientMs: number;
  readonly filterGradientKernels: readonly KernelTime[];
  /** Kernels by their own time (excluding kernels run inside them), largest first. */
  readonly topKernels: readonly KernelTime[];
  readonly kernelCalls: number;
}

export interface ConfigResult {
  /** The error of the first step that failed; the configuration's other fields are then empty. */
  readonly error: string | null;
  readonly warmUpMs: readonly number[];
  readonly stepMs: readonly number[];
  readonly timing: Timing | null;
  /** The profiled step (with 'every-step': the timed step nearest the median). */
  readonly profile: StepProfile | null;
  /** With 'every-step': the filter-gradient kernels' time over the timed steps. */
  readonly filterGradientTiming: Timing | null;
  /** The loss of the last step (a finite number when the step trained). */
  readonly lastLoss: number | null;
}

export interface ModelResult {
  readonly model: string;
  readonly backend: string;
  readonly batch: number;
  /** Timed rounds: each runs one step of every configuration (a pair with two). */
  readonly pairs: number;
  /** The configurations run (tfjs and dropIn always; dropInOneThread with --threads-ab). */
  readonly configs: Readonly<Partial<Record<GradientConfig, ConfigResult>>>;
  /**
   * Tensors left over after the model, its optimizer and the batch were disposed, not counting
   * those a failing step left behind (tfjs's training function does not clean up after a throw).
   */
  readonly leakedTensors: number;
  /** Tensors left behind by failing steps. */
  readonly tensorsLeftByFailures: number;
  readonly seconds: number;
}

/** Installs the gradients of `config`; the drop-in's thread count is `dropInThreads`, or 1 for dropInOneThread. */
export function setGradientConfig(config: GradientConfig, dropInThreads?: number): void {
  if (config === 'tfjs') {
    uninstallDropInGradients();
    return;
  }
  installDropInGradients();
  if (dropInThreads !== undefined) tf.env().set(CONV_BACKPROP_FILTERS_THREADS, config === 'dropInOneThread' ? 1 : dropInThreads);
}

const errorText = (e: unknown) => String((e as Error)?.message ?? e).split('\n')[0].slice(0, 300);

interface EngineInternals {
  profiler: {profileKernel: (name: string, inputs: unknown, f: () => unknown) => unknown};
  state: {kernelDepth: number};
}

/**
 * One step under tf.profile. The engine records every kernel, also those a kernel runs inside
 * itself (a composite kernel's slices, a custom-gradient op's kernels), each timed with what runs
 * inside it; the profiler's kernel hook notes each one's nesting depth (the engine's kernelDepth
 * while it runs), in the order the profile lists them (a kernel is listed when it returns), so
 * that own times and the outermost kernels' sum can be told apart.
 */
async function profiledStep(step: () => Promise<number>): Promise<{profile: StepProfile; stepMs: number; loss: number}> {
  const engine = tf.engine() as unknown as EngineInternals;
  const profiler = engine.profiler;
  const original = profiler.profileKernel;
  const depths: Array<{name: string; depth: number}> = [];
  profiler.profileKernel = function(this: unknown, name, inputs, f) {
    const profile = original.call(this, name, inputs, f);
    depths.push({name, depth: engine.state.kernelDepth});
    return profile;
  };
  let wallMs = 0;
  let loss = NaN;
  let info: Awaited<ReturnType<typeof tf.profile>>;
  try {
    info = await tf.profile(async () => {
      const start = performance.now();
      loss = await step();
      wallMs = performance.now() - start;
      return [];
    });
  } finally {
    profiler.profileKernel = original;
  }
  const kernels = info.kernels.map(k => ({name: k.name, ms: k.kernelTimeMs as number}));
  const aligned = depths.length === kernels.length && depths.every((d, i) => d.name === kernels[i].name);
  if (!aligned) throw new Error(`tf.profile listed ${kernels.length} kernels, the profiler hook saw ${depths.length}`);
  // Post-order: a kernel's children are the entries one level deeper listed since its previous sibling.
  const own = kernels.map(k => k.ms);
  const minDepth = Math.min(...depths.map(d => d.depth));
  const openChildren: number[] = [];  // per level: summed time of the kernels listed there since their parent
  const filterGradientChildren: number[] = [];  // per level: filter-gradient time among those kernels and theirs
  let kernelMs = 0;
  let filterGradientMs = 0;
  const filterGradient = new Map<string, {ms: number; calls: number}>();
  depths.forEach(({name, depth}, i) => {
    const level = depth - minDepth;
    const ms = kernels[i].ms;
    own[i] = ms - (openChildren[level + 1] ?? 0);
    const nestedFilterGradientMs = filterGradientChildren[level + 1] ?? 0;
    openChildren[level + 1] = 0;
    filterGradientChildren[level + 1] = 0;
    openChildren[level] = (openChildren[level] ?? 0) + ms;
    if (level === 0) kernelMs += ms;
    if (FILTER_GRADIENT_KERNELS.has(name)) {
      // Counted whole, with what runs inside it (a filter-gradient kernel inside it is not counted twice).
      filterGradientMs += ms - nestedFilterGradientMs;
      const entry = filterGradient.get(name) ?? {ms: 0, calls: 0};
      entry.ms += ms - nestedFilterGradientMs;
      entry.calls++;
      filterGradient.set(name, entry);
      filterGradientChildren[level] = (filterGradientChildren[level] ?? 0) + ms;
    } else {
      filterGradientChildren[level] = (filterGradientChildren[level] ?? 0) + nestedFilterGradientMs;
    }
  });
  const byName = new Map<string, {ms: number; calls: number}>();
  kernels.forEach((k, i) => {
    const entry = byName.get(k.name) ?? {ms: 0, calls: 0};
    entry.ms += own[i];
    entry.calls++;
    byName.set(k.name, entry);
  });
  const sorted = (m: Map<string, {ms: number; calls: number}>) =>
      [...m].map(([name, {ms, calls}]) => ({name, ms, calls})).sort((a, b) => b.ms - a.ms);
  return {
    profile: {
      wallMs, kernelMs, filterGradientMs, filterGradientKernels: sorted(filterGradient), topKernels: sorted(byName).slice(0, 8),
      kernelCalls: kernels.length,
    },
    stepMs: wallMs,
    loss,
  };
}

/**
 * Trains `spec` at `batch` on the current backend with each of `configs`, as `plan` says; `log`
 * gets one line per phase. Leaves tfjs's own gradients installed and CONV_BACKPROP_FILTERS_THREADS
 * as it found it. `inputShape` replaces the model's example shape (the spec's smaller one).
 */
export async function runTrainingModel(
    spec: TrainingModel, batch: number, plan: StepPlan, log: (line: string) => void,
    inputShape: readonly number[] = spec.inputShape, configs: readonly GradientConfig[] = GRADIENT_CONFIGS): Promise<ModelResult> {
  const dropInThreads = configs.includes('dropInOneThread') ? tf.env().getNumber(CONV_BACKPROP_FILTERS_THREADS) : undefined;
  const start = performance.now();
  const tensorsBefore = tf.memory().numTensors;
  const model = buildTrainingModel(spec, inputShape);
  const {x, y} = trainingBatch(spec, batch, inputShape);
  const lastWeight = model.trainableWeights[model.trainableWeights.length - 1];
  // trainOnBatch returns once the loss is read back; on a GPU backend the weight updates queued
  // after it may still run. Reading the last updated weight waits for them (commands run in order).
  const step = async () => {
    const loss = await model.trainOnBatch(x, y) as number;
    await (lastWeight.read() as tf.Tensor).data();
    return loss;
  };
  type State = {error: string | null; warmUpMs: number[]; stepMs: number[]; profiles: StepProfile[]; lastLoss: number | null};
  const state = Object.fromEntries(configs.map(c => [c, {error: null, warmUpMs: [], stepMs: [], profiles: [], lastLoss: null}])) as
      unknown as Record<GradientConfig, State>;
  const plainStep = async () => {
    const t0 = performance.now();
    const loss = await step();
    return {stepMs: performance.now() - t0, loss, profile: null};
  };
  const timedStep = async (config: GradientConfig, profiled: boolean) => {
    setGradientConfig(config, dropInThreads);
    const {stepMs, loss, profile} = profiled ? await profiledStep(step) : await plainStep();
    state[config].lastLoss = loss;
    if (profile !== null) state[config].profiles.push(profile);
    return stepMs;
  };
  let tensorsLeftByFailures = 0;
  let pairs = 0;
  try {
    for (const config of configs) {
      for (let i = 0; i < plan.warmUpSteps && state[config].error === null; i++) {
        const tensors = tf.memory().numTensors;
        try {
          state[config].warmUpMs.push(await timedStep(config, false));
        } catch (e) {
          state[config].error = errorText(e);
          log(`  ${spec.id} ${config}: ${String((e as Error)?.stack ?? e)}`);
          tensorsLeftByFailures += tf.memory().numTensors - tensors;
        }
      }
      log(`  ${spec.id} ${config}: warm-up ${state[config].error ?? state[config].warmUpMs.map(ms => `${ms.toFixed(0)} ms`).join(', ')}`);
    }
    const running = configs.filter(c => state[c].error === null);
    const pairsStart = performance.now();
    let lastPairMs = 0;
    while (running.length > 0 && pairs < plan.maxPairs &&
           (pairs < plan.minPairs || performance.now() - pairsStart + lastPairMs <= plan.budgetMs)) {
      // ABBA order (ABCCBA with three): drift in the machine's load hits every configuration alike.
      const order = pairs % 2 === 0 ? running : [...running].reverse();
      const pairStart = performance.now();
      for (const config of order) state[config].stepMs.push(await timedStep(config, plan.profile === 'every-step'));
      lastPairMs = performance.now() - pairStart;
      pairs++;
    }
    if (plan.profile === 'extra-step') {
      for (const config of running) {
        try {
          await timedStep(config, true);
        } catch (e) {
          log(`  ${spec.id} ${config}: tf.profile failed: ${errorText(e)}`);
        }
      }
    }
  } finally {
    setGradientConfig('tfjs');
    if (dropInThreads !== undefined) tf.env().set(CONV_BACKPROP_FILTERS_THREADS, dropInThreads);
    tf.dispose([x, y]);
    model.optimizer.dispose();
    model.dispose();
  }
  /** The profile to show: the only one, or that of the timed step nearest the median. */
  const representative = (c: GradientConfig): StepProfile | null => {
    const {profiles, stepMs} = state[c];
    if (profiles.length === 0) return null;
    if (profiles.length === 1 || profiles.length !== stepMs.length) return profiles[profiles.length - 1];
    const median = summarize(stepMs).median;
    let best = 0;
    stepMs.forEach((ms, i) => {
      if (Math.abs(ms - median) < Math.abs(stepMs[best] - median)) best = i;
    });
    return profiles[best];
  };
  const results = Object.fromEntries(configs.map(c => [c, {
    error: state[c].error,
    warmUpMs: state[c].warmUpMs,
    stepMs: state[c].stepMs,
    timing: state[c].stepMs.length > 0 ? summarize(state[c].stepMs) : null,
    profile: representative(c),
    filterGradientTiming: plan.profile === 'every-step' && state[c].profiles.length > 0 ?
        summarize(state[c].profiles.map(p => p.filterGradientMs)) : null,
    lastLoss: state[c].lastLoss,
  }])) as unknown as Partial<Record<GradientConfig, ConfigResult>>;
  const result: ModelResult = {
    model: spec.id, backend: tf.getBackend(), batch, pairs, configs: results,
    leakedTensors: tf.memory().numTensors - tensorsBefore - tensorsLeftByFailures, tensorsLeftByFailures,
    seconds: (performance.now() - start) / 1000,
  };
  const median = (c: GradientConfig) => results[c]?.timing ? `${results[c]!.timing!.median.toFixed(0)} ms` : 'failed';
  log(`  ${spec.id} on ${result.backend}, batch ${batch}: ${pairs} pairs, tfjs ${median('tfjs')}, drop-in ${median('dropIn')}${
      configs.includes('dropInOneThread') ? `, drop-in on 1 thread ${median('dropInOneThread')}` : ''} (${result.seconds.toFixed(0)} s)`);
  return result;
}

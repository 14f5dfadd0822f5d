/**
 * The page of `npm run bench:webgpu` (bench/webgpu.ts): receives the workloads as karma client
 * args, times ours and tfjs-webgpu's built-in kernel on each, and logs one BENCH_RESULT line.
 */
import * as tf from '@tensorflow/tfjs-core';

import {convolutionBackpropFilters, convTransposeBackpropFilters} from '../kernels/index';
import {useWebgpuBackend} from '../test/helpers/webgpu_backend';
import {withVariant} from './page_variant';
import type {WebgpuImplResult, WebgpuPageInput, WebgpuPageResult, WebgpuWorkload} from './webgpu';

declare const __karma__: {config: {args?: unknown[]}};

const input = JSON.parse(String(__karma__.config.args?.[0])) as WebgpuPageInput;

function ours(w: WebgpuWorkload, x: tf.Tensor, dy: tf.Tensor): tf.Tensor {
  return w.args.kind === 'conv' ? convolutionBackpropFilters(x, dy, w.args.attrs) : convTransposeBackpropFilters(x, dy, w.args.attrs);
}

/** tfjs's own kernel for the same gradient (XIO = tfjs's [k…, C/G, O]; depthwise [kh, kw, C, 1]). */
function builtIn(w: WebgpuWorkload, x: tf.Tensor, dy: tf.Tensor): tf.Tensor {
  const {attrs} = w.args;
  const kernel = attrs.filterShape as number[];
  const explicit = [[0, 0], ...attrs.padsBegin!.map((p, i) => [p, attrs.padsEnd![i]]), [0, 0]];
  const c = x.shape[x.shape.length - 1];
  const o = dy.shape[dy.shape.length - 1];
  switch (w.builtIn) {
    case 'Conv2DBackpropFilter':
      return tf.engine().runKernel(
          'Conv2DBackpropFilter', {x, dy},
          {strides: attrs.strides, pad: explicit, dataFormat: 'NHWC', filterShape: [...kernel, c, o]} as never) as tf.Tensor;
    case 'DepthwiseConv2dNativeBackpropFilter':
      return tf.engine().runKernel(
          'DepthwiseConv2dNativeBackpropFilter', {x, dy},
          {strides: attrs.strides, dilations: [1, 1], pad: explicit, filterShape: [...kernel, c, o / c]} as never) as tf.Tensor;
    case 'Conv3DBackpropFilterV2': {
      const pads = [...attrs.padsBegin!, ...attrs.padsEnd!];
      if (pads.some(p => p !== pads[0])) throw new Error('tfjs conv3d takes one pad for all sides');
      return tf.engine().runKernel(
          'Conv3DBackpropFilterV2', {x, dy}, {strides: attrs.strides, pad: pads[0], filterShape: [...kernel, c, o]} as never) as tf.Tensor;
    }
    default:
      throw new Error(`no built-in for ${w.name}`);
  }
}

/** max |a − b| / max |b|. */
function relativeDifference(a: Float32Array, b: Float32Array): number {
  let maxDiff = 0;
  let maxRef = 0;
  for (let i = 0; i < b.length; i++) {
    maxDiff = Math.max(maxDiff, Math.abs(a[i] - b[i]));
    maxRef = Math.max(maxRef, Math.abs(b[i]));
  }
  return maxRef === 0 ? maxDiff : maxDiff / maxRef;
}

/** Calls in a run at most (results are kept until the run's read-back). */
const MAX_REPS = 1000;

/** One implementation being timed: warmed up, reps chosen, runs appended by `run`. */
interface Timed extends WebgpuImplResult {
  values: Float32Array;
  run(): Promise<void>;
}

/**
 * Warm-up call (values kept), then reps chosen for ~0.3 s a run: from a second single call, or
 * where that is short (its read-back, ~5 ms on SwiftShader, would be most of it) from 8
 * back-to-back calls with one read-back.
 */
async function prepare(call: () => tf.Tensor): Promise<Timed> {
  const started = performance.now();
  const first = call();
  const values = (await first.data()) as Float32Array;
  first.dispose();
  const warmUpMs = performance.now() - started;
  const perCall = async (count: number) => {
    const begun = performance.now();
    const results = Array.from({length: count}, call);
    await results[count - 1].data();
    tf.dispose(results);
    return (performance.now() - begun) / count;
  };
  let estimate = await perCall(1);
  if (estimate < 30) estimate = await perCall(8);
  const reps = Math.max(1, Math.min(MAX_REPS, Math.round(300 / Math.max(estimate, 1e-3))));
  const timed: Timed = {
    perCall: [], reps, warmUpMs, difference: null, values,
    async run() {
      const runStart = performance.now();
      const results: tf.Tensor[] = [];
      for (let i = 0; i < reps; i++) results.push(call());
      await results[results.length - 1].data();
      timed.perCall.push((performance.now() - runStart) / reps);
      tf.dispose(results);
    },
  };
  return timed;
}

describe('webgpu bench', () => {
  useWebgpuBackend();
  it('measures', async () => {
    const adapterInfo = (tf.backend() as unknown as {adapterInfo?: {vendor?: string; architecture?: string}}).adapterInfo;
    const result: WebgpuPageResult = {
      userAgent: navigator.userAgent,
      adapter: adapterInfo ? `${adapterInfo.vendor ?? '?'} ${adapterInfo.architecture ?? ''}`.trim() : 'unknown',
      workloads: [],
    };
    for (const w of input.workloads) {
      const seed = (n: number, s: number) => tf.tidy(() => tf.mul(tf.randomUniform([n], -1, 1, 'float32', s), 1));
      const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1);
      const x = tf.tidy(() => tf.reshape(seed(size(w.args.inputShape), 1), w.args.inputShape));
      const dy = tf.tidy(() => tf.reshape(seed(size(w.args.outputDeltaShape), 2), w.args.outputDeltaShape));
      const spatial = w.args.outputDeltaShape.slice(1, -1);
      const kernel = (w.args.attrs.filterShape as number[]).reduce((a, b) => a * b, 1);
      const groups = w.args.attrs.groups ?? 1;
      const c = w.args.inputShape[w.args.inputShape.length - 1];
      const o = w.args.outputDeltaShape[w.args.outputDeltaShape.length - 1];
      const flops = 2 * w.args.batch * (w.args.kind === 'conv' ? o * (c / groups) : c * (o / groups)) * kernel *
          (w.args.kind === 'conv' ? size(spatial) : size(w.args.inputShape.slice(1, -1)));
      try {
        const mine = await prepare(() => ours(w, x, dy));
        const variant = input.variant ? await prepare(withVariant(input.variant, () => ours(w, x, dy))) : null;
        const theirs = w.builtIn !== null && input.builtInRuns > 0 ? await prepare(() => builtIn(w, x, dy)) : null;
        // Runs alternate (ours, variant, built-in, ours, ...) so all see the same load on a shared
        // machine; ours and the variant take turns going first (the one after the built-in may
        // pay for its clean-up).
        for (let run = 0; run < input.runs; run++) {
          const variantFirst = variant !== null && run % 2 === 1;
          if (variantFirst) await variant.run();
          await mine.run();
          if (variant && !variantFirst) await variant.run();
          if (theirs && run < input.builtInRuns) await theirs.run();
        }
        if (variant) variant.difference = relativeDifference(variant.values, mine.values);
        if (theirs) {
          theirs.difference = relativeDifference(mine.values, theirs.values);
        }
        const strip = (r: Timed): WebgpuImplResult => ({perCall: r.perCall, reps: r.reps, warmUpMs: r.warmUpMs, difference: r.difference});
        result.workloads.push({name: w.name, flops, ours: strip(mine), builtIn: theirs ? strip(theirs) : null,
                               variant: variant ? strip(variant) : null});
        const times = (r: Timed | null) => r ? r.perCall.map(t => t.toFixed(1)).join(' ') : '–';
        console.log(`${w.name}: ours ${times(mine)} ms; ${variant ? `variant ${times(variant)} ms; ` : ''}built-in ${times(theirs)} ms`);
      } catch (e) {
        result.workloads.push({name: w.name, flops, ours: {perCall: [], reps: 0, warmUpMs: 0, difference: null}, builtIn: null,
                               error: String((e as Error).message ?? e)});
      }
      tf.dispose([x, dy]);
    }
    console.log(`BENCH_RESULT ${JSON.stringify(result)}`);
  });
});

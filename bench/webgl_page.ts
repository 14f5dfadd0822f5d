/**
 * The browser half of `npm run bench:webgl` (see bench/webgl.ts): on each workload, our webgl
 * kernel and tfjs's built-in one on the same tensors — warm-up each (counting the shader programs
 * it compiles, and measuring memory), then timed runs round-robin — and our kernel once more at
 * another batch size, counting the programs that call compiles (none: sizes are uniforms).
 * Results go back to Node as one `BENCH_RESULT {json}` console line.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-webgl';
import type {GPGPUContext} from '@tensorflow/tfjs-backend-webgl';

import {computeGeometry, convolutionBackpropFilters, ConvolutionBackpropFiltersAttrs, convTransposeBackpropFilters, ConvTransposeBackpropFiltersAttrs} from '../kernels/index';

import {multiTargetPrograms} from '../kernels/webgl/multi_target';
import {withVariant} from './page_variant';
import {summarize, Timing} from './report';
import {callsPerRun} from './timed_calls';
import {peakTensorBytes} from './tensor_memory';
import type {BuiltIn, InputPlacement, WebglImplResult, WebglPageInput, WebglPageResult, WebglWorkload, WebglWorkloadResult} from './webgl';

declare const __karma__: {config: {args: string[]}};

interface TextureManager {
  acquireTexture(...args: unknown[]): unknown;
  numBytesAllocated: number;
  numBytesFree: number;
}

interface WebglBackendInternals {
  binaryCache: Record<string, unknown>;
  uploadToGPU(dataId: object): void;
  gpgpu: GPGPUContext;
  textureManager: TextureManager;
}

const internals = () => tf.backend() as unknown as WebglBackendInternals;

/** Keys of the shader programs compiled so far by the webgl backend (its binary cache). */
/** Cache keys of every compiled program: tfjs's, and our multi-target ones (kept by this package, not in tfjs's cache). */
function programKeys(): string[] {
  return [...Object.keys(internals().binaryCache), ...multiTargetPrograms(internals().gpgpu).map(p => `${p.name}_${p.key}`)];
}

function compiledPrograms(): Set<string> {
  return new Set(programKeys());
}

/**
 * The programs compiled since `before`, counted by program class (tfjs's cache key starts with the
 * program's constructor name and includes its text and, unless it uses shape uniforms, the shapes).
 */
function programsSince(before: Set<string>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of programKeys()) {
    if (before.has(key)) continue;
    const name = key.split('_')[0] || 'program';
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/**
 * Uploads tensors to textures ahead of a call, so that the programs the upload compiles (tfjs's
 * encode programs, keyed by shape) are not counted as the kernel's: in a model, x and dy come
 * from other GPU ops already. Returns the programs the upload compiled.
 */
function upload(tensors: tf.Tensor[]): Record<string, number> {
  const before = compiledPrograms();
  for (const t of tensors) internals().uploadToGPU(t.dataId);
  return programsSince(before);
}

interface WebglMemory {
  numBytes: number;
  numBytesInGPUAllocated: number;
}

const memory = () => tf.memory() as unknown as WebglMemory;

/**
 * Texture bytes in use (allocated minus pooled free ones) and their high-water mark, kept by
 * wrapping the texture manager's acquireTexture: textures are only ever taken there.
 */
let textureHighWater = 0;
const texturesInUse = () => internals().textureManager.numBytesAllocated - internals().textureManager.numBytesFree;

function hookTextureManager() {
  const manager = internals().textureManager;
  const acquire = manager.acquireTexture.bind(manager);
  manager.acquireTexture = (...args: unknown[]) => {
    const texture = acquire(...args);
    textureHighWater = Math.max(textureHighWater, texturesInUse());
    return texture;
  };
}

/** Random x/dy, our call, and the built-in call for a workload at a batch. */
function setUp(w: WebglWorkload, batch: number, seed: number, placement: InputPlacement) {
  const inputShape = [batch, ...w.args.inputShape.slice(1)];
  const outputDeltaShape = [batch, ...w.args.outputDeltaShape.slice(1)];
  // 'packed': through a packed op (tfjs's packed binary-op program), as a model's activations are.
  const place = (t: tf.Tensor) => {
    if (placement === 'uploaded') return t;
    const placed = tf.tidy(() => tf.mul(t, tf.scalar(1)));
    t.dispose();
    return placed;
  };
  const input = place(tf.randomUniform(inputShape, -1, 1, 'float32', seed));
  const outputDelta = place(tf.randomUniform(outputDeltaShape, -1, 1, 'float32', seed + 1));
  const ours = () => w.args.kind === 'conv' ?
      convolutionBackpropFilters(input, outputDelta, w.args.attrs as ConvolutionBackpropFiltersAttrs) :
      convTransposeBackpropFilters(input, outputDelta, w.args.attrs as ConvTransposeBackpropFiltersAttrs);
  const geometry = computeGeometry(
      w.args.kind === 'conv' ? 'ConvolutionBackpropFilters' : 'ConvTransposeBackpropFilters', {input, outputDelta},
      w.args.attrs as unknown as Record<string, unknown>);
  const builtIn = w.builtIn === null ? null : () => callBuiltIn(w.builtIn!, w, input, outputDelta, [...geometry.filterShape]);
  return {input, outputDelta, ours, builtIn, geometry, dispose: () => tf.dispose([input, outputDelta])};
}

/** tfjs's own kernel for the same gradient; explicit pads where it takes them. */
function callBuiltIn(kernel: BuiltIn, w: WebglWorkload, x: tf.Tensor, dy: tf.Tensor, filterShape: number[]): tf.Tensor {
  const {strides, padsBegin = [], padsEnd = [], dilations = strides.map(() => 1)} = w.args.attrs;
  const pairs = padsBegin.map((b, i) => [b, padsEnd[i]]);
  if (kernel === 'Conv3DBackpropFilterV2') {
    // It takes only 'valid' or 'same'; the workloads picked for it are one or the other.
    const pad = pairs.every(([b, e]) => b === 0 && e === 0) ? 'valid' : 'same';
    return tf.engine().runKernel(kernel, {x, dy}, {strides, pad, filterShape}) as tf.Tensor;
  }
  const pad = [[0, 0], ...pairs, [0, 0]];
  if (kernel === 'DepthwiseConv2dNativeBackpropFilter') {
    // tfjs's depthwise filter is (K…, C, multiplier); ours for groups = C is (K…, 1, C): same order.
    const depthwiseShape = [...filterShape.slice(0, -2), x.shape[x.shape.length - 1], 1];
    return tf.engine().runKernel(kernel, {x, dy}, {strides, pad, dilations, filterShape: depthwiseShape}) as tf.Tensor;
  }
  if (w.args.kind === 'deconv') {
    // The transposed convolution's filter gradient is the convolution's with x and dy swapped
    // (what tfjs's own conv2dTranspose gradient calls): filter (K…, out channels, in channels).
    const k = filterShape.slice(0, -2);
    const swapped = [...k, dy.shape[dy.shape.length - 1], x.shape[x.shape.length - 1]];
    return tf.engine().runKernel(kernel, {x: dy, dy: x}, {strides, pad, dataFormat: 'NHWC', filterShape: swapped}) as tf.Tensor;
  }
  return tf.engine().runKernel(kernel, {x, dy}, {strides, pad, dataFormat: 'NHWC', filterShape}) as tf.Tensor;
}

/**
 * `calls` back-to-back calls and one read-back of the last result, in ms per call. WebGL runs
 * the draws in order, so the read-back waits for all of them; the earlier results are disposed
 * at once (their textures may serve the next call's output, as in a model).
 */
async function timedCall(f: () => tf.Tensor, calls = 1): Promise<number> {
  const start = performance.now();
  let result = f();
  for (let i = 1; i < calls; i++) {
    result.dispose();
    result = f();
  }
  await result.data();
  const elapsed = performance.now() - start;
  result.dispose();
  return elapsed / calls;
}

/** Calls per amortized run: as many as fit in about `amortized.runMs` by one timed call. */
async function amortizedCalls(f: () => tf.Tensor, amortized: WebglPageInput['amortized']): Promise<number> {
  return callsPerRun(await timedCall(f), amortized.runMs, amortized.maxCalls);
}

/** The warm-up: compiles the shaders (counted), measures memory, returns the values. */
async function warmUp(f: () => tf.Tensor) {
  const programsBefore = compiledPrograms();
  const before = memory();
  const inUseBefore = texturesInUse();
  textureHighWater = inUseBefore;
  let values: Float32Array<ArrayBufferLike> = new Float32Array(0);
  const start = performance.now();
  const {result, peakBytes} = await peakTensorBytes(async () => {
    const result = f();
    values = (await result.data()) as Float32Array;
    return result;
  });
  const elapsed = performance.now() - start;
  result.dispose();
  const after = memory();
  return {
    values,
    ms: elapsed,
    programs: programsSince(programsBefore),
    tfPeakBytes: peakBytes,
    textureAllocatedGrowth: after.numBytesInGPUAllocated - before.numBytesInGPUAllocated,
    texturePeakBytes: Math.max(0, textureHighWater - inUseBefore),
  };
}

/** max |a − b| / max |b|, with b transposed over its last two axes when the layouts differ that way. */
function relativeDifference(a: Float32Array, b: Float32Array, shape: readonly number[], transposed: boolean): number {
  if (a.length !== b.length) return Infinity;
  const rows = shape[shape.length - 2];
  const cols = shape[shape.length - 1];
  let worst = 0;
  let scale = 0;
  for (let i = 0; i < a.length; i++) {
    let j = i;
    if (transposed) {
      const block = i - (i % (rows * cols));
      const r = Math.floor((i % (rows * cols)) / cols);
      const c = i % cols;
      j = block + c * rows + r;
    }
    worst = Math.max(worst, Math.abs(a[i] - b[j]));
    scale = Math.max(scale, Math.abs(b[j]));
  }
  return worst / Math.max(scale, Number.MIN_VALUE);
}

describe('webgl benchmark', () => {
  it('times our kernel and the built-in one', async () => {
    const {workloads, runs, inputs: placement, amortized, variant} = JSON.parse(__karma__.config.args[0]) as WebglPageInput;
    expect(await tf.setBackend('webgl')).toBe(true);
    hookTextureManager();
    const gl = internals().gpgpu.gl;
    const debug = gl.getExtension('WEBGL_debug_renderer_info');
    const page: WebglPageResult = {
      userAgent: navigator.userAgent,
      renderer: String(debug ? gl.getParameter(debug.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER)),
      webglVersion: tf.env().getNumber('WEBGL_VERSION'),
      packed: tf.env().getBool('WEBGL_PACK'),
      tfjs: tf.version_core,
      runs,
      inputs: placement,
      workloads: [],
      variant,
    };
    console.log(`renderer: ${page.renderer}, WebGL ${page.webglVersion}, tfjs ${page.tfjs}; ${runs} timed runs each`);
    for (const [index, w] of workloads.entries()) {
      const seed = 100 + 10 * index;
      // The training set always takes its inputs as a model passes them.
      const workloadPlacement: InputPlacement = w.amortized ? 'packed' : placement;
      const bench = setUp(w, w.args.batch, seed, workloadPlacement);
      const result: WebglWorkloadResult =
          {name: w.name, flops: bench.geometry.flops, uploadPrograms: {}, ours: null, builtIn: null, secondBatch: null};
      try {
        result.uploadPrograms = upload([bench.input, bench.outputDelta]);
        const ourWarm = await warmUp(bench.ours);
        const builtInWarm = bench.builtIn ? await warmUp(bench.builtIn) : null;
        const variantCall = variant ? withVariant(variant, bench.ours) : null;
        const variantWarm = variantCall ? await warmUp(variantCall) : null;
        const variantCalls = variantCall ? (w.amortized ? await amortizedCalls(variantCall, amortized) : 1) : 1;
        const variantTimes: number[] = [];
        const ourCalls = w.amortized ? await amortizedCalls(bench.ours, amortized) : 1;
        const builtInCalls = w.amortized && bench.builtIn ? await amortizedCalls(bench.builtIn, amortized) : 1;
        const ourTimes: number[] = [];
        const builtInTimes: number[] = [];
        // Ours and the variant take turns going first (the one after the built-in may pay for its
        // clean-up), so neither is favoured by the order.
        for (let run = 0; run < runs; run++) {
          const variantFirst = variantCall !== null && run % 2 === 1;
          if (variantFirst) variantTimes.push(await timedCall(variantCall, variantCalls));
          ourTimes.push(await timedCall(bench.ours, ourCalls));
          if (variantCall && !variantFirst) variantTimes.push(await timedCall(variantCall, variantCalls));
          if (bench.builtIn) builtInTimes.push(await timedCall(bench.builtIn, builtInCalls));
        }
        const impl = (warm: Awaited<ReturnType<typeof warmUp>>, times: number[], calls: number, difference: number | null): WebglImplResult => ({
          timing: summarize(times) as Timing,
          callsPerRun: calls,
          warmUpMs: warm.ms,
          programs: warm.programs,
          tfPeakBytes: warm.tfPeakBytes,
          texturePeakBytes: warm.texturePeakBytes,
          textureAllocatedGrowth: warm.textureAllocatedGrowth,
          difference,
        });
        result.ours = impl(ourWarm, ourTimes, ourCalls, null);
        if (variantWarm) {
          result.variant = impl(variantWarm, variantTimes, variantCalls,
                                relativeDifference(variantWarm.values, ourWarm.values, bench.geometry.filterShape, false));
        }
        if (builtInWarm) {
          const transposed = w.args.kind === 'deconv' && w.builtIn === 'Conv2DBackpropFilter';
          result.builtIn = impl(builtInWarm, builtInTimes, builtInCalls, relativeDifference(ourWarm.values, builtInWarm.values, bench.geometry.filterShape, transposed));
        }
      } finally {
        bench.dispose();
      }
      // The same workload at another batch: the programs compiled by its first call (big set only).
      const otherBatch = w.args.batch + 1;
      const other = w.amortized ? null : setUp(w, otherBatch, seed + 5, placement);
      if (other !== null) try {
        const uploadPrograms = upload([other.input, other.outputDelta]);
        const before = compiledPrograms();
        const start = performance.now();
        const values = other.ours();
        await values.data();
        result.secondBatch = {batch: otherBatch, programs: programsSince(before), uploadPrograms, ms: performance.now() - start};
        values.dispose();
      } finally {
        other.dispose();
      }
      page.workloads.push(result);
      const o = result.ours!;
      console.log(`done ${w.name}: ours ${o.timing.median.toFixed(2)} ms ×${o.callsPerRun} (${total(o.programs)} programs compiled${
          result.secondBatch ? `; batch ${otherBatch}: ${total(result.secondBatch.programs)} more` : ''})${
          result.builtIn ? `, built-in ${result.builtIn.timing.median.toFixed(2)} ms ×${result.builtIn.callsPerRun}` : ''}${
          result.variant ? `, variant ${result.variant.timing.median.toFixed(2)} ms ×${result.variant.callsPerRun} (diff ${result.variant.difference!.toExponential(1)})` : ''}`);
      if (result.builtIn) expect(result.builtIn.difference!).toBeLessThan(1e-3);
    }
    console.log(`BENCH_RESULT ${JSON.stringify(page)}`);
  });
});

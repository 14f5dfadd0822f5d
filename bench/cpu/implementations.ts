import * as tf from '@tensorflow/tfjs-core';

import {CONV_BACKPROP_FILTERS_THREADS, CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD, CONV_BACKPROP_FILTERS_WASM_SIMD, convolutionBackpropFilters, convTransposeBackpropFilters, simdThreadsReady} from '../../kernels/index';
import {probeMemory} from '../node_memory';
import {COLORS} from '../report';
import {peakTensorBytes} from '../tensor_memory';
import {msPerCall} from '../timed_calls';
import {Problem, toOpArguments} from '../workloads';

import {Options} from './options';

/**
 * The implementations `npm run bench` times: each sets up a workload, then warms up (measuring
 * memory) and times calls. Ours run on 1 thread and on all threads (tfjs flag
 * CONV_BACKPROP_FILTERS_THREADS, set before each call), PyTorch likewise (bench/cpu/pytorch.ts).
 */
export type ImplKey = 'pytorch'|'pytorchThreads'|'simd'|'simdThreads'|'simdRelaxed'|'simdRelaxedThreads'|'typescript'|'wasm'|
    'wasmThreads'|'wasmBuiltIn'|'cpuBuiltIn';

/** The chart colours of ours on wasm and of the threaded and relaxed rows. */
export const IMPL_COLORS: Record<ImplKey, string> = {
  pytorch: COLORS.pytorch, pytorchThreads: '#ffbb78', simd: COLORS.simd, simdThreads: '#17becf', simdRelaxed: '#9467bd',
  simdRelaxedThreads: '#c5b0d5', typescript: COLORS.typescript, wasm: '#2ca02c', wasmThreads: '#98df8a',
  wasmBuiltIn: '#8c1c13', cpuBuiltIn: COLORS.builtIn,
};

export interface Memory {
  /** Peak resident bytes of the process during the call above those before it (null: unknown). */
  peakRss: number | null;
  /** WebAssembly memory growth during the call, and the total after it (null: not WebAssembly). */
  wasmGrowth: number | null;
  wasmTotal: number | null;
  /** tfjs tensor bytes (distinct data buffers): the high-water mark during the call above the bytes before it. */
  tfPeak: number | null;
}

export interface Session {
  /** The warm-up call: measures memory, returns the result's values (null for PyTorch) and its wall time. */
  warmUp(): Promise<{memory: Memory; values: Float32Array | null; ms: number}>;
  /** `calls` back-to-back calls, then a read-back of the last result: ms per call. */
  call(calls: number): Promise<number>;
  dispose(): Promise<void>;
}

export interface Impl {
  readonly key: ImplKey;
  readonly label: string;
  readonly color: string;
  /** Threads it runs on (ours: what it asks for; small problems may stay on one, see docs/threads.md). */
  readonly threads: number;
  /** Timed runs for this implementation (the built-ins get fewer: they are slow). */
  runs(options: Options): number;
  /** The warm-up call is the (only) timed run: for tfjs's built-in cpu kernel, which takes seconds. */
  readonly warmUpIsRun?: boolean;
  /** null: this implementation cannot run the problem. */
  setUp(problem: Problem, batch: number, seed: number): Promise<Session | null>;
}

export const opName = (p: Problem) => p.kind === 'conv' ? 'ConvolutionBackpropFilters' : 'ConvTransposeBackpropFilters';

/** Random input/outputDelta on the current backend, and our call. */
function ourCall(problem: Problem, batch: number, seed: number) {
  const args = toOpArguments(problem, batch);
  const input = tf.randomUniform(args.inputShape, -1, 1, 'float32', seed);
  const outputDelta = tf.randomUniform(args.outputDeltaShape, -1, 1, 'float32', seed + 1);
  const call = () => args.kind === 'conv' ? convolutionBackpropFilters(input, outputDelta, args.attrs) :
                                             convTransposeBackpropFilters(input, outputDelta, args.attrs);
  return {args, input, outputDelta, call};
}

/** The memory buffer of tfjs-backend-wasm's heap (undefined before the backend is set up). */
export function tfjsWasmHeap(): ArrayBuffer | undefined {
  const backend = tf.engine().registry['wasm'] as unknown as {wasm?: {HEAPU8?: Uint8Array}} | undefined;
  return backend?.wasm?.HEAPU8?.buffer as ArrayBuffer | undefined;
}

/** A session of a tfjs call on `backend`, with `before` run ahead of each call (e.g. setting a flag). */
async function tfjsSession(
    backend: string, make: () => {tensors: tf.Tensor[]; call: () => tf.Tensor},
    before: () => Promise<void> | void = () => {}): Promise<Session> {
  // On wasm: every WebAssembly memory (tfjs-backend-wasm's heap and the SIMD kernel's); on cpu:
  // every one but tfjs-backend-wasm's heap.
  const wasm = backend === 'wasm';
  const select = (memory: WebAssembly.Memory) => wasm || memory.buffer !== tfjsWasmHeap();
  await tf.setBackend(backend);
  const {tensors, call} = make();
  const timed = async (calls: number) => {
    if (tf.getBackend() !== backend) await tf.setBackend(backend);
    await before();
    return msPerCall(call, calls);
  };
  return {
    async warmUp() {
      if (tf.getBackend() !== backend) await tf.setBackend(backend);
      await before();
      let values: Float32Array = new Float32Array(0);
      const start = performance.now();
      const probe = await probeMemory(async () => {
        const {result, peakBytes} = await peakTensorBytes(() => {
          const result = call();
          values = result.dataSync() as Float32Array;
          return result;
        });
        result.dispose();
        return peakBytes;
      }, select);
      const elapsed = performance.now() - start;
      return {
        values,
        ms: elapsed,
        memory: {
          peakRss: probe.peakRssBytes,
          wasmGrowth: probe.wasmGrowthBytes,
          wasmTotal: probe.wasmBytesAfter,
          tfPeak: probe.result,
        },
      };
    },
    call: timed,
    async dispose() {
      if (tf.getBackend() !== backend) await tf.setBackend(backend);
      tf.dispose(tensors);
    },
  };
}

/** How ours runs: the path (SIMD or the TypeScript loops), the threads and the SIMD build. */
export interface OurSettings {
  simd: boolean;
  threads: number;
  /** true: the relaxed-SIMD build; false: the plain one; undefined: the engine's default. */
  relaxed?: boolean;
}

/**
 * Sets the tfjs flags for `settings` before a call; waits for the worker threads when the
 * settings want more than one (the first call of a build starts them).
 */
async function applySettings(settings: OurSettings) {
  tf.env().set(CONV_BACKPROP_FILTERS_WASM_SIMD, settings.simd);
  tf.env().set(CONV_BACKPROP_FILTERS_THREADS, settings.threads);
  if (settings.relaxed !== undefined) tf.env().set(CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD, settings.relaxed);
  if (settings.threads > 1) await simdThreadsReady();
}

export function ourImpl(key: ImplKey, label: string, settings: OurSettings): Impl {
  const backend = key.startsWith('wasm') ? 'wasm' : 'cpu';
  return {
    key,
    label,
    color: IMPL_COLORS[key],
    threads: settings.threads,
    // The TypeScript loops run at 1–3 GFLOP/s (seconds a call on the big layers) and are not
    // compared with anything but the built-ins: 5 runs are enough for them.
    runs: options => settings.simd ? options.runs : Math.min(options.runs, 5),
    setUp: (problem, batch, seed) => tfjsSession(backend, () => {
      const {input, outputDelta, call} = ourCall(problem, batch, seed);
      return {tensors: [input, outputDelta], call};
    }, () => applySettings(settings)),
  };
}

/**
 * tfjs-backend-wasm's Conv3DBackpropFilterV2, its only filter gradient: no dilation, no groups,
 * 'valid' or 'same' pads. 2-D problems run through it as 3-D ones of depth 1 (x and dy reshaped,
 * which on wasm shares the data).
 */
export const wasmBuiltInImpl: Impl = {
  key: 'wasmBuiltIn',
  threads: 1,
  label: 'tfjs built-in (wasm Conv3DBackpropFilterV2)',
  color: '#8c1c13',
  runs: options => Math.min(options.runs, 3),
  setUp: async (problem, batch, seed) => {
    const pad = builtInPad(problem);
    if (problem.kind !== 'conv' || problem.spatialRank === 1 || problem.groups !== 1 || pad === null ||
        problem.dilations.some(d => d !== 1)) {
      return null;
    }
    const asDepth1 = problem.spatialRank === 2;
    return tfjsSession('wasm', () => {
      const {input, outputDelta} = ourCall(problem, batch, seed);
      const filterShape = [...(asDepth1 ? [1] : []), ...problem.kernel, problem.ic, problem.oc];
      const strides = [...(asDepth1 ? [1] : []), ...problem.strides];
      const call = () => tf.tidy(() => {
        const x = asDepth1 ? tf.expandDims(input, 1) : input;
        const dy = asDepth1 ? tf.expandDims(outputDelta, 1) : outputDelta;
        const dW = tf.engine().runKernel(
                       'Conv3DBackpropFilterV2', {x, dy}, {strides, pad, filterShape} as unknown as tf.NamedAttrMap) as tf.Tensor;
        return asDepth1 ? tf.squeeze(dW, [0]) : dW;
      });
      return {tensors: [input, outputDelta], call};
    });
  },
};

/** 'valid' or 'same' when the problem's pads are what tfjs computes for them; null otherwise. */
function builtInPad(problem: Problem): 'valid'|'same'|null {
  if (problem.padsBegin.every(p => p === 0) && problem.padsEnd.every(p => p === 0)) return 'valid';
  const same = problem.inputSize.every((size, a) => {
    const out = Math.ceil(size / problem.strides[a]);
    const total = Math.max(0, (out - 1) * problem.strides[a] + problem.kernel[a] - size);
    return out === problem.outputSize[a] && problem.padsBegin[a] === Math.floor(total / 2) &&
        problem.padsEnd[a] === total - Math.floor(total / 2);
  });
  return same ? 'same' : null;
}

/** tfjs's cpu Conv2DBackpropFilter: 2-D, groups 1, no dilation, explicit pads. */
export const cpuBuiltInImpl: Impl = {
  key: 'cpuBuiltIn',
  threads: 1,
  label: 'tfjs built-in (cpu Conv2DBackpropFilter)',
  color: COLORS.builtIn,
  runs: () => 1,
  warmUpIsRun: true,
  setUp: async (problem, batch, seed) => {
    if (problem.kind !== 'conv' || problem.spatialRank !== 2 || problem.groups !== 1 || problem.dilations.some(d => d !== 1)) {
      return null;
    }
    return tfjsSession('cpu', () => {
      const {input, outputDelta} = ourCall(problem, batch, seed);
      const filterShape = [...problem.kernel, problem.ic, problem.oc];
      const pad = [[0, 0], ...problem.padsBegin.map((b, a) => [b, problem.padsEnd[a]]), [0, 0]];
      const call = () => tf.engine().runKernel(
                             'Conv2DBackpropFilter', {x: input, dy: outputDelta},
                             {strides: [...problem.strides], pad, dataFormat: 'NHWC', dimRoundingMode: undefined,
                              filterShape} as unknown as tf.NamedAttrMap) as tf.Tensor;
      return {tensors: [input, outputDelta], call};
    });
  },
};


/**
 * `npm run bench [-- options]` — filter-gradient throughput on the Node backends, over named
 * workloads from oneDNN's benchdnn shape lists (bench/workloads.ts), side by side in one run:
 *
 * - ours on tfjs's `cpu` backend, with the WebAssembly SIMD micro-kernel
 *   (tfjs flag CONV_BACKPROP_FILTERS_WASM_SIMD = true) and with the plain TypeScript loops
 *   (= false); one "ours cpu" row when the flag is not registered;
 * - ours on `wasm` (@tensorflow/tfjs-backend-wasm): the wasm kernel, the same WebAssembly SIMD
 *   micro-kernels reading views on the backend's heap (flag true);
 * - PyTorch (torch.nn.grad.conv*d_weight, 1 thread) through /usr/bin/python3 when it imports
 *   torch (bench/pytorch_server.py, a child process of this one);
 * - tfjs's built-in kernels as anchors: Conv3DBackpropFilterV2 on wasm (tfjs-backend-wasm has no
 *   Conv2DBackpropFilter nor a depthwise one: 2-D problems without groups run through it with a
 *   depth of 1), and Conv2DBackpropFilter on cpu for one ResNet-50 shape (~0.015 GFLOP/s, so one run).
 *
 * Then the training layers (`conv/shapes_tfjs_training`, every layer at the batch its file
 * gives): ours on cpu and on wasm, tfjs-wasm's built-in where it can run the layer, PyTorch.
 * These calls are short, so a run there is several back-to-back calls with one read-back of the
 * last result, divided by the number of calls (DESIGN.md §7): about TRAINING_RUN_MS per run.
 *
 * Every implementation of a workload is warmed up once (that call also measures memory), then
 * the timed runs go round-robin over the implementations, so noise from a shared machine hits
 * them alike; a run is one call until its result is read back. GFLOP/s = 2·N·O·(C/G)·K·out-spatial
 * (computeGeometry's flops) / median time. Results of every implementation are compared with
 * the TypeScript loops'. Writes bench/results/cpu.md, cpu.svg, cpu_training.svg and cpu.json, and
 * prints the tables.
 *
 *   --runs N        timed runs per implementation and workload (default 5)
 *   --key-runs N    timed runs on the key workloads — ResNet-50 res2/res3 3x3 and the built-in's shape —
 *                   whose ratios the issue's targets are read from (default 15, at least --runs)
 *   --only a,b      only the workloads whose name contains one of these
 *   --no-pytorch    skip PyTorch;  --no-builtin   skip tfjs's built-in cpu kernel (its one run takes ~15 s)
 *   --training-runs N  timed runs per implementation on each training layer (default 15)
 *   --no-training   skip the training layers;  --training-only   only them
 *   --out DIR       where to write the results (default bench/results; '-' writes nothing)
 */
import {peakRssAvailable, probeMemory, wasmBytes, wasmMemoryCount} from './node_memory';  // first: hooks WebAssembly

import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-wasm';

import * as tf from '@tensorflow/tfjs-core';
import {spawn} from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as readline from 'readline';

import {computeGeometry, convolutionBackpropFilters, convTransposeBackpropFilters} from '../kernels/index';

import {sourceState} from './source_state';
import {peakTensorBytes} from './tensor_memory';
import {barChartSvg, bytes, COLORS, gflops, markdownTable, ms, rate, rateRange, ratio, summarize, Timing} from './report';
import {describeProblem, findProblem, listWorkloadFiles, loadWorkloadFile, Problem, toOpArguments, workloadsDir} from './workloads';

/** The tfjs flag that switches the cpu kernel between its WebAssembly SIMD path and the TypeScript loops. */
const SIMD_FLAG = 'CONV_BACKPROP_FILTERS_WASM_SIMD';

interface Pick {
  readonly file: string;
  readonly name: string;
  /** The batch of this run (the files say mb50…mb256: too much for JavaScript). */
  readonly batch: number;
  /** Whether the issue's key figures are read off this workload. */
  readonly key?: boolean;
}

/** The workloads: the kinds of problem DESIGN.md §7 and issue 7 name. */
const PICKS: readonly Pick[] = [
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res2a_branch2b', batch: 2, key: true},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res3a_branch2b', batch: 2, key: true},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res2a_branch2a', batch: 2},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res3a_branch2c', batch: 2},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:conv1', batch: 2},
  {file: 'conv/shapes_mobilenet_dw', name: 'mobilenet:conv3_1/dw', batch: 2},
  {file: 'conv/shapes_mobilenet_dw', name: 'mobilenet:conv2_2/dw', batch: 2},
  {file: 'conv/shapes_googlenet_v1', name: 'googlenet_v1:inception_3a/3x3', batch: 2},
  {file: 'conv/shapes_googlenet_v1', name: 'googlenet_v1:inception_3a/5x5', batch: 2},
  {file: 'conv/shapes_1d', name: 'conv1d:8', batch: 1},
  {file: 'conv/shapes_3d', name: '3d_conv_pad:2', batch: 1},
  {file: 'conv/shapes_3d_unet', name: '3d_unet:conv_7', batch: 1},
  {file: 'conv/shapes_dilated', name: 'dilated_conv:19', batch: 2},
  {file: 'conv/shapes_dilated', name: 'dilated_conv:22', batch: 2},
  {file: 'deconv/shapes_2d', name: 'googlenet_v1:inception_3a/3x3', batch: 2},
  {file: 'deconv/shapes_2d', name: 'resnet_50:res3a_branch1', batch: 2},
];

/** The shape tfjs's built-in cpu Conv2DBackpropFilter is timed on: ResNet-50 res2a_branch2b at batch 1. */
const ANCHOR: Pick = {file: 'conv/shapes_resnet_50', name: 'resnet_50:res2a_branch2b', batch: 1};

interface Options {
  runs: number;
  keyRuns: number;
  only: string[] | null;
  pytorch: boolean;
  builtIn: boolean;
  trainingRuns: number;
  training: 'yes'|'no'|'only';
  out: string | null;
}

function parseOptions(argv: readonly string[]): Options {
  const options: Options = {
    runs: 5, keyRuns: 15, only: null, pytorch: true, builtIn: true, trainingRuns: 15, training: 'yes',
    out: path.resolve(__dirname, 'results'),
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--runs') {
      const text = value();
      options.runs = Number(text);
      if (!Number.isSafeInteger(options.runs) || options.runs < 1) throw new Error(`--runs needs a positive integer, got '${text}'`);
    } else if (flag === '--key-runs') {
      const text = value();
      options.keyRuns = Number(text);
      if (!Number.isSafeInteger(options.keyRuns) || options.keyRuns < 1) {
        throw new Error(`--key-runs needs a positive integer, got '${text}'`);
      }
    } else if (flag === '--training-runs') {
      const text = value();
      options.trainingRuns = Number(text);
      if (!Number.isSafeInteger(options.trainingRuns) || options.trainingRuns < 1) {
        throw new Error(`--training-runs needs a positive integer, got '${text}'`);
      }
    } else if (flag === '--no-training') {
      options.training = 'no';
    } else if (flag === '--training-only') {
      options.training = 'only';
    } else if (flag === '--only') {
      options.only = value().split(',').filter(s => s !== '');
    } else if (flag === '--no-pytorch') {
      options.pytorch = false;
    } else if (flag === '--no-builtin') {
      options.builtIn = false;
    } else if (flag === '--out') {
      const v = value();
      options.out = v === '-' ? null : path.resolve(v);
    } else {
      throw new Error(`unknown option '${argv[i]}' (--runs N, --key-runs N, --training-runs N, --only a,b, --no-pytorch, ` +
                      `--no-builtin, --no-training, --training-only, --out DIR)`);
    }
  }
  return options;
}

// ---------------------------------------------------------------------------------------------
// PyTorch, as a child process answering one JSON line per command.

interface PyTorchHello {
  torch: string;
  threads: number;
  mkldnn: boolean;
  python: string;
}

class PyTorch {
  private readonly pending: Array<(line: string) => void> = [];
  private exited = false;

  private constructor(private readonly child: ReturnType<typeof spawn>) {
    readline.createInterface({input: child.stdout!}).on('line', line => this.pending.shift()?.(line));
    child.on('exit', () => {
      this.exited = true;
      for (const resolve of this.pending.splice(0)) resolve(JSON.stringify({error: 'python exited'}));
    });
  }

  /** Starts the server; a string says why PyTorch is skipped. */
  static async start(): Promise<{torch: PyTorch; hello: PyTorchHello}|string> {
    const python = process.env.CONV_BENCH_PYTHON || '/usr/bin/python3';
    if (!fs.existsSync(python)) return `${python} not found (set CONV_BENCH_PYTHON)`;
    const child = spawn(python, [path.join(__dirname, 'pytorch_server.py')], {stdio: ['pipe', 'pipe', 'pipe']});
    let stderr = '';
    child.stderr!.on('data', chunk => stderr += String(chunk));
    const torch = new PyTorch(child);
    const hello = await torch.request<PyTorchHello>({op: 'hello'}).catch((e: Error) => e);
    if (hello instanceof Error) {
      torch.stop();
      const lastLine = stderr.trim().split('\n').pop() ?? '';
      return `${python} could not run PyTorch (${lastLine || hello.message})`;
    }
    return {torch, hello};
  }

  request<T>(command: object): Promise<T> {
    if (this.exited) return Promise.reject(new Error('python exited'));
    return new Promise<T>((resolve, reject) => {
      this.pending.push(line => {
        const answer = JSON.parse(line) as T & {error?: string};
        if (answer.error !== undefined) reject(new Error(`PyTorch: ${answer.error}`));
        else resolve(answer);
      });
      this.child.stdin!.write(`${JSON.stringify(command)}\n`);
    });
  }

  stop() {
    this.child.stdin!.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Implementations: each sets up a workload, then warms up (measuring memory) and times calls.

type ImplKey = 'pytorch'|'simd'|'typescript'|'wasm'|'wasmBuiltIn'|'cpuBuiltIn';

/** The chart colour of ours on wasm. */
const WASM_COLOR = '#2ca02c';
/** The training layers' file, and how long one amortized run of them lasts (several calls). */
const TRAINING_FILE = 'conv/shapes_tfjs_training';
const TRAINING_RUN_MS = 40;
const MAX_CALLS_PER_RUN = 64;

interface Memory {
  /** Peak resident bytes of the process during the call above those before it (null: unknown). */
  peakRss: number | null;
  /** WebAssembly memory growth during the call, and the total after it (null: not WebAssembly). */
  wasmGrowth: number | null;
  wasmTotal: number | null;
  /** tfjs tensor bytes (distinct data buffers): the high-water mark during the call above the bytes before it. */
  tfPeak: number | null;
}

interface Session {
  /** The warm-up call: measures memory, returns the result's values (null for PyTorch) and its wall time. */
  warmUp(): Promise<{memory: Memory; values: Float32Array | null; ms: number}>;
  /** `calls` back-to-back calls, then a read-back of the last result: ms per call. */
  call(calls: number): Promise<number>;
  dispose(): Promise<void>;
}

interface Impl {
  readonly key: ImplKey;
  readonly label: string;
  readonly color: string;
  /** Timed runs for this implementation (the built-ins get fewer: they are slow). */
  runs(options: Options): number;
  /** The warm-up call is the (only) timed run: for tfjs's built-in cpu kernel, which takes seconds. */
  readonly warmUpIsRun?: boolean;
  /** null: this implementation cannot run the problem. */
  setUp(problem: Problem, batch: number, seed: number): Promise<Session | null>;
}

const opName = (p: Problem) => p.kind === 'conv' ? 'ConvolutionBackpropFilters' : 'ConvTransposeBackpropFilters';

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
function tfjsWasmHeap(): ArrayBuffer | undefined {
  const backend = tf.engine().registry['wasm'] as unknown as {wasm?: {HEAPU8?: Uint8Array}} | undefined;
  return backend?.wasm?.HEAPU8?.buffer as ArrayBuffer | undefined;
}

/** A session of a tfjs call on `backend`, with `before` run ahead of each call (e.g. setting a flag). */
async function tfjsSession(
    backend: string, make: () => {tensors: tf.Tensor[]; call: () => tf.Tensor}, before: () => void = () => {}): Promise<Session> {
  // On wasm: every WebAssembly memory (tfjs-backend-wasm's heap and the SIMD kernel's); on cpu:
  // every one but tfjs-backend-wasm's heap.
  const wasm = backend === 'wasm';
  const select = (memory: WebAssembly.Memory) => wasm || memory.buffer !== tfjsWasmHeap();
  await tf.setBackend(backend);
  const {tensors, call} = make();
  const timed = async (calls: number) => {
    if (tf.getBackend() !== backend) await tf.setBackend(backend);
    before();
    const results: tf.Tensor[] = [];
    const start = performance.now();
    for (let i = 0; i < calls; i++) results.push(call());
    results[calls - 1].dataSync();
    const elapsed = performance.now() - start;
    tf.dispose(results);
    return elapsed / calls;
  };
  return {
    async warmUp() {
      if (tf.getBackend() !== backend) await tf.setBackend(backend);
      before();
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

function ourImpl(key: 'simd'|'typescript'|'wasm', label: string, color: string, simd: boolean | null): Impl {
  const backend = key === 'wasm' ? 'wasm' : 'cpu';
  const before = simd === null ? () => {} : () => tf.env().set(SIMD_FLAG, simd);
  return {
    key,
    label,
    color,
    runs: options => options.runs,
    setUp: (problem, batch, seed) => tfjsSession(backend, () => {
      const {input, outputDelta, call} = ourCall(problem, batch, seed);
      return {tensors: [input, outputDelta], call};
    }, before),
  };
}

/**
 * tfjs-backend-wasm's Conv3DBackpropFilterV2, its only filter gradient: no dilation, no groups,
 * 'valid' or 'same' pads. 2-D problems run through it as 3-D ones of depth 1 (x and dy reshaped,
 * which on wasm shares the data).
 */
const wasmBuiltInImpl: Impl = {
  key: 'wasmBuiltIn',
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
const cpuBuiltInImpl: Impl = {
  key: 'cpuBuiltIn',
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

function pytorchImpl(torch: PyTorch, hello: PyTorchHello): Impl {
  return {
    key: 'pytorch',
    label: `PyTorch ${hello.torch.replace(/a0$/, '')} (${hello.threads} thread)`,
    color: COLORS.pytorch,
    runs: options => options.runs,
    setUp: async (problem, batch) => {
      try {
        await torch.request({op: 'setup', problem: {...problem, batch}});  // includes one untimed call
      } catch (error) {
        // PyTorch failing on one workload leaves its column empty there; the run goes on.
        process.stderr.write(`  PyTorch skipped on ${problem.name}: ${(error as Error).message}\n`);
        return null;
      }
      return {
        async warmUp() {
          const {peakRssBytes} = await torch.request<{peakRssBytes: number | null}>({op: 'memory'});
          return {values: null, ms: NaN, memory: {peakRss: peakRssBytes, wasmGrowth: null, wasmTotal: null, tfPeak: null}};
        },
        // PyTorch times its call itself (no read-back to amortize): one call per run.
        call: async () => (await torch.request<{ms: number}>({op: 'call'})).ms,
        dispose: async () => void await torch.request({op: 'free'}),
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------

interface Measurement {
  impl: ImplKey;
  timing: Timing;
  gflops: number;
  memory: Memory;
  /** max |impl − base| / max |base|, base = the TypeScript loops, else ours cpu SIMD (null: not compared). */
  difference: number | null;
  /** Calls per timed run (several, with one read-back, on the training layers). */
  callsPerRun?: number;
  /** ms per call of each timed run, in the order run (round r of every implementation at index r). */
  times: number[];
}

interface WorkloadResult {
  name: string;
  label: string;
  source: string;
  descriptor: string;
  batch: number;
  fileBatch: number;
  shape: string;
  /** One input channel per group (depthwise, any channel multiplier). */
  depthwise: boolean;
  flops: number;
  /** Bytes of input + outputDelta, and of the gradient. */
  dataBytes: number;
  outputBytes: number;
  measurements: Measurement[];
}

/** max |a − b| / max |b|. */
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

const shortName = (p: Problem) => `${p.name.replace(/^resnet_50:/, 'ResNet-50 ').replace(/^mobilenet:/, 'MobileNet ')
                                      .replace(/^googlenet_v1:/, 'GoogLeNet ')}${p.kind === 'deconv' ? ' (deconv)' : ''}`;

/**
 * Sets up every implementation on one workload, warms each up, then times them round-robin.
 * `amortize`: a run is as many back-to-back calls as take about TRAINING_RUN_MS (from the fastest
 * of three untimed calls after the warm-up), with one read-back; otherwise one call.
 */
async function runWorkload(
    problem: Problem, batch: number, seed: number, impls: readonly Impl[], options: Options,
    amortize = false): Promise<WorkloadResult> {
  const args = toOpArguments(problem, batch);
  const geometry = computeGeometry(
      opName(problem),
      {input: {shape: args.inputShape, dtype: 'float32'}, outputDelta: {shape: args.outputDeltaShape, dtype: 'float32'}},
      args.attrs as unknown as Record<string, unknown>);
  const sessions: Array<{
    impl: Impl; session: Session; times: number[]; calls: number; memory?: Memory; values?: Float32Array | null;
  }> = [];
  for (const impl of impls) {
    const session = await impl.setUp(problem, batch, seed);
    if (session !== null) sessions.push({impl, session, times: [], calls: 1});
  }
  try {
    const warmUp = async (s: typeof sessions[number]) => {
      const {memory, values, ms: elapsed} = await s.session.warmUp();
      s.memory = memory;
      s.values = values;
      if (s.impl.warmUpIsRun) s.times.push(elapsed);
    };
    for (const s of sessions) {
      if (!s.impl.warmUpIsRun) await warmUp(s);
      if (amortize && !s.impl.warmUpIsRun && s.impl.key !== 'pytorch') {
        // The fastest of three single calls: one may be hit by a collection or a neighbour's load.
        const single = Math.min(await s.session.call(1), await s.session.call(1), await s.session.call(1));
        s.calls = Math.max(1, Math.min(MAX_CALLS_PER_RUN, Math.round(TRAINING_RUN_MS / Math.max(single, 1e-3))));
      }
    }
    // A single-call implementation runs in the middle of the others' timed runs, so that they are
    // timed both before and after it.
    const most = Math.max(...sessions.map(s => s.impl.runs(options)));
    for (let run = 0; run < most; run++) {
      if (run === most >> 1) {
        for (const s of sessions) {
          if (s.impl.warmUpIsRun) await warmUp(s);
        }
      }
      // Every other run in reverse order, so that no implementation always follows the same one.
      for (const s of run % 2 === 0 ? sessions : [...sessions].reverse()) {
        if (!s.impl.warmUpIsRun && run < s.impl.runs(options)) s.times.push(await s.session.call(s.calls));
      }
    }
  } finally {
    for (const s of sessions) await s.session.dispose();
  }
  const baseKey: ImplKey = sessions.some(s => s.impl.key === 'typescript') ? 'typescript' : 'simd';
  const base = sessions.find(s => s.impl.key === baseKey)?.values ?? null;
  const elements = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);
  return {
    name: problem.name,
    label: shortName(problem),
    source: `${problem.source}:${problem.line}`,
    descriptor: problem.descriptor,
    batch,
    fileBatch: problem.batch,
    shape: describeProblem(problem),
    depthwise: problem.groups > 1 && problem.ic === problem.groups,
    flops: geometry.flops,
    dataBytes: 4 * (elements(args.inputShape) + elements(args.outputDeltaShape)),
    outputBytes: 4 * elements(geometry.filterShape),
    measurements: sessions.map(s => {
      const timing = summarize(s.times);
      return {
        impl: s.impl.key,
        ...(amortize ? {callsPerRun: s.calls} : {}),
        times: s.times,
        timing,
        gflops: gflops(geometry.flops, timing.median),
        memory: s.memory!,
        difference: base !== null && s.values != null && s.impl.key !== baseKey ? relativeDifference(s.values, base) : null,
      };
    }),
  };
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const wallStart = performance.now();
  sourceState();  // the code as the run starts (cached)
  await tf.setBackend('cpu');
  await tf.ready();
  const tensorsAtStart = tf.memory().numTensors;
  const checkLeaks = (where: string) => {
    const now = tf.memory().numTensors;
    if (now !== tensorsAtStart) throw new Error(`${where}: ${now - tensorsAtStart} tensor(s) leaked`);
  };
  const log = (line = '') => process.stderr.write(`${line}\n`);

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

  // The implementations of this run.
  const notes: string[] = [];
  let simdRegistered = false;
  let simdDefault: unknown = null;
  try {
    simdDefault = tf.env().get(SIMD_FLAG);
    simdRegistered = true;
  } catch {
    notes.push(`The tfjs flag ${SIMD_FLAG} is not registered by this build of the package: one cpu row (` +
               `the cpu kernel as it is), no WebAssembly SIMD / TypeScript split.`);
  }
  const impls: Impl[] = [];
  let pytorchLabel = 'PyTorch';
  let torch: PyTorch | null = null;
  if (options.pytorch) {
    const started = await PyTorch.start();
    if (typeof started === 'string') {
      notes.push(`PyTorch skipped: ${started}.`);
    } else {
      torch = started.torch;
      const impl = pytorchImpl(started.torch, started.hello);
      pytorchLabel = impl.label;
      impls.push(impl);
      notes.push(`PyTorch ${started.hello.torch} (Python ${started.hello.python}, oneDNN ${
          started.hello.mkldnn ? 'available' : 'not available'}), torch.set_num_threads(1) → ${
          started.hello.threads} thread; torch.nn.grad.conv{1,2,3}d_weight on channels-first tensors.`);
    }
  } else {
    notes.push('PyTorch skipped: --no-pytorch.');
  }
  // Ours on wasm right after ours on cpu: the two run next to each other in every round (paired ratios).
  const wasmImpl = ourImpl('wasm', 'ours wasm, WebAssembly SIMD', WASM_COLOR, simdRegistered ? true : null);
  if (simdRegistered) {
    impls.push(ourImpl('simd', 'ours cpu, WebAssembly SIMD', COLORS.simd, true), wasmImpl);
    impls.push(ourImpl('typescript', 'ours cpu, TypeScript loops', COLORS.typescript, false));
  } else {
    impls.push(ourImpl('typescript', 'ours cpu', COLORS.typescript, null), wasmImpl);
  }
  impls.push(wasmBuiltInImpl);
  const labels = new Map<ImplKey, string>(impls.map(i => [i.key, i.label]));
  labels.set('cpuBuiltIn', cpuBuiltInImpl.label);

  const cpus = os.cpus();
  const machine = `${cpus[0]?.model?.trim() ?? 'unknown cpu'}, ${cpus.length} cores, Node ${process.version}, ${os.platform()} ${
      os.arch()}; tfjs-core ${tf.version_core}`;
  log(`# filter-gradient benchmark (cpu, wasm${torch ? ', PyTorch' : ''})`);
  log(`machine: ${machine}`);
  log(`workloads: ${dir} — ${descriptors} descriptors in ${files.length} files parsed and checked`);
  log(`implementations: ${impls.map(i => i.label).join('; ')}`);
  for (const note of notes) log(`note: ${note}`);
  if (simdRegistered) log(`${SIMD_FLAG} default: ${String(simdDefault)}`);
  log(`timing: 1 warm-up (memory probe) + ${options.runs} timed run(s) per implementation, round-robin (key workloads: ${
      Math.max(options.runs, options.keyRuns)})\n`);

  const results: WorkloadResult[] = [];
  const keyOptions: Options = {...options, runs: Math.max(options.runs, options.keyRuns)};
  const selected = (name: string) => options.only === null || options.only.some(o => name.includes(o));
  const picks = options.training === 'only' ? [] : PICKS.filter(p => selected(p.name));
  try {
    for (const [index, pick] of picks.entries()) {
      const problem = findProblem(loadWorkloadFile(pick.file, dir), pick.name);
      const result = await runWorkload(problem, pick.batch, 1000 + 10 * index, impls, pick.key ? keyOptions : options);
      results.push(result);
      log(`  ${result.label} (batch ${pick.batch}): ${
          result.measurements.map(m => `${m.impl} ${rate(m.gflops)}`).join(', ')} GFLOP/s`);
      await tf.setBackend('cpu');
      checkLeaks(problem.name);
    }

    // The anchor: tfjs's built-in cpu kernel on one ResNet-50 shape, one run; ours (and PyTorch) beside it.
    let anchor: WorkloadResult | null = null;
    if (options.builtIn && options.training !== 'only') {
      const problem = findProblem(loadWorkloadFile(ANCHOR.file, dir), ANCHOR.name);
      log(`  tfjs built-in cpu Conv2DBackpropFilter on ${problem.name} batch ${ANCHOR.batch} (one run, ~15 s) …`);
      const anchorImpls = [...impls.filter(i => i.key !== 'wasm' && i.key !== 'wasmBuiltIn'), cpuBuiltInImpl];
      anchor = await runWorkload(problem, ANCHOR.batch, 7, anchorImpls, keyOptions);
      log(`  anchor: ${anchor.measurements.map(m => `${m.impl} ${rate(m.gflops)}`).join(', ')} GFLOP/s`);
      await tf.setBackend('cpu');
      checkLeaks('anchor');
    } else {
      notes.push(`tfjs built-in cpu kernel skipped: ${options.builtIn ? '--training-only' : '--no-builtin'}.`);
    }

    // The training layers, each at its file's batch, amortized: ours on cpu and wasm, the built-in, PyTorch.
    const training: WorkloadResult[] = [];
    if (options.training !== 'no') {
      const trainingImpls = impls.filter(i => ['pytorch', 'simd', 'wasm', 'wasmBuiltIn'].includes(i.key) ||
                                              (!simdRegistered && i.key === 'typescript'));
      const layers = loadWorkloadFile(TRAINING_FILE, dir).filter(p => selected(p.name));
      log(`\ntraining layers (${TRAINING_FILE}): ${layers.length}, ${options.trainingRuns} amortized runs each`);
      for (const [index, problem] of layers.entries()) {
        const result = await runWorkload(
            problem, problem.batch, 5000 + 10 * index, trainingImpls, {...options, runs: options.trainingRuns}, true);
        training.push(result);
        log(`  ${result.label} (batch ${problem.batch}): ${
            result.measurements.map(m => `${m.impl} ${rate(m.gflops)} (×${m.callsPerRun ?? 1})`).join(', ')} GFLOP/s`);
        await tf.setBackend('cpu');
        checkLeaks(problem.name);
      }
    }

    const total = (performance.now() - wallStart) / 1000;
    const report = writeReport({options, machine, dir, descriptors, files: files.length, notes, simdRegistered, simdDefault, labels,
                                pytorchLabel, results, anchor, training, seconds: total, impls});
    console.log(report.markdown);
    if (options.out !== null) {
      fs.mkdirSync(options.out, {recursive: true});
      fs.writeFileSync(path.join(options.out, 'cpu.md'), report.markdown);
      if (report.svg !== null) fs.writeFileSync(path.join(options.out, 'cpu.svg'), report.svg);
      if (report.trainingSvg !== null) fs.writeFileSync(path.join(options.out, 'cpu_training.svg'), report.trainingSvg);
      fs.writeFileSync(path.join(options.out, 'cpu.json'), `${JSON.stringify(report.json, null, 1)}\n`);
      log(`\nwrote ${path.relative(process.cwd(), path.join(options.out, 'cpu.md'))}, ${
          [report.svg !== null ? 'cpu.svg' : '', report.trainingSvg !== null ? 'cpu_training.svg' : '', 'cpu.json']
              .filter(f => f !== '').join(', ')}`);
    }
    log(`tensors: ${tf.memory().numTensors} live at the end (${tensorsAtStart} at the start); WebAssembly memories: ${
        wasmMemoryCount()}, tfjs-backend-wasm's heap ${bytes(wasmBytes(m => m.buffer === tfjsWasmHeap()))}, others ${
        bytes(wasmBytes(m => m.buffer !== tfjsWasmHeap()))}; total ${total.toFixed(0)} s`);
  } finally {
    torch?.stop();
  }
}

interface ReportInput {
  options: Options;
  machine: string;
  dir: string;
  descriptors: number;
  files: number;
  notes: string[];
  simdRegistered: boolean;
  simdDefault: unknown;
  labels: Map<ImplKey, string>;
  pytorchLabel: string;
  results: WorkloadResult[];
  anchor: WorkloadResult | null;
  training: WorkloadResult[];
  seconds: number;
  impls: Impl[];
}

function writeReport(r: ReportInput): {markdown: string; svg: string | null; trainingSvg: string | null; json: object} {
  const find = (w: WorkloadResult, key: ImplKey) => w.measurements.find(m => m.impl === key);
  const ours: ImplKey[] = r.simdRegistered ? ['simd', 'typescript', 'wasm'] : ['typescript', 'wasm'];
  const cpuKey: ImplKey = r.simdRegistered ? 'simd' : 'typescript';
  /** Ours on wasm ÷ ours on cpu (the fastest cpu path), per workload: the ratio of the median rates. */
  const wasmOverCpu = (w: WorkloadResult) => (find(w, 'wasm')?.gflops ?? NaN) / (find(w, cpuKey)?.gflops ?? NaN);
  /**
   * The same, paired: the median over rounds of cpu time ÷ wasm time in that round. The two run
   * next to each other in every round (round-robin, every other round reversed), so a load that
   * changes over seconds hits both alike; the median of the ratios is robust to a disturbed round.
   */
  const pairedWasmOverCpu = (w: WorkloadResult) => {
    const cpu = find(w, cpuKey)?.times ?? [];
    const wasm = find(w, 'wasm')?.times ?? [];
    const ratios = wasm.slice(0, cpu.length).map((t, i) => cpu[i] / t);
    return ratios.length === 0 ? NaN : summarize(ratios).median;
  };
  const hasTorch = r.impls.some(i => i.key === 'pytorch');
  const out: string[] = [];
  out.push('# Filter-gradient benchmark: cpu and wasm\n');
  out.push(`Code: ${sourceState()}.`);
  const keyRuns = Math.max(r.options.runs, r.options.keyRuns);
  const args = [...(r.options.runs !== 5 ? [`--runs ${r.options.runs}`] : []), ...(r.options.keyRuns !== 15 ? [`--key-runs ${r.options.keyRuns}`] : []),
                ...(r.options.trainingRuns !== 15 ? [`--training-runs ${r.options.trainingRuns}`] : []),
                ...(r.options.training === 'only' ? ['--training-only'] : []), ...(r.options.training === 'no' ? ['--no-training'] : []),
                ...(r.options.only !== null ? [`--only ${r.options.only.join(',')}`] : [])];
  out.push(`\`npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}\` on ${r.machine}; ${
      new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${r.seconds.toFixed(0)} s.`);
  out.push(`Workloads from \`${path.basename(path.dirname(r.dir))}/${path.basename(r.dir)}\` (${r.descriptors} descriptors in ${
      r.files} files parsed and checked); NXC input, XIO filter, float32; batch scaled down from the files' and stated.`);
  out.push(`Each implementation: 1 warm-up call (it also measures memory), then ${r.options.runs} timed run${r.options.runs === 1 ? '' : 's'}, round-robin with the ` +
           `others on the same workload, every other round in reverse order (${keyRuns} on the key workloads ResNet-50 res2a/res3a_branch2b and the built-in's shape, ` +
           `whose ratios the targets are read from; wasm built-in: ${Math.min(r.options.runs, 3)}); a run is one call until its result is ` +
           `read back. GFLOP/s = 2·N·O·(C/G)·K·out-spatial / median time; "(a–b)" is the slowest–fastest run. The machine is ` +
           `shared and noisy: compare figures of one run only.\n`);
  for (const note of r.notes) out.push(`- ${note}`);
  if (r.simdRegistered) out.push(`- ${SIMD_FLAG}: true for "WebAssembly SIMD", false for "TypeScript loops" (default here: ${String(r.simdDefault)}).`);
  out.push('');

  // Key figures.
  const main = r.simdRegistered ? 'simd' : 'typescript';
  if (r.results.length > 0 || r.anchor) out.push('## Key figures (issue 7)\n');
  for (const w of r.results.filter(w => PICKS.find(p => p.name === w.name && p.file === w.source.split(':')[0])?.key)) {
    const m = find(w, main);
    const t = find(w, 'pytorch');
    const ts = find(w, 'typescript');
    const fastest = (x: Measurement | undefined) => x ? gflops(w.flops, x.timing.min) : NaN;
    out.push(`- ${w.label} (batch ${w.batch}): ${r.labels.get(main)} ${rate(m?.gflops ?? NaN)} GFLOP/s${
        t ? ` = **${ratio((m?.gflops ?? NaN) / t.gflops)}** of PyTorch 1 thread (${rate(t.gflops)} GFLOP/s; target ≥ 0.125×); ` +
                `fastest runs ${rate(fastest(m))} vs ${rate(fastest(t))} = ${ratio(fastest(m) / fastest(t))}` :
            ''}${r.simdRegistered && ts ? `; TypeScript loops ${rate(ts.gflops)} GFLOP/s` : ''}; ours wasm ${
        rate(find(w, 'wasm')?.gflops ?? NaN)} GFLOP/s = ${ratio(wasmOverCpu(w))} of ours cpu (paired: ${
        ratio(pairedWasmOverCpu(w))}).`);
  }
  if (r.anchor) {
    const b = find(r.anchor, 'cpuBuiltIn')!;
    for (const key of [...ours.filter(k => k !== 'wasm'), 'pytorch'] as ImplKey[]) {
      const m = find(r.anchor, key);
      if (m) {
        out.push(`- ${r.anchor.label} batch ${r.anchor.batch}: ${r.labels.get(key)} **${ratio(m.gflops / b.gflops)}** tfjs's built-in cpu ` +
                 `Conv2DBackpropFilter (${rate(m.gflops)} vs ${rate(b.gflops)} GFLOP/s${key === 'pytorch' ? '' : '; target ≥ 1000×'}).`);
      }
    }
  }
  out.push('');

  // Throughput.
  const header = ['workload', 'batch', 'shape (C→O, in→out, kernel, stride, pads)', 'GFLOP'];
  const right = [false, true, false, true];
  if (hasTorch) {
    header.push('PyTorch GFLOP/s');
    right.push(true);
  }
  for (const key of ours) {
    header.push(`${r.labels.get(key)} GFLOP/s`);
    right.push(true);
    if (hasTorch) {
      header.push('÷ PyTorch');
      right.push(true);
    }
  }
  header.push('wasm ÷ cpu', 'paired', 'tfjs built-in (wasm) GFLOP/s', 'wasm ÷ built-in');
  right.push(true, true, true, true);
  const rows = r.results.map(w => {
    const t = find(w, 'pytorch');
    const row = [w.label, `${w.batch} (file ${w.fileBatch})`, w.shape, (w.flops / 1e9).toFixed(3)];
    if (hasTorch) row.push(t ? rateRange(w.flops, t.timing) : '–');
    for (const key of ours) {
      const m = find(w, key);
      row.push(m ? rateRange(w.flops, m.timing) : '–');
      if (hasTorch) row.push(m && t ? ratio(m.gflops / t.gflops) : '–');
    }
    const b = find(w, 'wasmBuiltIn');
    const c = find(w, 'wasm');
    row.push(ratio(wasmOverCpu(w)), ratio(pairedWasmOverCpu(w)), b ? rateRange(w.flops, b.timing) : 'n/a', b && c ? ratio(c.gflops / b.gflops) : '–');
    return row;
  });
  const builtInNote = '"n/a": tfjs-backend-wasm\'s only filter gradient is Conv3DBackpropFilterV2 (no Conv2DBackpropFilter, ' +
      'no depthwise one): it runs 2-D problems here as 3-D ones of depth 1, but takes no groups, no dilation, no ' +
      'transposed problem and only "valid"/"same" pads.';
  if (r.results.length > 0) {
    out.push('## Throughput (GFLOP/s: median (slowest–fastest))\n');
    out.push(markdownTable(header, rows, right));
    out.push(`\nwasm ÷ cpu: ${r.labels.get('wasm')} ÷ ${r.labels.get(cpuKey)} (median rates); paired: the median over ` +
             `rounds of that round's cpu ÷ wasm time (the two run next to each other). ${builtInNote}\n`);
  }

  // Anchor.
  if (r.anchor) {
    const a = r.anchor;
    const b = find(a, 'cpuBuiltIn')!;
    out.push(`## Against tfjs's built-in cpu kernel\n`);
    out.push(`${a.label} at batch ${a.batch} (${a.shape}, ${(a.flops / 1e9).toFixed(3)} GFLOP): tfjs's Conv2DBackpropFilter on ` +
             `the cpu backend gets a single call, timed (it takes seconds; no warm-up), in the middle of the others' ${keyRuns} timed runs (after their warm-up). Same input data for tfjs and ours; results compared.\n`);
    out.push(markdownTable(
        ['implementation', 'median ms', 'min–max ms', 'GFLOP/s', '× built-in', `max rel. diff vs ${r.labels.get('typescript')}`],
        a.measurements.map(m => [r.labels.get(m.impl) ?? m.impl, ms(m.timing.median), `${ms(m.timing.min)}–${ms(m.timing.max)}`,
                                 rate(m.gflops), ratio(m.gflops / b.gflops), m.difference === null ? '–' : m.difference.toExponential(1)]),
        [false, true, true, true, true, true]));
    out.push('');
  }

  // Memory.
  if (r.results.length > 0) out.push('## Memory (peak extra, measured on the warm-up call)\n');
  if (r.results.length > 0) out.push(`RSS: the process's resident-set high-water mark during the call above the resident set just before it (Linux ` +
           `VmHWM reset through /proc/self/clear_refs after a full GC${peakRssAvailable() ? '' : ' — not available here'}); ` +
           `it includes scratch buffers, tensors and WebAssembly memory growth. wasm: growth during the call of the WebAssembly ` +
           `memories the implementation uses (cpu SIMD: the micro-kernels' own module; ours on wasm: that module and ` +
           `tfjs-backend-wasm's heap, where the result is allocated) → their size after the call (a WebAssembly memory never ` +
           `shrinks: a workload smaller than an earlier one shows no growth; the micro-kernels' module is shared by cpu and ` +
           `wasm, so it grows on whichever runs first). diff: max |result − ${
               r.labels.get('typescript')}| / max |${r.labels.get('typescript')}|.\n`);
  const memHeader = ['workload', 'x + dy', 'gradient'];
  if (hasTorch) memHeader.push('PyTorch RSS');
  for (const key of ours) {
    memHeader.push(`${r.labels.get(key)}: RSS`);
    if (key !== 'typescript') memHeader.push('wasm');
    if (key !== 'typescript') memHeader.push('diff');
  }
  const memRows = r.results.map(w => {
    const row = [w.label, bytes(w.dataBytes), bytes(w.outputBytes)];
    const rss = (m: Measurement | undefined) => m?.memory.peakRss == null ? '–' : bytes(m.memory.peakRss);
    if (hasTorch) row.push(rss(find(w, 'pytorch')));
    for (const key of ours) {
      const m = find(w, key);
      row.push(rss(m));
      if (key !== 'typescript') {
        row.push(m?.memory.wasmGrowth == null ? '–' : `+${bytes(m.memory.wasmGrowth)} → ${bytes(m.memory.wasmTotal ?? NaN)}`);
      }
      if (key !== 'typescript') row.push(m?.difference == null ? '–' : m.difference.toExponential(1));
    }
    return row;
  });
  if (r.results.length > 0) {
    out.push(markdownTable(memHeader, memRows, memHeader.map((_, c) => c > 0)));
    out.push('');
    out.push('![GFLOP/s per workload and implementation](cpu.svg)');
    out.push('');
  }

  // Training layers.
  const trainingSeries: ImplKey[] = [...(hasTorch ? ['pytorch'] : []), cpuKey, 'wasm', 'wasmBuiltIn'] as ImplKey[];
  if (r.training.length > 0) {
    out.push(`## Training layers (\`${TRAINING_FILE}\`)\n`);
    out.push(`Every layer of the file at the batch it gives (what tfjs users train: MNIST, CIFAR-10, a speech ` +
             `spectrogram model, MobileNet v1 α 0.25 at 128 px, and batch 1–2 ResNet-50/MobileNet layers). ` +
             `${r.options.trainingRuns} timed runs per implementation after 1 warm-up (built-in: ${
                 Math.min(r.options.trainingRuns, 3)}), round-robin, every other round in reverse order; these calls are short, so a run is as many ` +
             `back-to-back calls as take about ${TRAINING_RUN_MS} ms (from the fastest of 3 untimed calls; at most ${
                 MAX_CALLS_PER_RUN}) with one read-back of the last result, divided by the calls (DESIGN.md §7); PyTorch ` +
             `times one call per run itself. Inputs are tensors of the backend, as a model passes them. ` +
             `diff: max |ours wasm − ours cpu| / max |ours cpu|.\n`);
    const isDepthwise = (w: WorkloadResult) => w.depthwise;
    const trainingHeader = ['layer', 'batch', 'shape (C→O, in→out, kernel, stride, pads)', 'MFLOP',
                            ...(hasTorch ? ['PyTorch GFLOP/s'] : []), `${r.labels.get(cpuKey)} GFLOP/s`,
                            `${r.labels.get('wasm')} GFLOP/s`, 'wasm ÷ cpu', 'wasm ÷ cpu, paired', 'tfjs built-in (wasm) GFLOP/s',
                            'wasm ÷ built-in', 'calls per run (cpu, wasm)', 'diff'];
    const trainingRows = r.training.map(w => {
      const c = find(w, cpuKey);
      const m = find(w, 'wasm');
      const b = find(w, 'wasmBuiltIn');
      const t = find(w, 'pytorch');
      return [w.label, String(w.batch), w.shape, (w.flops / 1e6).toFixed(w.flops < 1e7 ? 2 : 1),
              ...(hasTorch ? [t ? rateRange(w.flops, t.timing) : '–'] : []), c ? rateRange(w.flops, c.timing) : '–',
              m ? rateRange(w.flops, m.timing) : '–', ratio(wasmOverCpu(w)), ratio(pairedWasmOverCpu(w)),
              b ? rateRange(w.flops, b.timing) : 'n/a',
              b && m ? ratio(m.gflops / b.gflops) : '–', `${c?.callsPerRun ?? '–'}, ${m?.callsPerRun ?? '–'}`,
              m?.difference == null ? '–' : m.difference.toExponential(1)];
    });
    out.push(markdownTable(trainingHeader, trainingRows, trainingHeader.map((_, c) => c === 1 || c >= 3)));
    out.push(`\n${builtInNote}\n`);
    const summary = (name: string, ws: WorkloadResult[]) => {
      const line = (of: (w: WorkloadResult) => number) => {
        const ratios = ws.map(of).filter(Number.isFinite).sort((a, b) => a - b);
        const worst = ws.find(w => of(w) === ratios[0]);
        return `min **${ratio(ratios[0])}** (${worst?.label}), median **${ratio(summarize(ratios).median)}**, max ${
            ratio(ratios[ratios.length - 1])}`;
      };
      if (ws.length === 0) return `- ${name}: none.`;
      return `- ${name} (${ws.length}): paired ${line(pairedWasmOverCpu)}; by median rates ${line(wasmOverCpu)}.`;
    };
    out.push('Ours on wasm against ours on cpu (the same micro-kernels), per layer: "paired" is the median over ' +
             'rounds of the cpu ÷ wasm time of that round (the two run next to each other in every round), "by ' +
             'median rates" the ratio of the two median GFLOP/s:\n');
    out.push(summary('dense layers', r.training.filter(w => !isDepthwise(w))));
    out.push(summary('depthwise layers', r.training.filter(isDepthwise)));
    out.push(summary('all layers', r.training));
    out.push('');
    out.push('![GFLOP/s per training layer and implementation](cpu_training.svg)');
    out.push('');
  }
  const markdown = out.join('\n') + '\n';

  // Chart: every workload, then the anchor shape with the built-in.
  const series: ImplKey[] = [...(hasTorch ? ['pytorch'] : []), ...ours, 'wasmBuiltIn', ...(r.anchor ? ['cpuBuiltIn'] : [])] as ImplKey[];
  const colors: Record<ImplKey, string> = {pytorch: COLORS.pytorch, simd: COLORS.simd, typescript: COLORS.typescript,
                                           wasm: WASM_COLOR, wasmBuiltIn: '#8c1c13', cpuBuiltIn: COLORS.builtIn};
  const groups = [...r.results, ...(r.anchor ? [r.anchor] : [])].map(w => ({
    label: `${w.label} ×${w.batch}${w === r.anchor ? ' (anchor)' : ''}`,
    values: series.map(key => find(w, key)?.gflops ?? NaN),
  }));
  const svg = r.results.length === 0 ? null : barChartSvg({
    title: 'Filter gradient, Node: GFLOP/s (median), log scale',
    subtitle: `${r.machine.split(',')[0]}, 1 thread each; ${r.options.runs} runs (key workloads ${keyRuns}) after 1 warm-up; ${sourceState()}; batch after ×`,
    unit: 'GFLOP/s (log scale)',
    series: series.map(key => ({name: r.labels.get(key) ?? key, color: colors[key]})),
    groups,
  });
  const json = {
    machine: r.machine,
    code: sourceState(),
    runs: r.options.runs,
    keyRuns,
    notes: r.notes,
    simdFlag: r.simdRegistered ? {name: SIMD_FLAG, default: r.simdDefault} : null,
    implementations: Object.fromEntries(r.labels),
    workloads: r.results,
    anchor: r.anchor,
    training: r.training,
    trainingRunMs: TRAINING_RUN_MS,
  };
  const trainingSvg = r.training.length === 0 ? null : barChartSvg({
    title: `Filter gradient on the training layers (${TRAINING_FILE}), Node: GFLOP/s (median), log scale`,
    subtitle: `${r.machine.split(',')[0]}, 1 thread each; ${r.options.trainingRuns} amortized runs after 1 warm-up; ${
        sourceState()}; batch after ×`,
    unit: 'GFLOP/s (log scale)',
    series: trainingSeries.map(key => ({name: r.labels.get(key) ?? key, color: colors[key]})),
    groups: r.training.map(w => ({label: `${w.label} ×${w.batch}`, values: trainingSeries.map(key => find(w, key)?.gflops ?? NaN)})),
  });
  return {markdown, svg, trainingSvg, json};
}

main().catch(error => {
  console.error(error instanceof Error ? error.stack ?? error.message : error);
  process.exitCode = 1;
});

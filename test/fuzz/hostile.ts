/**
 * Hostile inputs: a generator of invalid calls. Each starts from a valid fuzz problem
 * (test/fuzz/problems.ts) and breaks one thing, drawn from the categories below, then calls the
 * op function or runKernel (under either kernel name). Every call must throw an Error whose
 * message starts with the op's name, before the kernel allocates anything or runs any other
 * kernel (no clock: the work watched is what says nothing ran first), and leave tf.memory() (tensors, bytes, data buffers; textures on webgl) as
 * it was.
 */
import * as tf from '@tensorflow/tfjs-core';

import {convolutionBackpropFilters, ConvolutionBackwardWeights, convTransposeBackpropFilters, ConvTransposeBackwardWeights, OpName} from '../../kernels/index';
import {show} from '../../src/errors';
import {fullFilterShape} from '../cases';
import {FuzzProblem, generateProblem, size} from './problems';
import {problemSeed, Random} from './random';
import {memorySnapshot, sameMemory} from './runner';

export const HOSTILE_CATEGORIES = [
  'rank', 'rank mismatch', 'batch mismatch', 'list attribute value', 'list attribute length', 'list attribute type',
  'int32 overflow', 'groups', 'enum', 'unknown attribute', 'attrs object', 'filterShape attribute',
  'filterShape overflow', 'filterShape too large for memory', 'filterShape tensor', 'filterShape argument',
  'filterShape missing', 'filterShape inconsistent', 'size mismatch', 'empty output', 'zero size', 'dtype',
  'disposed', 'not a tensor-like', 'non-numeric tensor-like', 'ragged tensor-like', 'missing input',
] as const;
export type HostileCategory = typeof HOSTILE_CATEGORIES[number];

export interface HostileCall {
  /** The seed that regenerates it. */
  seed: number;
  category: HostileCategory;
  /** What was broken, e.g. "strides [2,-1]". */
  detail: string;
  op: OpName;
  entry: 'op' | 'runKernel';
  /** Makes the tensors the call needs (the runner disposes them) and returns the call. */
  prepare(): {call: () => unknown; tensors: tf.Tensor[]};
  /** The call converts tensor-likes (number arrays included) first: those allocations are expected (and undone). */
  convertsTensorLikes: boolean;
  /** The exact message, where this generator knows it (the package's newer checks). */
  message?: string;
}

interface TensorSpec {
  shape: number[];
  dtype: tf.DataType;
  /** Dispose it before the call. */
  disposed?: boolean;
  /** int32 values (filterShape). */
  values?: number[];
}

/** A valid call being broken: every field can be edited. */
interface Draft {
  op: OpName;
  transposed: boolean;
  kernelName: string;
  entry: 'op' | 'runKernel';
  input: TensorSpec | {tensorLike: unknown} | undefined;
  outputDelta: TensorSpec | {tensorLike: unknown} | undefined;
  attrs: unknown;
  /** filterShape: as an int32 tensor (or a broken one), or as the op's raw argument. */
  filterShape?: TensorSpec | {argument: unknown};
  convertsTensorLikes: boolean;
  message?: string;
}

const MAX_INT32 = 2 ** 31 - 1;
const MAX_FILTER_ELEMENTS = 2 ** 28;
const HUGE_VALUES = [2 ** 31, 2 ** 32, 2 ** 40, Number.MAX_SAFE_INTEGER];
const NOT_INTEGERS: unknown[] = [-1, -7, 0.5, 1.5, NaN, Infinity, -Infinity, '2', true, null, [1], {}, 2 ** 53, 1e300];

function attrsOf(d: Draft): Record<string, unknown> {
  if (typeof d.attrs !== 'object' || d.attrs === null) throw new Error('hostile: attrs already replaced');
  return d.attrs as Record<string, unknown>;
}

function spatialRankOf(problem: FuzzProblem): number {
  return problem.inputShape.length - 2;
}

function withSpatial(problem: FuzzProblem, shape: number[], axis: number, value: number): number[] {
  const copy = [...shape];
  const nxc = (problem.attrs.dataFormat ?? 'NXC') === 'NXC';
  copy[nxc ? 1 + axis : 2 + axis] = value;
  return copy;
}

function channelAxis(problem: FuzzProblem, shape: number[]): number {
  return (problem.attrs.dataFormat ?? 'NXC') === 'NXC' ? shape.length - 1 : 1;
}

/** Breaks `d` (made from `problem`) in one way of `category`; returns what was broken. */
function breakDraft(category: HostileCategory, d: Draft, problem: FuzzProblem, random: Random): string {
  const r = spatialRankOf(problem);
  const attrs = attrsOf(d);
  const input = d.input as TensorSpec;
  const outputDelta = d.outputDelta as TensorSpec;
  const listNames = ['strides', 'padsBegin', 'padsEnd', 'dilations', ...(d.transposed ? ['outputPadding'] : [])];
  const minimum = (name: string): number => name === 'strides' || name === 'dilations' ? 1 : 0;
  switch (category) {
    case 'rank': {
      const rank = random.pick([0, 1, 2, 6, 7]);
      const shape = Array.from({length: rank}, () => random.int(1, 3));
      const which = random.pick(['input', 'outputDelta', 'both'] as const);
      if (which !== 'outputDelta') input.shape = shape;
      if (which !== 'input') outputDelta.shape = [...shape];
      return `${which} of rank ${rank}`;
    }
    case 'rank mismatch': {
      const rank = random.pick([3, 4, 5].filter(k => k !== r + 2));
      outputDelta.shape = Array.from({length: rank}, (_, i) => i === 0 ? outputDelta.shape[0] : random.int(1, 4));
      return `outputDelta of rank ${rank} for an input of rank ${r + 2}`;
    }
    case 'batch mismatch': {
      outputDelta.shape[0] = input.shape[0] + random.int(1, 2);
      return `batches ${input.shape[0]} and ${outputDelta.shape[0]}`;
    }
    case 'list attribute value': {
      const name = random.pick(listNames);
      const list = Array.from({length: r}, () => minimum(name) + random.int(0, 2));
      const bad = random.pick([...NOT_INTEGERS, ...(minimum(name) === 1 ? [0] : [])]);
      list[random.int(0, r - 1)] = bad as number;
      if (!['strides', 'dilations'].includes(name)) attrs.autoPad = undefined;  // pads must be read
      attrs[name] = list;
      return `${name} ${show(list)}`;
    }
    case 'list attribute length': {
      const name = random.pick(listNames);
      const length = random.pick([0, ...[r - 1, r + 1, r + 2].filter(k => k > 0 && k !== r)]);
      attrs[name] = Array.from({length}, () => minimum(name) + 1);
      return `${name} of ${length} values for spatial rank ${r}`;
    }
    case 'list attribute type': {
      const name = random.pick(listNames);
      attrs[name] = random.pick<unknown>([1, '1,1', {0: 1, length: r}, true, new Map(), () => 1, new Float32Array(r).fill(1.5)]);
      return `${name} = ${show(attrs[name])}`;
    }
    case 'int32 overflow': {
      const name = random.pick(listNames);
      const list = Array.from({length: r}, () => minimum(name));
      list[random.int(0, r - 1)] = random.pick(HUGE_VALUES);
      attrs[name] = list;
      attrs.autoPad = undefined;
      d.message = `${d.op}: attribute '${name}' must hold values of at most ${MAX_INT32} (tfjs sizes are int32), got ${show(list)}`;
      return `${name} ${show(list)}`;
    }
    case 'groups': {
      const groups = problem.spec.groups;
      const notDividing = [groups + 1, groups * 2 + 1, 7, 1000003].filter(
          g => input.shape[channelAxis(problem, input.shape)] % g !== 0 || outputDelta.shape[channelAxis(problem, outputDelta.shape)] % g !== 0);
      attrs.groups = random.pick<unknown>([...NOT_INTEGERS.filter(v => v !== null), 0, ...HUGE_VALUES, ...notDividing]);
      return `groups ${show(attrs.groups)}`;
    }
    case 'enum': {
      const name = random.pick(['autoPad', 'dataFormat', 'filterFormat']);
      const values: Record<string, unknown[]> = {
        autoPad: ['same', '', 'SAME', 'valid ', 'none_', 'explicit', 5, true, {}, ['valid']],
        dataFormat: ['nxc', 'NHWC', 'NCHW', 'NDHWC', '', 'nCx', 3, ['NXC']],
        filterFormat: ['HWIO', 'oix', 'xio', 'OHWI', '', 7, ...(d.transposed ? ['OXI', 'IXO'] : ['IOX', 'XOI'])],
      };
      attrs[name] = random.pick(values[name]);
      return `${name} ${show(attrs[name])}`;
    }
    case 'unknown attribute': {
      const name = random.pick(
          ['stride', 'pads', 'kernel', 'filter_shape', 'padsbegin', 'weightsShape', 'auto_pad', 'group', 'dataformat',
           ...(d.transposed ? [] : ['outputPadding'])]);
      attrs[name] = random.pick<unknown>([[1], 1, 'x']);
      return `attribute '${name}'`;
    }
    case 'attrs object': {
      d.attrs = random.pick<unknown>([null, undefined, 'strides', 42, [], [1, 1], true]);
      return `attrs ${show(d.attrs)}`;
    }
    case 'filterShape attribute': {
      d.filterShape = undefined;
      const bad = random.pick<unknown>([
        [], [0], Array(r + 1).fill(1), Array(r + 3).fill(2), [...Array(r - 1).fill(2), random.pick(NOT_INTEGERS)], 3, '3', {},
      ]);
      attrs.filterShape = bad;
      return `filterShape attribute ${show(bad)}`;
    }
    case 'filterShape overflow': {
      // A spatial shape whose product alone passes 2^31 − 1 (valid sizes each, for 2-D and 3-D).
      d.filterShape = undefined;
      const spatial = r === 1 ? [random.pick([2 ** 31, 2 ** 32, 2 ** 40, Number.MAX_SAFE_INTEGER])] :
                                Array.from({length: r}, () => random.pick([65536, 2 ** 20, MAX_INT32]));
      attrs.filterShape = spatial;
      return `filterShape ${show(spatial)}`;
    }
    case 'filterShape too large for memory': {
      // Between 2^28 and 2^31 − 1 elements: fits int32, not the result size limit.
      d.filterShape = undefined;
      const full = fullFilterShape(
          d.transposed, (problem.attrs.filterFormat as string) ?? 'XIO', problem.spec.groups * problem.spec.inputChannelsPerGroup,
          problem.spec.groups * problem.spec.outputDeltaChannelsPerGroup, problem.spec.groups, problem.spec.kernel);
      const channels = size(full) / size(problem.spec.kernel);
      const wanted = random.int(MAX_FILTER_ELEMENTS + 1, MAX_INT32);
      const spatial = [Math.max(1, Math.floor(wanted / channels)), ...Array(r - 1).fill(1)];
      if (spatial[0] * channels <= MAX_FILTER_ELEMENTS) spatial[0] = Math.floor(MAX_FILTER_ELEMENTS / channels) + 1;
      // The size is checked before the output shape: no pads are needed to get there.
      attrs.filterShape = spatial;
      const filterShape = full.map(v => v);
      let k = 0;
      const letters = ((problem.attrs.filterFormat as string) ?? 'XIO').replace('X', 'X'.repeat(r)).split('');
      letters.forEach((letter, i) => {
        if (letter === 'X') filterShape[i] = spatial[k++];
      });
      d.message = `${d.op}: filter shape [${filterShape}] must hold at most ${MAX_FILTER_ELEMENTS} elements (1 GiB of float32) ` +
          `for the result to fit in memory, got ${size(filterShape)}`;
      return `filterShape ${show(spatial)} (${size(filterShape)} elements)`;
    }
    case 'filterShape tensor': {
      const kind = random.pick(['float32', 'bool', 'scalar', '2-D', 'zero', 'negative', 'empty', 'too long']);
      const kernel = problem.spec.kernel;
      const specs: Record<string, TensorSpec> = {
        'float32': {shape: [r], dtype: 'float32', values: kernel},
        'bool': {shape: [r], dtype: 'bool', values: kernel.map(() => 1)},
        'scalar': {shape: [], dtype: 'int32', values: [kernel[0]]},
        '2-D': {shape: [1, r], dtype: 'int32', values: kernel},
        'zero': {shape: [r], dtype: 'int32', values: kernel.map((k, i) => i === 0 ? 0 : k)},
        'negative': {shape: [r], dtype: 'int32', values: kernel.map((k, i) => i === r - 1 ? -k : k)},
        'empty': {shape: [0], dtype: 'int32', values: []},
        'too long': {shape: [r + 1], dtype: 'int32', values: [...kernel, 1]},
      };
      d.filterShape = specs[kind];
      return `filterShape input: ${kind}`;
    }
    case 'filterShape argument': {
      d.entry = 'op';
      d.convertsTensorLikes = true;
      const bad = random.pick<unknown>([
        [NaN, ...Array(r - 1).fill(1)], [2.5, ...Array(r - 1).fill(1)], ['3', ...Array(r - 1).fill(1)],
        [Infinity, ...Array(r - 1).fill(1)], [...Array(r - 1).fill(1), -2], 'abc', [[1], [2]],
      ]);
      d.filterShape = {argument: bad};
      return `filterShape argument ${show(bad)}`;
    }
    case 'filterShape missing': {
      d.filterShape = undefined;
      delete attrs.filterShape;
      return 'no filterShape';
    }
    case 'filterShape inconsistent': {
      const format = (problem.attrs.filterFormat as string) ?? 'XIO';
      const full = fullFilterShape(
          d.transposed, format, problem.spec.groups * problem.spec.inputChannelsPerGroup,
          problem.spec.groups * problem.spec.outputDeltaChannelsPerGroup, problem.spec.groups, problem.spec.kernel);
      const letters = format.replace('X', 'X'.repeat(r)).split('');
      const channelAxes = letters.flatMap((l, i) => l === 'X' ? [] : [i]);
      const axis = random.pick(channelAxes);
      full[axis] += random.int(1, 3);
      d.filterShape = undefined;
      attrs.filterShape = full;
      return `full filterShape ${show(full)}`;
    }
    case 'size mismatch': {
      const axis = random.int(0, r - 1);
      const current = outputDelta.shape[(problem.attrs.dataFormat ?? 'NXC') === 'NXC' ? 1 + axis : 2 + axis];
      const changed = random.chance(0.5) || current === 1 ? current + random.int(1, 3) : current - 1;
      outputDelta.shape = withSpatial(problem, outputDelta.shape, axis, changed);
      return `outputDelta spatial axis ${axis}: ${changed} instead of ${current}`;
    }
    case 'empty output': {
      // A kernel (through the spatial filterShape) longer than the padded input of the convolution.
      d.filterShape = undefined;
      attrs.autoPad = 'valid';
      const kernel = problem.spec.inputSpatial.map(s => s + random.int(1, 4));
      attrs.filterShape = kernel;
      if (d.transposed) {
        // The transposed output only grows with the kernel: make it empty with pads instead.
        attrs.autoPad = undefined;
        attrs.filterShape = problem.spec.kernel;
        attrs.padsBegin = problem.spec.kernel.map(() => 1000);
        attrs.padsEnd = problem.spec.kernel.map(() => 1000);
      }
      return d.transposed ? 'pads 1000 on the transposed op' : `kernel ${show(kernel)} with autoPad valid`;
    }
    case 'zero size': {
      const which = random.pick(['input', 'outputDelta'] as const);
      const t = which === 'input' ? input : outputDelta;
      const axis = random.chance(0.5) ? channelAxis(problem, t.shape) : (problem.attrs.dataFormat ?? 'NXC') === 'NXC' ?
                                                                            random.int(1, r) :
                                                                            random.int(2, r + 1);
      t.shape = [...t.shape];
      t.shape[axis] = 0;
      return `${which} shape ${show(t.shape)}`;
    }
    case 'dtype': {
      const which = random.pick(['input', 'outputDelta'] as const);
      // complex64 only where the backend can make one (wasm has no Complex kernel).
      const complex = tf.getKernel('Complex', tf.getBackend()) !== undefined;
      const dtype = random.pick(['int32', 'bool', 'string', ...(complex ? ['complex64' as const] : [])] as const);
      (which === 'input' ? input : outputDelta).dtype = dtype;
      return `${which} of dtype ${dtype}`;
    }
    case 'disposed': {
      const which = random.pick(['input', 'outputDelta', ...(d.filterShape && 'shape' in d.filterShape ? ['filterShape'] : [])]);
      const spec = which === 'filterShape' ? d.filterShape as TensorSpec : which === 'input' ? input : outputDelta;
      spec.disposed = true;
      d.message = `${d.op}: ${d.entry === 'op' ? 'argument' : 'input'} '${which}' is a disposed tensor`;
      return `${which} disposed`;
    }
    case 'not a tensor-like': {
      d.entry = 'op';
      d.convertsTensorLikes = true;
      const bad = random.pick<unknown>([{}, 'abc', [[1, 2], [3]], [['a', 'b']], {values: [1, 2]}, undefined, null, Symbol('x')]);
      const which = random.pick(['input', 'outputDelta'] as const);
      d[which] = {tensorLike: bad};
      return `${which} ${typeof bad === 'symbol' ? String(bad) : show(bad)}`;
    }
    case 'non-numeric tensor-like': {
      // Nested arrays of the right shape with one element that is not a number (tf.tensor would
      // make it NaN, 0 or a parsed number).
      d.entry = 'op';
      d.convertsTensorLikes = true;
      const which = random.pick(['input', 'outputDelta'] as const);
      const spec = d[which] as TensorSpec;
      if (spec.shape[0] === 0) spec.shape[0] = 1;
      const at = spec.shape.map(n => random.int(0, n - 1));
      const leaf = random.pick<unknown>(['a', '3', null, true, false, undefined, {}, 1n]);
      const nested = (depth: number, prefix: number[]): unknown => depth === spec.shape.length ?
          (prefix.every((v, i) => v === at[i]) ? leaf : 0.5) :
          Array.from({length: spec.shape[depth]}, (_, i) => nested(depth + 1, [...prefix, i]));
      d[which] = {tensorLike: nested(0, [])};
      d.message = `${d.op}: argument '${which}' must be a tensor or a tensor-like of numbers; element [${
          at.join('][')}] is not a number, got ${show(leaf)}`;
      return `${which} with ${typeof leaf === 'bigint' ? `${leaf}n` : show(leaf)} at [${at}]`;
    }
    case 'ragged tensor-like': {
      // Nested arrays whose sizes differ along one depth (tf.tensor infers the shape from the
      // first element and may make a tensor with fewer values than its shape).
      d.entry = 'op';
      d.convertsTensorLikes = true;
      const which = random.pick(['input', 'outputDelta'] as const);
      const spec = d[which] as TensorSpec;
      if (spec.shape[0] === 0) spec.shape[0] = 1;
      const nested = (depth: number): unknown => depth === spec.shape.length ?
          0.5 :
          Array.from({length: spec.shape[depth]}, () => nested(depth + 1));
      const value = nested(0) as unknown[];
      // Walk down at least one level (the outermost array alone cannot be ragged) to a random
      // array, and make it differ in length from a sibling: change it if it has one, else add
      // a longer sibling.
      let parent = value;
      let target = value[0] as unknown[];
      const path: number[] = [];
      for (;;) {
        const i = random.int(0, parent.length - 1);
        path.push(i);
        target = parent[i] as unknown[];
        if (!Array.isArray(target[0]) || random.chance(0.4)) break;
        parent = target;
      }
      const longer = [...target, Array.isArray(target[0]) ? [...target[0] as unknown[]] : 0.5];
      if (parent.length === 1) parent.push(longer);
      else if (target.length > 0 && random.chance(0.5)) target.pop();
      else parent[path[path.length - 1]] = longer;
      d[which] = {tensorLike: value};
      return `${which}: nested arrays ragged below [${path}]`;
    }
    case 'missing input': {
      d.entry = 'runKernel';
      const which = random.pick(['input', 'outputDelta'] as const);
      if (which === 'input') d.input = undefined;
      else d.outputDelta = undefined;
      return `no ${which}`;
    }
  }
}

/** The hostile call of `seed`: a valid problem with one thing broken. */
export function hostileCall(seed: number, categories: readonly HostileCategory[] = HOSTILE_CATEGORIES): HostileCall {
  const random = new Random(seed);
  const problem = generateProblem(random.seed());
  const category = random.pick(categories);
  const useRunKernel = random.chance(0.5);
  const d: Draft = {
    op: problem.op,
    transposed: problem.spec.transposed,
    kernelName: random.chance(0.5) ? problem.op :
                                     problem.spec.transposed ? ConvTransposeBackwardWeights : ConvolutionBackwardWeights,
    entry: useRunKernel ? 'runKernel' : 'op',
    input: {shape: [...problem.inputShape], dtype: 'float32'},
    outputDelta: {shape: [...problem.outputDeltaShape], dtype: 'float32'},
    attrs: {...problem.attrs},
    filterShape: problem.filterShapeInput && {shape: [problem.filterShapeInput.length], dtype: 'int32', values: problem.filterShapeInput},
    convertsTensorLikes: false,
  };
  // The messages below name the layout as XIO when none is given; oneDNN v3's
  // ConvTransposeBackwardWeights defaults to XOI instead, so spell the spec's default out there.
  if (d.kernelName === ConvTransposeBackwardWeights && attrsOf(d).filterFormat === undefined) attrsOf(d).filterFormat = 'XIO';
  // Batch 0 makes some breakages (a zero-sized axis) ambiguous; keep a batch.
  for (const t of [d.input, d.outputDelta] as TensorSpec[]) if (t.shape[0] === 0) t.shape[0] = 1;
  const detail = breakDraft(category, d, problem, random);
  return {
    seed,
    category,
    detail,
    op: d.op,
    entry: d.entry,
    convertsTensorLikes: d.convertsTensorLikes,
    message: d.message,
    prepare: () => prepareDraft(d),
  };
}

function makeTensor(spec: TensorSpec): tf.Tensor {
  const count = size(spec.shape);
  if (spec.dtype === 'string') return tf.tensor(Array(count).fill('a'), spec.shape, 'string');
  if (spec.dtype === 'complex64') return tf.complex(tf.zeros(spec.shape), tf.zeros(spec.shape));
  return tf.tensor(spec.values ?? new Float32Array(count), spec.shape, spec.dtype);
}

function prepareDraft(d: Draft): {call: () => unknown; tensors: tf.Tensor[]} {
  const tensors: tf.Tensor[] = [];
  const make = (value: TensorSpec | {tensorLike: unknown} | undefined): unknown => {
    if (value === undefined) return undefined;
    if ('tensorLike' in value) return value.tensorLike;
    const t = tf.tidy(() => makeTensor(value));
    if (value.disposed) t.dispose();
    else tensors.push(t);
    return t;
  };
  const input = make(d.input);
  const outputDelta = make(d.outputDelta);
  const filterShape = d.filterShape === undefined ? undefined : 'argument' in d.filterShape ? d.filterShape.argument : make(d.filterShape);
  const opFunction = d.transposed ? convTransposeBackpropFilters : convolutionBackpropFilters;
  const call = d.entry === 'op' ?
      () => opFunction(input as never, outputDelta as never, d.attrs as never, filterShape as never) :
      () => tf.engine().runKernel(
          d.kernelName,
          {
            ...(input !== undefined ? {input} : {}), ...(outputDelta !== undefined ? {outputDelta} : {}),
            ...(filterShape !== undefined ? {filterShape} : {}),
          } as tf.NamedTensorMap,
          d.attrs as tf.NamedAttrMap);
  return {call, tensors};
}

/** Counts what a call does before it throws: kernels run and buffers written through the backend. */
function watchWork(): {stop(): string[]} {
  const engine = tf.engine() as unknown as {runKernel: (name: string, ...rest: unknown[]) => unknown};
  const backend = tf.backend() as unknown as Record<string, unknown>;
  const seen: string[] = [];
  const restores: Array<() => void> = [];
  const ours = new Set<string>(
      ['ConvolutionBackpropFilters', 'ConvTransposeBackpropFilters', ConvolutionBackwardWeights, ConvTransposeBackwardWeights]);
  const originalRunKernel = engine.runKernel;
  engine.runKernel = function(this: unknown, name: string, ...rest: unknown[]) {
    if (!ours.has(name)) seen.push(`kernel ${name}`);
    return originalRunKernel.call(this, name, ...rest);
  };
  restores.push(() => engine.runKernel = originalRunKernel);
  for (const method of ['write', 'makeTensorInfo', 'runWebGLProgram', 'uploadToGPU', 'compileAndRun']) {
    const original = backend[method];
    if (typeof original !== 'function') continue;
    backend[method] = function(this: unknown, ...args: unknown[]) {
      seen.push(`backend.${method}`);
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    };
    restores.push(() => backend[method] = original);
  }
  return {
    stop() {
      restores.forEach(restore => restore());
      return seen;
    },
  };
}

/** Runs one hostile call; undefined when it behaved (see the file's header), else what went wrong. */
export function runHostile(h: HostileCall): string | undefined {
  const {call, tensors} = h.prepare();
  try {
    const before = memorySnapshot();
    const watch = watchWork();
    let thrown: unknown;
    let returned: unknown;
    let threw = false;
    try {
      returned = call();
    } catch (e) {
      threw = true;
      thrown = e;
    }
    const work = watch.stop();
    if (!threw) {
      tf.dispose(returned as tf.Tensor);
      return `returned ${returned instanceof tf.Tensor ? `a tensor of shape [${returned.shape}]` : show(returned)} instead of throwing`;
    }
    if (!(thrown instanceof Error)) return `threw a non-Error: ${show(thrown)}`;
    const message = thrown.message;
    if (h.message !== undefined) {
      if (message !== h.message) return `threw '${message}', expected '${h.message}'`;
    } else if (!message.startsWith(`${h.op}: `)) {
      return `threw an error that does not name the op: ${thrown.name}: ${message}`;
    }
    const after = memorySnapshot();
    if (!sameMemory(before, after)) return `left memory changed: ${JSON.stringify(before)} → ${JSON.stringify(after)} (${message})`;
    if (!h.convertsTensorLikes && work.length > 0) return `did work before throwing: ${[...new Set(work)].join(', ')} (${message})`;
    return undefined;
  } finally {
    tf.dispose(tensors);
  }
}

export function describeHostile(h: HostileCall): string {
  return `${h.category}: ${h.detail} (${h.op} via ${h.entry}; hostile seed ${h.seed})`;
}

/**
 * The generated invalid calls 0 … count − 1 of `seed`, each run by runHostile: what went wrong
 * (one line per misbehaving call) and the categories drawn, sorted.
 */
export function runHostileSample(seed: number, count: number): {failures: string[]; categories: string[]} {
  const failures: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < count; i++) {
    const h = hostileCall(problemSeed(seed, i));
    seen.add(h.category);
    const failure = runHostile(h);
    if (failure !== undefined) failures.push(`${describeHostile(h)}: ${failure}`);
  }
  return {failures, categories: [...seen].sort()};
}

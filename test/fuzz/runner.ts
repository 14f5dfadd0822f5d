/**
 * Runs fuzz problems on the current tfjs backend and compares with the float64 reference
 * (test/reference.ts): NaN positions and ±Infinity signs exactly, finite values within
 * atol + rtol·|expected|. Every call must also leave tf.memory() (tensors, bytes, data
 * buffers; on webgl textures in use and GPU bytes in use) as it found it. A failing problem
 * is shrunk to a smaller one that still fails and printed as a self-contained snippet.
 */
import * as tf from '@tensorflow/tfjs-core';

import {convolutionBackpropFilters, convTransposeBackpropFilters} from '../../kernels/index';
import {settledWebgpuBackend} from '../helpers/util';
import {referenceFilterGradient} from '../reference';
import {FuzzProblem, materialize, problemData, simplerSpecs} from './problems';

export interface CheckOptions {
  atol: number;
  rtol: number;
  /** A problem's own tolerance, in place of atol and rtol (a float16 device's grows with the reduction). */
  toleranceFor?: (problem: FuzzProblem) => {atol: number; rtol: number};
  /** Makes an input tensor as the backend should receive it (webgl: already on the GPU). */
  place?: (values: Float32Array, shape: number[]) => tf.Tensor;
}

export interface Expected {
  shape: number[];
  values: Float64Array;
}

export function expectedOf(problem: FuzzProblem): Expected {
  const data = problemData(problem);
  return referenceFilterGradient(
      problem.spec.transposed, {shape: problem.inputShape, values: data.input},
      {shape: problem.outputDeltaShape, values: data.outputDelta}, problem.referenceAttrs);
}

/** What a call could leave behind. */
export interface MemorySnapshot {
  tensors: number;
  bytes: number;
  dataBuffers: number;
  textures?: number;
  gpuBytes?: number;
  /** webgpu: GPU buffers in use. */
  buffers?: number;
}

export function memorySnapshot(): MemorySnapshot {
  const webgpu = settledWebgpuBackend();
  const memory = tf.memory() as tf.MemoryInfo & {numBytesInGPU?: number};
  const snapshot: MemorySnapshot = {tensors: memory.numTensors, bytes: memory.numBytes, dataBuffers: memory.numDataBuffers};
  const backend = tf.backend() as {getTextureManager?: () => {getNumUsedTextures(): number}};
  const textures = backend.getTextureManager?.().getNumUsedTextures();
  if (textures !== undefined) snapshot.textures = textures;
  if (memory.numBytesInGPU !== undefined) snapshot.gpuBytes = memory.numBytesInGPU;
  if (webgpu !== undefined) snapshot.buffers = webgpu.bufferManager.getNumUsedBuffers();
  return snapshot;
}

export function sameMemory(a: MemorySnapshot, b: MemorySnapshot): boolean {
  return a.tensors === b.tensors && a.bytes === b.bytes && a.dataBuffers === b.dataBuffers &&
      a.textures === b.textures && a.gpuBytes === b.gpuBytes && a.buffers === b.buffers;
}

function describeValue(v: number): string {
  return Number.isNaN(v) ? 'NaN' : String(v);
}

/**
 * Undefined when `actual` matches `expected`: NaN exactly where expected is NaN, the same
 * infinities, and finite values within tolerance; else a description of the mismatches.
 */
export function compareWithReference(
    actual: ArrayLike<number>, expected: ArrayLike<number>, atol: number, rtol: number): string | undefined {
  if (actual.length !== expected.length) return `${actual.length} values, expected ${expected.length}`;
  let count = 0;
  let worst = -1;
  let worstExcess = -Infinity;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i];
    const e = expected[i];
    let excess: number;
    if (Number.isNaN(e) || !Number.isFinite(e)) {
      excess = Object.is(a, e) || (Number.isNaN(a) && Number.isNaN(e)) ? 0 : Infinity;
    } else {
      excess = Number.isFinite(a) ? Math.abs(a - e) - (atol + rtol * Math.abs(e)) : Infinity;
    }
    if (excess > 0) {
      count++;
      if (excess > worstExcess) {
        worst = i;
        worstExcess = excess;
      }
    }
  }
  if (count === 0) return undefined;
  return `${count} of ${expected.length} values differ; worst: element ${worst} is ${describeValue(actual[worst])}, ` +
      `expected ${describeValue(expected[worst])} (atol ${atol}, rtol ${rtol})`;
}

/**
 * An input tensor as the current backend holds its data: on webgl uploaded to a texture first,
 * so that the memory compared around the call is the call's own.
 */
export function placeOnBackend(values: Float32Array, shape: number[]): tf.Tensor {
  const t = tf.tensor(values, shape, 'float32');
  const backend = tf.backend() as {uploadToGPU?: (dataId: object) => void};
  if (values.length > 0) backend.uploadToGPU?.(t.dataId);
  return t;
}

/** Nested arrays of `values` in `shape` (a tensor-like). */
function nest(values: Float32Array, shape: number[]): unknown {
  if (shape.length === 1) return Array.from(values);
  const inner = values.length / shape[0];
  return Array.from({length: shape[0]}, (_, i) => nest(values.subarray(i * inner, (i + 1) * inner), shape.slice(1)));
}

/**
 * Runs one problem on the current backend. Undefined when it passes; else why it failed (a
 * throw, a wrong shape or dtype, wrong values, or memory left behind).
 */
export function runProblem(problem: FuzzProblem, options: CheckOptions, expected?: Expected): string | undefined {
  const call = callProblem(problem, options, expected);
  try {
    return call.failure ?? checkCall(call, call.result!.dataSync());
  } finally {
    tf.dispose(call.made);
  }
}

/**
 * runProblem reading the result with `await data()` (tfjs-webgpu's dataSync reads zeros in
 * headless Chromium on SwiftShader).
 */
export async function runProblemAsync(problem: FuzzProblem, options: CheckOptions, expected?: Expected): Promise<string | undefined> {
  const call = callProblem(problem, options, expected);
  try {
    return call.failure ?? checkCall(call, await call.result!.data());
  } finally {
    tf.dispose(call.made);
  }
}

interface ProblemCall {
  made: tf.Tensor[];
  atol: number;
  rtol: number;
  want: Expected;
  before: MemorySnapshot;
  result?: tf.Tensor;
  failure?: string;
}

/**
 * The problem's result on the current backend as it runs now (e.g. on one thread), for a run that
 * checks another setting against it exactly (`npm run fuzz -- --threads N --against-one-thread`).
 * A call that throws gives the reference's values, so the run reports the throw.
 */
export function resultOf(problem: FuzzProblem): Expected {
  const call = callProblem(problem, {atol: 0, rtol: 0}, {shape: [], values: new Float64Array(0)});
  try {
    if (call.result === undefined) return expectedOf(problem);
    return {shape: call.result.shape, values: Float64Array.from(call.result.dataSync())};
  } finally {
    tf.dispose([...call.made, ...(call.result ? [call.result] : [])]);
  }
}

/** Places the inputs and calls the problem's entry point; `failure` when that threw. */
function callProblem(problem: FuzzProblem, options: CheckOptions, expected?: Expected): ProblemCall {
  const want = expected ?? expectedOf(problem);
  const {atol, rtol} = options.toleranceFor?.(problem) ?? options;
  const data = problemData(problem);
  const place = options.place ?? placeOnBackend;
  const {spec} = problem;
  const made: tf.Tensor[] = [];
  const input = place(data.input, problem.inputShape);
  made.push(input);
  const outputDelta = place(data.outputDelta, problem.outputDeltaShape);
  made.push(outputDelta);
  let filterShapeTensor: tf.Tensor1D | undefined;
  if (problem.filterShapeInput && (spec.entry.startsWith('runKernel') || spec.filterShapeAsTensor)) {
    filterShapeTensor = tf.tensor1d(problem.filterShapeInput, 'int32');
    made.push(filterShapeTensor);
  }
  const before = memorySnapshot();
  try {
    const attrs = problem.attrs as never;
    const opFunction = spec.transposed ? convTransposeBackpropFilters : convolutionBackpropFilters;
    const filterShapeArgument = filterShapeTensor ?? problem.filterShapeInput;
    let result: tf.Tensor;
    if (spec.entry === 'op') {
      result = opFunction(input, outputDelta, attrs, filterShapeArgument);
    } else if (spec.entry === 'op-tensor-likes') {
      result = opFunction(
          nest(data.input, problem.inputShape) as tf.TensorLike, nest(data.outputDelta, problem.outputDeltaShape) as tf.TensorLike,
          attrs, filterShapeArgument);
    } else {
      const inputs: tf.NamedTensorMap = {input, outputDelta, ...(filterShapeTensor ? {filterShape: filterShapeTensor} : {})};
      result = tf.engine().runKernel(problem.kernelName, inputs, attrs) as tf.Tensor;
    }
    return {made, atol, rtol, want, before, result};
  } catch (e) {
    const after = memorySnapshot();
    return {made, atol, rtol, want, before, failure: `threw ${(e as Error)?.message ?? e}${sameMemory(before, after) ? '' : ' (and left memory behind)'}`};
  }
}

/** Compares the result's values, disposes it, and checks memory is back where it was. */
function checkCall(call: ProblemCall, values: ArrayLike<number>): string | undefined {
  const {result, want, before} = call;
  let failure: string | undefined;
  if (result!.dtype !== 'float32') failure = `result dtype ${result!.dtype}, expected float32`;
  else if (!arraysEqual(result!.shape, want.shape)) failure = `result shape [${result!.shape}], expected [${want.shape}]`;
  else failure = compareWithReference(values, want.values, call.atol, call.rtol);
  result!.dispose();
  const after = memorySnapshot();
  if (failure === undefined && !sameMemory(before, after)) {
    failure = `memory changed: before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`;
  }
  return failure;
}

function arraysEqual(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/**
 * Greedy shrinking: repeatedly takes the first simpler spec that still fails, until none does
 * (or `maxRuns` runs were spent). Returns the smallest failing problem and its failure.
 */
export function shrink(
    problem: FuzzProblem, failure: string, options: CheckOptions, maxRuns = 400): {problem: FuzzProblem; failure: string} {
  let current = {problem, failure};
  let runs = 0;
  let improved = true;
  while (improved && runs < maxRuns) {
    improved = false;
    for (const candidate of simplerSpecs(current.problem.spec)) {
      const smaller = materialize(candidate);
      if (smaller === undefined) continue;
      if (++runs > maxRuns) break;
      const why = runProblem(smaller, options);
      if (why !== undefined) {
        current = {problem: smaller, failure: why};
        improved = true;
        break;
      }
    }
  }
  return current;
}

/** How to get each backend in a standalone script (run from the repository root): imports, then statements. */
const BACKEND_SETUP: Record<string, [imports: string[], statements: string[]]> = {
  'cpu': [[`import '@tensorflow/tfjs-backend-cpu';`], [`await tf.setBackend('cpu');`]],
  'wasm': [[`import '@tensorflow/tfjs-backend-wasm';`], [`await tf.setBackend('wasm');`]],
  'tensorflow': [[`import '@tensorflow/tfjs-node';`], [`await tf.setBackend('tensorflow');`]],
  'cpu-composite': [
    [`import '@tensorflow/tfjs-backend-cpu';`, `import {registerCpuCompositeBackend} from './test/helpers/composite_backends';`],
    [`registerCpuCompositeBackend();  // the composite (tfjs-node/wasm) kernel on tfjs's cpu ops`, `await tf.setBackend('cpu-composite');`],
  ],
  'webgl': [[`import '@tensorflow/tfjs-backend-webgl';`], [`await tf.setBackend('webgl');`]],
};

/**
 * A self-contained TypeScript snippet that makes the failing call (saved in the repository root,
 * it runs with tsx): shapes, attributes, the data from its seed (the generator is inlined) with
 * the special values written in, and what the reference expects.
 */
export function reproducer(
    problem: FuzzProblem, backend: string, failure: string, origin: string, expected?: Expected): string {
  const want = expected ?? expectedOf(problem);
  const {spec} = problem;
  const fn = spec.transposed ? 'convTransposeBackpropFilters' : 'convolutionBackpropFilters';
  const baseBackend = backend.startsWith('webgl') ? 'webgl' : backend;
  const [setupImports, setupStatements] = BACKEND_SETUP[baseBackend] ?? [[], [`await tf.setBackend('${backend}');`]];
  const json = (v: unknown) => JSON.stringify(v);
  const specials = spec.specials.map(s => {
    const name = s.tensor === 'input' ? 'inputValues' : 'outputDeltaValues';
    return `${name}[${s.index} % ${name}.length] = ${describeValue(s.value)};`;
  });
  const usesTensor = problem.filterShapeInput !== undefined && (spec.entry.startsWith('runKernel') || spec.filterShapeAsTensor);
  const filterShapeExpression = problem.filterShapeInput === undefined ? undefined :
      usesTensor ? `tf.tensor1d(${json(problem.filterShapeInput)}, 'int32')` : json(problem.filterShapeInput);
  let call: string;
  if (spec.entry.startsWith('runKernel')) {
    const inputs = `{input, outputDelta${filterShapeExpression ? `, filterShape: ${filterShapeExpression}` : ''}}`;
    call = `tf.engine().runKernel('${problem.kernelName}', ${inputs}, attrs) as tf.Tensor`;
  } else {
    const args = spec.entry === 'op-tensor-likes' ? 'input.arraySync(), outputDelta.arraySync()' : 'input, outputDelta';
    call = `${fn}(${args}, attrs${filterShapeExpression ? `, ${filterShapeExpression}` : ''})`;
  }
  const shownExpected = Array.from(want.values.slice(0, 64), v => Number.isFinite(v) ? Number(v.toPrecision(7)) : describeValue(v));
  const indent = (lines: string[]) => lines.map(line => `  ${line}`);
  return [
    `// fuzz failure on backend '${backend}': ${failure}`,
    `// ${origin}`,
    baseBackend === 'webgl' ? `// Run it in a browser page from the repository root (bundled, e.g. by esbuild as karma does).` :
                              `// Save as a .ts file in the repository root and run it with npx tsx.`,
    `import * as tf from '@tensorflow/tfjs-core';`,
    ...setupImports,
    `import {${fn}} from './kernels/index';  // or from 'tfjs-conv-backprop-filters'`,
    ``,
    `/** The fuzzer's data: mulberry32 values in [-1, 1) (test/helpers/util.ts seededValues). */`,
    `function seededValues(count: number, seed: number): Float32Array {`,
    `  let state = seed >>> 0;`,
    `  const values = new Float32Array(count);`,
    `  for (let i = 0; i < count; i++) {`,
    `    state = (state + 0x6d2b79f5) >>> 0;`,
    `    let t = state;`,
    `    t = Math.imul(t ^ (t >>> 15), t | 1);`,
    `    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);`,
    `    values[i] = ((((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1);`,
    `  }`,
    `  return values;`,
    `}`,
    ``,
    `async function main() {`,
    ...indent([
      ...setupStatements,
      `const inputValues = seededValues(${problem.inputShape.reduce((a, b) => a * b, 1)}, ${spec.dataSeed});`,
      `const outputDeltaValues = seededValues(${problem.outputDeltaShape.reduce((a, b) => a * b, 1)}, ${(spec.dataSeed + 1) >>> 0});`,
      ...specials,
      `const input = tf.tensor(inputValues, ${json(problem.inputShape)}, 'float32');`,
      `const outputDelta = tf.tensor(outputDeltaValues, ${json(problem.outputDeltaShape)}, 'float32');`,
      `const attrs = ${json(problem.attrs)} as never;`,
      `const dW = ${call};`,
      `console.log(dW.shape, Array.from(dW.dataSync()));`,
      `// the reference (test/reference.ts) gives shape ${json(want.shape)}${want.values.length > 64 ? ', first 64 values' : ''}:`,
      `// ${json(shownExpected)}`,
    ]),
    `}`,
    `main();`,
  ].join('\n');
}

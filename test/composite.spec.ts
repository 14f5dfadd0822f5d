import * as tf from '@tensorflow/tfjs-core';
import {execFileSync} from 'node:child_process';
import * as path from 'node:path';

import {CONV_BACKPROP_FILTERS_CHUNK_BYTES, computeGeometry, convolutionBackpropFilters, ConvolutionBackpropFilters, ConvolutionBackwardWeights, ConvTransposeBackpropFilters, ConvTransposeBackwardWeights} from '../kernels/index';
import {DEFAULT_CHUNK_BYTES} from '../src/composite/chunk_budget';
import {estimateChunkBytes, planChunks} from '../src/composite/chunk_plan';
import {sliceMerged, transposeMerged, windowFrame} from '../src/composite/filter_gradient_composite';
import {NODE_BACKENDS} from './backends';
import {CASES, FilterGradientCase, fullFilterShape, geometryOfCase} from './cases';
import {expectClose, seededTensor, seededValues} from './helpers/util';
import {ReferenceAttrs, referenceFilterGradient, referenceOutputDeltaShape} from './reference';

/**
 * The composite kernel of kernels/node (tfjs ops, for tfjs-node's `tensorflow` and `wasm`):
 * its chunking under the memory budget, its registration, and how it behaves inside the engine
 * (no leaks, caller's tensors intact, the gradient tape undisturbed). The case table, golden
 * and error specs run it too, on every composite backend of test/backends.ts.
 */
const COMPOSITE_BACKENDS = NODE_BACKENDS.filter(b => b.kernel?.startsWith('composite'));

function size(shape: readonly number[]) {
  return shape.reduce((a, b) => a * b, 1);
}


function withBudget<T>(bytes: number, f: () => T): T {
  const saved = tf.env().get(CONV_BACKPROP_FILTERS_CHUNK_BYTES);
  tf.env().set(CONV_BACKPROP_FILTERS_CHUNK_BYTES, bytes);
  try {
    return f();
  } finally {
    tf.env().set(CONV_BACKPROP_FILTERS_CHUNK_BYTES, saved);
  }
}

/** Runs a case through runKernel; returns the values (the result is disposed). */
function run(c: FilterGradientCase): Float32Array {
  return tf.tidy(() => {
    const input = tf.tensor(seededValues(size(c.inputShape), c.seed), c.inputShape, 'float32');
    const outputDelta = tf.tensor(seededValues(size(c.outputDeltaShape), c.seed + 1000), c.outputDeltaShape, 'float32');
    const inputs: tf.NamedTensorMap = {input, outputDelta};
    if (c.filterShapeInput) inputs.filterShape = tf.tensor1d(c.filterShapeInput, 'int32');
    return (tf.engine().runKernel(c.op, inputs, c.attrs as tf.NamedAttrMap) as tf.Tensor).dataSync() as Float32Array;
  });
}

function expected(c: FilterGradientCase) {
  return referenceFilterGradient(
      c.op === ConvTransposeBackpropFilters,
      {shape: c.inputShape, values: seededValues(size(c.inputShape), c.seed)},
      {shape: c.outputDeltaShape, values: seededValues(size(c.outputDeltaShape), c.seed + 1000)},
      {...(c.attrs as Omit<ReferenceAttrs, 'kernel'>), kernel: c.kernel});
}

/** Problems for the strided routes of the composite (NXC shapes; run in NXC and NCX). */
const STRIDED_PROBLEMS: Array<{
  id: string; transposed?: boolean; input: number[]; outputDeltaChannels: number; kernel: number[];
  attrs: {strides: number[]; dilations?: number[]; padsBegin?: number[]; padsEnd?: number[]; groups?: number};
}> = [
  {id: '2-D 1×1 stride 2 (one phase per axis)', input: [2, 9, 10, 8], outputDeltaChannels: 6, kernel: [1, 1],
   attrs: {strides: [2, 2]}},
  {id: '2-D 3×3 dilation 2 stride 2, groups 2 (one phase, q = k)', input: [2, 11, 12, 8], outputDeltaChannels: 4,
   kernel: [3, 3], attrs: {strides: [2, 2], dilations: [2, 2], padsBegin: [1, 2], padsEnd: [2, 1], groups: 2}},
  {id: '3-D 2×2×2 stride 3 (two phases of three)', input: [1, 7, 8, 9, 3], outputDeltaChannels: 2, kernel: [2, 2, 2],
   attrs: {strides: [3, 3, 3], padsBegin: [1, 0, 1]}},
  {id: '1-D kernel 3 dilation 2 stride 4 (phases 0 and 2 of 4)', input: [2, 23, 9], outputDeltaChannels: 5,
   kernel: [3], attrs: {strides: [4], dilations: [2], padsBegin: [3], padsEnd: [1]}},
  {id: 'transposed 2-D 1×1 stride 2', transposed: true, input: [2, 5, 4, 8], outputDeltaChannels: 12,
   kernel: [1, 1], attrs: {strides: [2, 2]}},
  {id: 'transposed 2-D 3×2 stride (2, 3), groups 2', transposed: true, input: [1, 4, 3, 4], outputDeltaChannels: 6,
   kernel: [3, 2], attrs: {strides: [2, 3], padsBegin: [1, 0], padsEnd: [0, 1], groups: 2}},
];

describe('composite kernel chunk plan', () => {
  const problem = CASES.find(c => c.id.startsWith('conv1d_groups2_dilation2_asym/NCX'))!;  // batch 3

  it('uses one chunk under the default budget for small problems', () => {
    const plan = planChunks(geometryOfCase(problem), DEFAULT_CHUNK_BYTES);
    expect(plan.chunks.length).toBe(1);
    expect(plan.chunks[0]).toEqual({batchBegin: 0, batchSize: 3, rowBegin: 0, rowCount: geometryOfCase(problem).axes[0].diffDstSize});
  });

  it('puts as many samples in a chunk as the budget holds', () => {
    const geometry = geometryOfCase(problem);
    const rows = geometry.axes[0].diffDstSize;
    const plan = planChunks(geometry, estimateChunkBytes(geometry, 2, rows));
    expect(plan.samplesPerChunk).toBe(2);
    expect(plan.rowsPerChunk).toBe(rows);
    expect(plan.chunks.map(c => [c.batchBegin, c.batchSize])).toEqual([[0, 2], [2, 1]]);
    expect(plan.chunkBytes).toBeLessThanOrEqual(plan.budgetBytes);
  });

  it('splits rows of one sample when one sample is over budget, at least one row per chunk', () => {
    for (const c of CASES) {
      const geometry = geometryOfCase(c);
      const rows = geometry.axes[0].diffDstSize;
      for (const budget of [1, estimateChunkBytes(geometry, 1, Math.max(1, rows >> 1))]) {
        const plan = planChunks(geometry, budget);
        // Every (sample, row) exactly once.
        const seen = new Array<number>(geometry.batch * rows).fill(0);
        for (const chunk of plan.chunks) {
          for (let n = chunk.batchBegin; n < chunk.batchBegin + chunk.batchSize; n++) {
            for (let r = chunk.rowBegin; r < chunk.rowBegin + chunk.rowCount; r++) seen[n * rows + r]++;
          }
        }
        expect(seen.every(count => count === 1)).withContext(`${c.id}, budget ${budget}`).toBe(true);
        expect(plan.samplesPerChunk).toBe(1);
        if (budget === 1) expect(plan.rowsPerChunk).toBe(1);
        else expect(plan.chunkBytes).toBeLessThanOrEqual(budget);
      }
    }
  });

  it('plans no chunk for a batch of 0', () => {
    const geometry = computeGeometry(
        ConvolutionBackpropFilters,
        {input: {shape: [0, 5, 3], dtype: 'float32'}, outputDelta: {shape: [0, 3, 2], dtype: 'float32'}},
        {strides: [1], filterShape: [3]});
    expect(planChunks(geometry, DEFAULT_CHUNK_BYTES).chunks).toEqual([]);
  });
});

/**
 * Regression: the window frame was Q·s long per axis whatever was read, so a valid stride (or
 * dilation, with pads to match) far larger than src made a frame of the stride's size: strides
 * [2^30] on 5 elements ended on wasm in "memory access out of bounds" after ~11 s. Positions and
 * kernel offsets that read no src value are cut off now, and one position has no stride.
 */
const FAR_PAST_THE_INPUT = [
  {id: 'strides [2^30] on 5 elements (one position, reads src[0])', input: [1, 5, 1], outputDelta: [1, 1, 1],
   attrs: {strides: [2 ** 30], filterShape: [1]}, expected: [1], frameLength: 1},
  {id: 'strides [2^30] on 5 elements, kernel 3 (reads src[0..2])', input: [1, 5, 1], outputDelta: [1, 1, 1],
   attrs: {strides: [2 ** 30], filterShape: [3]}, expected: [1, 1, 1], frameLength: 3},
  {id: 'dilation 2^30 with pads 2^30 (tap 0 reads only padding)', input: [1, 5, 1], outputDelta: [1, 5, 1],
   attrs: {strides: [1], dilations: [2 ** 30], padsBegin: [2 ** 30], padsEnd: [0], filterShape: [2]},
   expected: [0, 5], frameLength: 5},
  {id: '2-D, strides [2^30, 1] with pads 2^30 ahead (position 1 reads rows 0 and 1, position 0 nothing)', input: [1, 2, 3, 1],
   outputDelta: [1, 2, 3, 1], attrs: {strides: [2 ** 30, 1], padsBegin: [2 ** 30, 0], padsEnd: [0, 0], filterShape: [2, 1]},
   expected: [3, 3], frameLength: 2},
];

describe('composite kernel window frame', () => {
  for (const p of FAR_PAST_THE_INPUT) {
    it(`stays within what is read: ${p.id}`, () => {
      const geometry = computeGeometry(
          ConvolutionBackpropFilters,
          {input: {shape: p.input, dtype: 'float32'}, outputDelta: {shape: p.outputDelta, dtype: 'float32'}}, p.attrs);
      const chunk = {batchBegin: 0, batchSize: 1, rowBegin: 0, rowCount: geometry.axes[0].diffDstSize};
      const frame = windowFrame(geometry, chunk)!;
      expect(frame.axes[0].length * frame.axes[0].stride).toBe(p.frameLength);
      for (const axis of frame.axes) expect(axis.srcCount + axis.padBefore + axis.padAfter).toBeLessThanOrEqual(6);
    });
  }
});

describe('composite kernel helpers', () => {
  it('transposeMerged equals tf.transpose (unit axes dropped, adjacent axes merged)', () => {
    const cases: Array<[number[], number[]]> = [
      [[2, 3, 4], [2, 0, 1]], [[2, 1, 3, 4], [3, 1, 0, 2]], [[1, 5, 1, 2], [2, 0, 3, 1]], [[2, 3, 4, 5, 2], [3, 1, 0, 2, 4]],
      [[3, 2, 2, 3, 2, 4], [3, 5, 1, 0, 2, 4]], [[4, 1, 3], [1, 0, 2]], [[2, 3], [0, 1]],
    ];
    for (const [shape, perm] of cases) {
      tf.tidy(() => {
        const x = seededTensor(shape, 3);
        const ours = transposeMerged(x, perm);
        expect(ours.shape).toEqual(tf.transpose(x, perm).shape);
        expect(Array.from(ours.dataSync())).withContext(`[${shape}] by [${perm}]`).toEqual(Array.from(tf.transpose(x, perm).dataSync()));
      });
    }
  });

  it('sliceMerged equals tf.slice (whole axes and single indices merged)', () => {
    const cases: Array<[number[], number[], number[]]> = [
      [[1, 4, 5, 3, 3], [0, 0, 1, 0, 0], [1, 4, 3, 3, 3]], [[2, 3, 4], [1, 0, 0], [1, 3, 4]], [[2, 3, 4], [1, 1, 0], [1, 2, 4]],
      [[3, 4, 5, 6], [0, 1, 2, 1], [3, 2, 3, 4]], [[2, 2, 3, 2, 2], [1, 0, 1, 0, 0], [1, 2, 2, 2, 2]], [[5], [1], [3]],
    ];
    for (const [shape, begin, size] of cases) {
      tf.tidy(() => {
        const x = seededTensor(shape, 4);
        const ours = sliceMerged(x, begin, size);
        expect(ours.shape).toEqual(size);
        expect(Array.from(ours.dataSync())).withContext(`[${shape}] from [${begin}] size [${size}]`)
            .toEqual(Array.from(tf.slice(x, begin, size).dataSync()));
      });
    }
  });
});

describe('composite kernel budget flag', () => {
  it(`is registered by the package with a default of 64 MiB`, () => {
    expect(tf.env().getNumber(CONV_BACKPROP_FILTERS_CHUNK_BYTES)).toBe(64 * 2 ** 20);
    expect(CONV_BACKPROP_FILTERS_CHUNK_BYTES).toBe('CONV_BACKPROP_FILTERS_CHUNK_BYTES');
  });
});

for (const backend of COMPOSITE_BACKENDS) {
  describe(`composite kernel on ${backend.name}:`, () => {
    beforeAll(async () => {
      expect(await tf.setBackend(backend.name)).toBe(true);
    });
    afterAll(async () => {
      await tf.setBackend('cpu');
    });

    it('gives the same result in chunks of one row of one sample as in one chunk, on every case', () => {
      let splitBoth = 0;
      for (const c of CASES) {
        const geometry = geometryOfCase(c);
        const oneChunk = withBudget(Infinity, () => run(c));
        const tiny = withBudget(1, () => run(c));
        const plan = planChunks(geometry, 1);
        if (geometry.batch > 1 && geometry.axes[0].diffDstSize > 1) {
          expect(plan.chunks.length).toBe(geometry.batch * geometry.axes[0].diffDstSize);
          splitBoth++;
        }
        expect(planChunks(geometry, Infinity).chunks.length).toBe(geometry.batch === 0 ? 0 : 1);
        const reference = expected(c).values;
        expectClose(oneChunk, reference, `${c.id}: one chunk vs reference`, 1e-4, 1e-4);
        expectClose(tiny, oneChunk, `${c.id}: 1-byte budget vs one chunk`, 1e-5, 1e-5);
        expectClose(tiny, reference, `${c.id}: 1-byte budget vs reference`, 1e-4, 1e-4);
      }
      expect(splitBoth).toBeGreaterThan(CASES.length / 2);
    });

    it('gives the same result with several samples per chunk', () => {
      const c = CASES.find(k => k.id.startsWith('conv1d_groups2_dilation2_asym/NXC'))!;
      const geometry = geometryOfCase(c);
      const budget = estimateChunkBytes(geometry, 2, geometry.axes[0].diffDstSize);
      expect(planChunks(geometry, budget).chunks.map(k => k.batchSize)).toEqual([2, 1]);
      expectClose(withBudget(budget, () => run(c)), withBudget(Infinity, () => run(c)), c.id, 1e-5, 1e-5);
    });

    // Strided windows take three routes in the composite: an axis whose taps all read one phase
    // is subsampled before the channel transpose when its runs are long; otherwise its phases
    // are split off by a transpose, and the phases no tap reads are dropped.
    for (const p of STRIDED_PROBLEMS) {
      for (const dataFormat of ['NXC', 'NCX'] as const) {
        it(`strided windows: ${p.id}, ${dataFormat}`, () => {
          const transposed = p.transposed === true;
          const toLayout = (shape: number[]) =>
              dataFormat === 'NXC' ? shape : [shape[0], shape[shape.length - 1], ...shape.slice(1, -1)];
          const inputShape = toLayout(p.input);
          const attrs = {...p.attrs, dataFormat, kernel: p.kernel};
          const outputDeltaShape = referenceOutputDeltaShape(transposed, inputShape, p.outputDeltaChannels, attrs);
          const c: FilterGradientCase = {
            id: p.id,
            op: transposed ? ConvTransposeBackpropFilters : ConvolutionBackpropFilters,
            inputShape,
            outputDeltaShape,
            kernel: p.kernel,
            attrs: {
              ...p.attrs, dataFormat, filterFormat: 'OIX',
              filterShape: fullFilterShape(
                  transposed, 'OIX', p.input[p.input.length - 1], p.outputDeltaChannels, p.attrs.groups ?? 1, p.kernel),
            },
            seed: 77,
          };
          const reference = expected(c).values;
          expectClose(withBudget(Infinity, () => run(c)), reference, `${p.id} ${dataFormat}`, 1e-4, 1e-4);
          expectClose(withBudget(1, () => run(c)), reference, `${p.id} ${dataFormat}, 1-byte budget`, 1e-4, 1e-4);
        });
      }
    }

    it('rejects a budget that is not a positive number', () => {
      const c = CASES[0];
      const before = tf.memory().numTensors;
      for (const bad of [0, -1, NaN]) {
        expect(() => withBudget(bad, () => run(c)))
            .toThrowError(`${c.op}: tfjs flag 'CONV_BACKPROP_FILTERS_CHUNK_BYTES' must be a positive number of bytes, got ${
                Number.isNaN(bad) ? 'NaN' : bad}`);
      }
      expect(tf.memory().numTensors).toBe(before);
    });

    it('leaves the backend as it found it and the inputs intact, in one chunk and in many', () => {
      const x = seededTensor([2, 7, 6, 4], 5);
      const dy = seededTensor([2, 4, 3, 6], 6);
      const xValues = x.dataSync().slice();
      const attrs = {strides: [2, 2], padsBegin: [1, 1], padsEnd: [1, 0], groups: 2, filterShape: [3, 3]};
      for (const budget of [Infinity, 1]) {
        const tensors = tf.memory().numTensors;
        const dataIds = tf.backend().numDataIds();
        const dW = withBudget(budget, () => convolutionBackpropFilters(x, dy, attrs));
        expect(tf.memory().numTensors).toBe(tensors + 1);
        expect(tf.backend().numDataIds()).toBe(dataIds + 1);
        expect([x, dy].some(t => t.dataId === dW.dataId)).toBe(false);
        dW.dispose();
        expect(tf.memory().numTensors).toBe(tensors);
        expect(tf.backend().numDataIds()).toBe(dataIds);
        expect(x.dataSync()).toEqual(xValues);
      }
      tf.dispose([x, dy]);
    });

    it('runs inside a gradient computation without touching the tape', () => {
      // L(a) = Σ a·dW(x, dy): dL/da = dW. Our kernel runs while the tape records; the ops it
      // runs inside must not be recorded (no tensors kept for them), and the gradient is exact.
      const x = seededTensor([2, 5, 5, 2], 7);
      const dy = seededTensor([2, 3, 3, 3], 8);
      const a = seededTensor([3, 3, 2, 3], 9);
      const attrs = {strides: [1, 1], filterShape: [3, 3]};
      // Σ u·w with its gradient g·w given by hand: tfjs-core alone registers no gradients. w is
      // kept by hand too (customGrad's save() clones, which on wasm the engine counts as a leak).
      let kept: tf.Tensor | undefined;
      const loss = (u: tf.Tensor) => {
        const w = tf.keep(convolutionBackpropFilters(x, dy, attrs));
        kept = w;
        return tf.customGrad(((v: tf.Tensor) => ({value: tf.sum(tf.mul(v, w)), gradFunc: (g: tf.Tensor) => tf.mul(g, w)})) as
                             unknown as Parameters<typeof tf.customGrad>[0])(u) as tf.Scalar;
      };
      const before = tf.memory().numTensors;
      const {value, grad} = tf.valueAndGrad(loss)(a);
      kept!.dispose();
      const dW = convolutionBackpropFilters(x, dy, attrs);
      expectClose(grad.dataSync(), dW.dataSync(), 'dL/da', 0, 0);
      tf.dispose([value, grad, dW]);
      expect(tf.memory().numTensors).toBe(before);
      tf.dispose([x, dy, a]);
    });

    for (const p of FAR_PAST_THE_INPUT) {
      it(`computes ${p.id} (a regression: a frame of the stride's size)`, () => {
        const dW = convolutionBackpropFilters(tf.ones(p.input), tf.ones(p.outputDelta), p.attrs);
        expect(Array.from(dW.dataSync())).toEqual(p.expected);
        tf.dispose(dW);
      });
    }

    // Regression: tfjs moves a tensor made on another backend on first access, and its IS_TEST
    // leak check (on in this suite) credited the moves made inside the composite's inner ops to
    // those ops: the kernel threw "internal memory leak (2 data ids)". Inputs are copied now.
    for (const from of ['cpu', 'wasm', 'cpu-composite'].filter(name => name !== backend.name)) {
      it(`takes inputs made on ${from} (IS_TEST on), leaving them on ${from} and memory flat`, async () => {
        expect(tf.env().getBool('IS_TEST')).toBe(true);
        await tf.setBackend(from);
        const input = tf.ones([1, 3, 1]);
        const outputDelta = tf.ones([1, 2, 1]);
        const x = seededTensor([2, 6, 3], 21);
        const dy = seededTensor([2, 11, 4], 22);
        const filterShape = tf.tensor1d([2, 3, 4], 'int32');  // conv transpose, XIO: (K, C, O)
        const fromBackend = tf.backend();
        await tf.setBackend(backend.name);
        const before = tf.memory();
        const dW = convolutionBackpropFilters(input, outputDelta, {strides: [1], filterShape: [2]});
        expect(Array.from(dW.dataSync())).toEqual([2, 2]);
        const transposeAttrs = {strides: [2], padsBegin: [1], padsEnd: [1], outputPadding: [1]};
        const dWt = tf.engine().runKernel(
            ConvTransposeBackpropFilters, {input: x, outputDelta: dy, filterShape}, transposeAttrs) as tf.Tensor;
        expectClose(
            dWt.dataSync(),
            referenceFilterGradient(
                true, {shape: x.shape, values: x.dataSync()}, {shape: dy.shape, values: dy.dataSync()},
                {...transposeAttrs, kernel: [2]}).values,
            'convTranspose, inputs and filterShape from another backend', 1e-4, 1e-4);
        tf.dispose([dW, dWt]);
        expect(tf.memory().numTensors).toBe(before.numTensors);
        expect(tf.memory().numBytes).toBe(before.numBytes);
        expect([input, outputDelta, x, dy, filterShape].every(t => tf.engine().state.tensorInfo.get(t.dataId)?.backend === fromBackend))
            .toBe(true);
        tf.dispose([input, outputDelta, x, dy, filterShape]);
      });
    }

    it('is registered under both names of both ops', () => {
      for (const name of [ConvolutionBackpropFilters, ConvolutionBackwardWeights, ConvTransposeBackpropFilters,
                          ConvTransposeBackwardWeights]) {
        expect(tf.getKernel(name, backend.name)).withContext(name).toBeDefined();
      }
    });
  });
}

describe('the built package (composite kernels)', () => {
  it('registers the composite kernels for tensorflow and wasm without loading either backend package', () => {
    const root = path.resolve(__dirname, '..');
    const out = execFileSync(process.execPath, ['-e', `
      const tf = require('@tensorflow/tfjs-core');
      require('tfjs-conv-backprop-filters');
      const names = ['ConvolutionBackpropFilters', 'ConvTransposeBackpropFilters', 'ConvolutionBackwardWeights',
                     'ConvTransposeBackwardWeights'];
      const loaded = Object.keys(require.cache).filter(f => /tfjs-(node|backend-wasm)/.test(f));
      console.log(JSON.stringify({
        tensorflow: names.filter(n => tf.getKernel(n, 'tensorflow')),
        wasm: names.filter(n => tf.getKernel(n, 'wasm')),
        loaded,
        budget: tf.env().getNumber('${CONV_BACKPROP_FILTERS_CHUNK_BYTES}'),
      }));`], {cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']});
    const all = [ConvolutionBackpropFilters, ConvTransposeBackpropFilters, ConvolutionBackwardWeights, ConvTransposeBackwardWeights];
    expect(JSON.parse(out)).toEqual({tensorflow: all, wasm: all, loaded: [], budget: 64 * 2 ** 20});
  });
});

import * as tf from '@tensorflow/tfjs-core';

import {CONV_BACKPROP_FILTERS_CHUNK_BYTES, convolutionBackpropFilters, convTransposeBackpropFilters} from '../kernels/index';
import {NODE_BACKENDS} from './backends';
import {describeSummary, runFuzz} from './fuzz/fuzz';
import {generateProblem, problemData} from './fuzz/problems';
import {problemSeed} from './fuzz/random';
import {memorySnapshot} from './fuzz/runner';
import {CI_COUNT, CI_SEED, fuzzSettings} from './fuzz/settings';

/**
 * The CI sample of the differential fuzzer (`npm run fuzz` runs long ones): CI_COUNT random
 * problems of both ops per backend, fixed seed, against the float64 reference (and on the
 * composite kernel again in the smallest chunks); then special values (NaN, ±Infinity, exact
 * zeros) in every problem; batches of 0; and bit-identical repeats. A failure prints the problem's seed and a shrunk, self-contained reproducer.
 */
for (const backend of NODE_BACKENDS) {
  describe(`fuzz on ${backend.name}:`, () => {
    const settings = fuzzSettings(backend.name);
    const check = {atol: settings.atol, rtol: settings.rtol};

    beforeAll(async () => {
      expect(await tf.setBackend(backend.name)).toBe(true);
    });
    afterAll(async () => {
      await tf.setBackend('cpu');  // specs that pick no backend run on cpu
    });

    it(`passes ${CI_COUNT} random problems (seed ${CI_SEED}) against the reference`, () => {
      const summary = runFuzz(
          {backend: backend.name, seed: CI_SEED, count: CI_COUNT, check, generate: {specials: settings.specials}});
      if (summary.failures.length > 0) fail(describeSummary(summary));
      expect(summary.passed).toBe(CI_COUNT);
    });

    if (backend.kernel?.startsWith('composite')) {
      it(`passes ${CI_COUNT} random problems in chunks of one row of one sample (a chunk budget of 1 byte)`, () => {
        const saved = tf.env().get(CONV_BACKPROP_FILTERS_CHUNK_BYTES);
        tf.env().set(CONV_BACKPROP_FILTERS_CHUNK_BYTES, 1);
        try {
          const summary = runFuzz({
            backend: backend.name, cliBackend: `${backend.name} --chunk-bytes 1`, seed: CI_SEED + 3, count: CI_COUNT, check,
            generate: {specials: settings.specials},
          });
          if (summary.failures.length > 0) fail(describeSummary(summary));
          expect(summary.passed).toBe(CI_COUNT);
        } finally {
          tf.env().set(CONV_BACKPROP_FILTERS_CHUNK_BYTES, saved);
        }
      });
    }

    it(`propagates NaN and ±Infinity exactly as the reference does (${settings.specials === 'any' ? 'in either tensor' : settings.specialsNote})`, () => {
      const summary = runFuzz({
        backend: backend.name, seed: CI_SEED + 1, count: 150, check,
        generate: {specials: settings.specials, specialRate: 1},
      });
      if (summary.failures.length > 0) fail(describeSummary(summary));
      expect(summary.passed).toBe(150);
    });

    it('returns a zero gradient of the right shape for a batch of 0, in 1-D, 2-D and 3-D, every layout', () => {
      const problems: Array<{transposed: boolean; input: number[]; outputDelta: number[]; attrs: object; shape: number[]}> = [
        {transposed: false, input: [0, 7, 3], outputDelta: [0, 3, 4], attrs: {strides: [2], filterShape: [3]}, shape: [3, 3, 4]},
        {
          transposed: false, input: [0, 4, 6, 5], outputDelta: [0, 6, 3, 2],
          attrs: {strides: [2, 2], padsBegin: [1, 0], dilations: [1, 2], groups: 2, dataFormat: 'NCX', filterFormat: 'OIX', filterShape: [3, 2]},
          shape: [6, 2, 3, 2],
        },
        {
          transposed: true, input: [0, 2, 3, 2, 4], outputDelta: [0, 4, 6, 4, 2],
          attrs: {strides: [2, 2, 2], autoPad: 'SAME_UPPER', filterFormat: 'IOX', filterShape: [3, 3, 3]}, shape: [4, 2, 3, 3, 3],
        },
        {
          transposed: true, input: [0, 3, 3, 6], outputDelta: [0, 5, 5, 3],
          attrs: {strides: [1, 1], groups: 3, filterFormat: 'XOI', filterShape: [3, 3]}, shape: [3, 3, 1, 6],
        },
      ];
      for (const p of problems) {
        const input = tf.zeros(p.input);
        const outputDelta = tf.zeros(p.outputDelta);
        const before = memorySnapshot();
        const result = (p.transposed ? convTransposeBackpropFilters : convolutionBackpropFilters)(input, outputDelta, p.attrs as never);
        expect(result.shape).withContext(JSON.stringify(p)).toEqual(p.shape);
        expect(result.dtype).toBe('float32');
        const values = result.dataSync();
        expect(values.length).toBe(p.shape.reduce((a, b) => a * b, 1));
        expect(values.every(v => Object.is(v, 0))).withContext(`${JSON.stringify(p)}: all +0`).toBe(true);
        result.dispose();
        expect(memorySnapshot()).toEqual(before);
        tf.dispose([input, outputDelta]);
      }
    });

    it('gives bit-identical results when a call is repeated', () => {
      for (let i = 0; i < 100; i++) {
        const problem = generateProblem(problemSeed(CI_SEED + 2, i), {specials: settings.specials, specialRate: 0.3});
        const data = problemData(problem);
        const input = tf.tensor(data.input, problem.inputShape, 'float32');
        const outputDelta = tf.tensor(data.outputDelta, problem.outputDeltaShape, 'float32');
        const op = problem.spec.transposed ? convTransposeBackpropFilters : convolutionBackpropFilters;
        // The op function takes the spec's defaults; the layout is spelt out for problems drawn for
        // ConvTransposeBackwardWeights, whose omitted filterFormat is XOI.
        const attrs = {...problem.attrs, filterFormat: problem.referenceAttrs.filterFormat};
        const runs = [0, 1, 2].map(() => {
          const result = op(input, outputDelta, attrs as never, problem.filterShapeInput);
          const bits = new Uint32Array(Float32Array.from(result.dataSync()).buffer);
          result.dispose();
          return bits;
        });
        expect(runs[1]).withContext(`problem seed ${problem.seed}, second call`).toEqual(runs[0]);
        expect(runs[2]).withContext(`problem seed ${problem.seed}, third call`).toEqual(runs[0]);
        tf.dispose([input, outputDelta]);
      }
    });
  });
}

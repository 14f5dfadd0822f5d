import * as tf from '@tensorflow/tfjs-core';

import {convolutionBackpropFilters, ConvolutionBackwardWeights, convTransposeBackpropFilters} from '../kernels/index';
import {NODE_BACKENDS} from './backends';
import {HOSTILE_CATEGORIES, HostileCall, runHostile, runHostileSample} from './fuzz/hostile';
import {memorySnapshot} from './fuzz/runner';
import {CI_SEED} from './fuzz/settings';

/**
 * Hostile inputs on every backend: generated invalid calls (test/fuzz/hostile.ts: wrong ranks,
 * bad attribute values and types, int32 overflow, filter shapes that overflow or would not fit
 * in memory, wrong dtypes, disposed tensors, tensor-likes that are not rectangular arrays of
 * numbers …) must each throw an Error naming the op before any kernel work, and leave
 * tf.memory() as it was; then the messages of the newer checks, exactly.
 */
const GENERATED = 1000;
const CONV = 'ConvolutionBackpropFilters: ';
const DECONV = 'ConvTransposeBackpropFilters: ';

for (const backend of NODE_BACKENDS) {
  describe(`hostile inputs on ${backend.name}:`, () => {
    beforeAll(async () => {
      expect(await tf.setBackend(backend.name)).toBe(true);
    });
    afterAll(async () => {
      await tf.setBackend('cpu');  // specs that pick no backend run on cpu
    });

    it(`rejects ${GENERATED} generated invalid calls by name, before any work, leaving memory as it was`, () => {
      const {failures, categories} = runHostileSample(CI_SEED + 100, GENERATED);
      expect(failures).withContext(failures.slice(0, 20).join('\n')).toEqual([]);
      expect(categories).withContext('every category drawn').toEqual([...HOSTILE_CATEGORIES].sort());
    });

    // The messages of the checks added for hostile inputs (test/errors.spec.ts has the others).
    // Each case makes its tensors (disposed by the runner) and returns the call.
    const x = () => tf.zeros([1, 8, 8, 4]);
    const dy = () => tf.zeros([1, 6, 6, 6]);
    const ok = {strides: [1, 1], filterShape: [3, 3]};
    const disposed = (t: tf.Tensor) => {
      t.dispose();
      return t;
    };
    // [title, setup, message, whether the call converts tensor-likes (allocating before the kernel)]
    const cases: Array<[string, () => {call: () => unknown; tensors: tf.Tensor[]}, string, boolean?]> = [
      ['a disposed input (op)', () => {
        const [a, b] = [disposed(x()), dy()];
        return {call: () => convolutionBackpropFilters(a, b, ok), tensors: [b]};
      }, `${CONV}argument 'input' is a disposed tensor`],
      ['a disposed outputDelta (runKernel)', () => {
        const [a, b] = [tf.zeros([1, 3, 3, 4]), disposed(tf.zeros([1, 5, 5, 2]))];
        return {call: () => tf.engine().runKernel('ConvTransposeBackpropFilters', {input: a, outputDelta: b}, ok), tensors: [a]};
      }, `${DECONV}input 'outputDelta' is a disposed tensor`],
      ['a disposed filterShape tensor (op)', () => {
        const [a, b, f] = [x(), dy(), disposed(tf.tensor1d([3, 3], 'int32'))];
        return {call: () => convolutionBackpropFilters(a, b, {strides: [1, 1]}, f as tf.Tensor1D), tensors: [a, b]};
      }, `${CONV}argument 'filterShape' is a disposed tensor`],
      ['a disposed filterShape tensor (runKernel, oneDNN name)', () => {
        const [a, b, f] = [x(), dy(), disposed(tf.tensor1d([3, 3], 'int32'))];
        return {
          call: () => tf.engine().runKernel(ConvolutionBackwardWeights, {input: a, outputDelta: b, filterShape: f}, {strides: [1, 1]}),
          tensors: [a, b],
        };
      }, `${CONV}input 'filterShape' is a disposed tensor`],
      ['a stride of 2^31', () => {
        const [a, b] = [x(), dy()];
        return {call: () => convolutionBackpropFilters(a, b, {...ok, strides: [2 ** 31, 1]}), tensors: [a, b]};
      }, `${CONV}attribute 'strides' must hold values of at most 2147483647 (tfjs sizes are int32), got [2147483648,1]`],
      ['a dilation of 2^40', () => {
        const [a, b] = [x(), dy()];
        return {call: () => convolutionBackpropFilters(a, b, {...ok, dilations: [1, 2 ** 40]}), tensors: [a, b]};
      }, `${CONV}attribute 'dilations' must hold values of at most 2147483647 (tfjs sizes are int32), got [1,1099511627776]`],
      ['a pad of 2^53 - 1', () => {
        const [a, b] = [x(), dy()];
        return {call: () => convolutionBackpropFilters(a, b, {...ok, padsEnd: [Number.MAX_SAFE_INTEGER, 0]}), tensors: [a, b]};
      }, `${CONV}attribute 'padsEnd' must hold values of at most 2147483647 (tfjs sizes are int32), got [9007199254740991,0]`],
      ['an outputPadding of 2^32', () => {
        const [a, b] = [tf.zeros([1, 3, 3, 4]), tf.zeros([1, 5, 5, 2])];
        return {call: () => convTransposeBackpropFilters(a, b, {...ok, outputPadding: [0, 2 ** 32]}), tensors: [a, b]};
      }, `${DECONV}attribute 'outputPadding' must hold values of at most 2147483647 (tfjs sizes are int32), got [0,4294967296]`],
      ['a filter shape whose size overflows 2^31 - 1', () => {
        const [a, b] = [x(), dy()];
        return {call: () => convolutionBackpropFilters(a, b, {strides: [1, 1], filterShape: [65536, 65536]}), tensors: [a, b]};
      }, `${CONV}filter shape [65536,65536,4,6] must hold at most 2147483647 elements`],
      ['a filter too large for memory (4096 × 4096 × 4 × 6)', () => {
        const [a, b] = [x(), dy()];
        return {
          call: () => tf.engine().runKernel('ConvolutionBackpropFilters', {input: a, outputDelta: b}, {strides: [1, 1], filterShape: [4096, 4096]}),
          tensors: [a, b],
        };
      }, `${CONV}filter shape [4096,4096,4,6] must hold at most 268435456 elements (1 GiB of float32) for the result to fit in memory, got 402653184`],
      ['a string in nested arrays', () => {
        const b = tf.zeros([1, 1, 1, 2]);
        return {call: () => convolutionBackpropFilters([[[[0.5, 'x']]]] as never, b, {strides: [1, 1], filterShape: [1, 1]}), tensors: [b]};
      }, `${CONV}argument 'input' must be a tensor or a tensor-like of numbers; element [0][0][0][1] is not a number, got 'x'`, true],
      ['null in nested arrays', () => {
        const a = tf.zeros([1, 2, 1]);
        return {call: () => convolutionBackpropFilters(a, [[[1], [null]]] as never, {strides: [1], filterShape: [1]}), tensors: [a]};
      }, `${CONV}argument 'outputDelta' must be a tensor or a tensor-like of numbers; element [0][1][0] is not a number, got null`, true],
      ['ragged nested arrays', () => {
        const b = tf.zeros([1, 2, 1]);
        return {call: () => convTransposeBackpropFilters([[[1, 2], [3]]], b, {strides: [1], filterShape: [1]}), tensors: [b]};
      }, `${DECONV}argument 'input' must be a tensor or a tensor-like of numbers; element [0][1] should hold 2 values like the first at its depth, got 1 value`, true],
      ['a number where nested arrays go on', () => {
        const b = tf.zeros([1, 2, 1]);
        return {call: () => convTransposeBackpropFilters([[[1, 2], 3]] as never, b, {strides: [1], filterShape: [1]}), tensors: [b]};
      }, `${DECONV}argument 'input' must be a tensor or a tensor-like of numbers; element [0][1] should hold 2 values like the first at its depth, got a number`, true],
    ];

    for (const [title, setup, message, tensorLikes = false] of cases) {
      it(`rejects ${title} with its message`, () => {
        const h: HostileCall = {
          seed: 0, category: 'disposed', detail: title, op: message.startsWith(CONV) ? 'ConvolutionBackpropFilters' : 'ConvTransposeBackpropFilters',
          entry: 'op', convertsTensorLikes: tensorLikes, message, prepare: setup,
        };
        const before = memorySnapshot();
        expect(runHostile(h)).toBeUndefined();
        expect(memorySnapshot()).toEqual(before);
      });
    }
  });
}

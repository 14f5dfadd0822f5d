import '@tensorflow/tfjs-core/dist/register_all_gradients';  // gradients of tfjs's own ops (sum, mul) in the losses

import * as tf from '@tensorflow/tfjs-core';
import * as fs from 'node:fs';
import * as path from 'node:path';

import {checkGradients, convolution, convTranspose} from '../kernels/index';
import {setForwardImplementation} from '../src/training/raw_convolution';
import {NODE_BACKENDS} from './backends';
import {checkTrainingCase, runTrainingCase, TrainingDocument} from './helpers/training_cases';
import {seededTensor} from './helpers/util';

/** PyTorch autograd values (test/golden/generate_training.py); CI only reads the JSON. */
const golden = JSON.parse(fs.readFileSync(path.join(__dirname, 'golden', 'training.json'), 'utf8')) as TrainingDocument;

/** float32 forward passes and sums of up to ~100 products of values in [-1, 1]. */
const ATOL = 1e-4;
const RTOL = 1e-4;

/**
 * tfjs's IS_TEST kernel leak check (set by helpers/setup.ts) counts the tensors customGrad's
 * save() keeps as a leak of the forward function on wasm, whose Identity kernel copies (cpu's
 * shares the data). It is off while these specs run on wasm; each spec still checks that the
 * tensor count is back where it was once its results are disposed.
 */
function withoutTfjsLeakCheckOnWasm(backendName: string) {
  let previous: boolean;
  beforeAll(() => {
    previous = tf.env().getBool('IS_TEST');
    if (backendName === 'wasm') tf.env().set('IS_TEST', false);
  });
  afterAll(() => {
    tf.env().set('IS_TEST', previous);
  });
}

describe(`training, PyTorch ${golden.torch} golden file:`, () => {
  it('has cases for both ops in 1-D, 2-D and 3-D', () => {
    expect(new Set(golden.cases.map(c => `${c.op}/${c.input.shape.length}`)).size).toBe(6);
  });
});

for (const backend of NODE_BACKENDS) {
  // 'auto' takes tfjs's native conv ops where they fit; 'composite' forces the slice + matMul path.
  for (const implementation of ['auto', 'composite'] as const) {
    describe(`training on ${backend.name} (${implementation} forward), PyTorch ${golden.torch} golden:`, () => {
      withoutTfjsLeakCheckOnWasm(backend.name);
      let previous: ReturnType<typeof setForwardImplementation>;
      beforeAll(async () => {
        expect(await tf.setBackend(backend.name)).toBe(true);
        previous = setForwardImplementation(implementation);
      });
      afterAll(async () => {
        setForwardImplementation(previous);
        await tf.setBackend('cpu');
      });
      for (const c of golden.cases) {
        it(`${c.id}: y, first and second order`, () => runTrainingCase(c, ATOL, RTOL));
      }
    });
  }
  describe(`training on ${backend.name}, finite differences (checkGradients):`, () => {
    withoutTfjsLeakCheckOnWasm(backend.name);
    beforeAll(async () => {
      expect(await tf.setBackend(backend.name)).toBe(true);
    });
    afterAll(async () => {
      await tf.setBackend('cpu');
    });
    for (const c of golden.cases) {
      it(`${c.id}: first order and second order (the filter-gradient kernel)`,
         () => checkTrainingCase(c, backend.name === 'cpu' ? 64 : 16));
    }
  });
}

describe('training: the forward ops', () => {
  it('give the same values natively and through the composite', () => {
    for (const [attrs, xShape, wShape] of [
           [{strides: [1, 1], dilations: [2, 1], padsBegin: [1, 0], padsEnd: [0, 2]}, [2, 6, 5, 3], [3, 2, 3, 4]],
           [{strides: [2], padsBegin: [1], padsEnd: [0], dataFormat: 'NCX', filterFormat: 'OIX'}, [1, 3, 9], [2, 3, 3]],
           [{strides: [1, 2, 1]}, [1, 4, 5, 3, 2], [2, 2, 2, 2, 3]],
           // depthwiseConv2d with a channel multiplier of 3, and with a negative-free explicit pad
           [{strides: [1, 1], dilations: [2, 1], padsBegin: [0, 2], padsEnd: [1, 0], groups: 2}, [2, 5, 6, 2], [3, 2, 1, 6]],
           // one conv2d per group, pads given to conv2d
           [{strides: [2, 1], padsBegin: [1, 0], padsEnd: [0, 1], groups: 2}, [1, 6, 5, 4], [2, 3, 2, 4]],
         ] as const) {
      const x = seededTensor([...xShape], 11);
      const w = seededTensor([...wShape], 12);
      const results = (['native', 'composite'] as const).map(impl => {
        const previous = setForwardImplementation(impl);
        try {
          return convolution(x, w, attrs as never);
        } finally {
          setForwardImplementation(previous);
        }
      });
      expect(results[0].shape).toEqual(results[1].shape);
      const [a, b] = results.map(r => r.dataSync());
      for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - b[i])).toBeLessThan(1e-5);
      tf.dispose([x, w, ...results]);
    }
  });

  it('work on batch 0', () => {
    const y = convolution(tf.zeros([0, 5, 2]), tf.zeros([3, 2, 4]), {strides: [2]});
    expect(y.shape).toEqual([0, 2, 4]);
    const t = convTranspose(tf.zeros([0, 3, 4]), tf.zeros([3, 4, 2]), {strides: [2]});
    expect(t.shape).toEqual([0, 7, 2]);
    tf.dispose([y, t]);
  });

  it('take outputShape for the transposed convolution, as spatial sizes or a full shape', () => {
    const x = seededTensor([1, 3, 2], 3);
    const w = seededTensor([3, 2, 4], 4);  // XIO (K, C, O/G)
    const a = convTranspose(x, w, {strides: [2], outputShape: [8]});
    const b = convTranspose(x, w, {strides: [2], outputShape: [1, 8, 4]});
    const c = convTranspose(x, w, {strides: [2], outputPadding: [1]});
    expect(a.shape).toEqual([1, 8, 4]);
    expect(Array.from(a.dataSync())).toEqual(Array.from(b.dataSync()));
    expect(Array.from(a.dataSync())).toEqual(Array.from(c.dataSync()));
    tf.dispose([x, w, a, b, c]);
  });

  it('take tensor-likes and leave no tensors behind', () => {
    const before = tf.memory().numTensors;
    const y = convolution([[[1], [2], [3]]], [[[1]], [[-1]]], {strides: [1]});  // XIO (K=2, 1, 1)
    expect(Array.from(y.dataSync())).toEqual([-1, -1]);
    const t = convTranspose([[[1], [2]]], [[[1]], [[10]]], {strides: [1]});
    expect(Array.from(t.dataSync())).toEqual([1, 12, 20]);
    tf.dispose([y, t]);
    expect(tf.memory().numTensors).toBe(before);
  });

  // A gradient penalty: the gradient of a loss with respect to the input, squared and summed,
  // differentiated again (tf.grad inside the checked function; second order through
  // convolution's data gradient, i.e. through convTranspose, and through the filter-gradient kernels).
  for (const [label, op, xShape, wShape, attrs] of [
         ['convolution, groups 2, dilation 2, stride 2, asymmetric pads, NCX', convolution, [2, 4, 9], [4, 2, 3],
          {strides: [2], dilations: [2], padsBegin: [1], padsEnd: [2], groups: 2, dataFormat: 'NCX', filterFormat: 'OIX'}],
         ['convTranspose, groups 2, stride 2, output padding 1, NCX', convTranspose, [2, 4, 3, 4], [1, 4, 3, 2],
          {strides: [2, 2], dilations: [2, 1], padsBegin: [1, 0], padsEnd: [0, 1], outputPadding: [1, 1], groups: 2,
           dataFormat: 'NCX', filterFormat: 'OIX'}],
       ] as const) {
    it(`pass a gradient penalty through nested tf.grad: ${label}`, () => {
      const x = seededTensor([...xShape], 21);
      const w = seededTensor([...wShape], 22);
      const before = tf.memory().numTensors;
      const penalty = (a: tf.Tensor, b: tf.Tensor) => {
        const dx = tf.grad((v: tf.Tensor) => tf.sum(tf.square((op as typeof convolution)(v, b, attrs as never))))(a);
        const dw = tf.grad((v: tf.Tensor) => tf.sum(tf.square((op as typeof convolution)(a, v, attrs as never))))(b);
        return tf.add(tf.sum(tf.square(dx)), tf.sum(tf.square(dw)));
      };
      const report = checkGradients(penalty, [x, w], {maxElementsPerInput: 24});
      expect(report.maxError).toBeLessThan(1e-3);
      expect(tf.memory().numTensors).toBe(before);
      tf.dispose([x, w]);
    });
  }

  it('report bad calls naming the forward op', () => {
    const x = tf.zeros([1, 6, 4]);
    expect(() => convolution(x, tf.zeros([3, 3, 2]), {strides: [1], groups: 3}))
        .toThrowError(/^convolution: groups \(3\) must divide input channels \(4\) and output channels \(2\)$/);
    expect(() => convolution(x, tf.zeros([3, 3, 2]), {strides: [0]}))
        .toThrowError(`convolution: attribute 'strides' must hold 1 positive integers for a 3-D input, got [0]`);
    expect(() => convolution(x, tf.zeros([3, 3, 2]), {strides: [1], filterShape: [3]} as never))
        .toThrowError(/^convolution: attribute 'filterShape' is not an attribute here/);
    expect(() => convolution(x, tf.zeros([3, 3]), {strides: [1]}))
        .toThrowError(`convolution: filter must have the input's rank (3), got shape [3,3]`);
    expect(() => convolution(x, tf.zeros([9, 4, 2]), {strides: [1]}))
        .toThrowError(/^convolution: the attributes give an empty output \[-2\]/);
    expect(() => convTranspose(x, tf.zeros([3, 4, 2]), {strides: [2], outputShape: [10]}))
        .toThrowError(/^convTranspose: attribute 'outputShape' must be at least the size \[13\]/);
    expect(() => convTranspose(x, tf.zeros([3, 4, 2]), {strides: [2], outputShape: [2, 2]}))
        .toThrowError(/^convTranspose: attribute 'outputShape' must hold 1 positive integers/);
    expect(() => convTranspose(x, tf.zeros([3, 4, 2]), {strides: [2], autoPad: 'same_upper', outputShape: [13]}))
        .toThrowError(/^convTranspose: attribute 'outputShape' must be \[12\], the size autoPad 'same_upper' gives/);
    expect(() => convTranspose(x, tf.zeros([3, 4, 2]), {strides: [2], outputShape: [14], outputPadding: [0]}))
        .toThrowError(/^convTranspose: attribute 'outputShape' disagrees with outputPadding \[0\] \(it needs \[1\]\)/);
    expect(() => convolution(x, tf.zeros([3, 4, 2]), {strides: [1], outputShape: [4]} as never))
        .toThrowError(/^convolution: attribute 'outputShape' is not an attribute of convolution/);
    tf.dispose(x);
  });
});

describe('checkGradients', () => {
  it('passes a correct gradient and reports per-input errors', () => {
    const x = seededTensor([3, 4], 5);
    const report = checkGradients(a => tf.sum(tf.square(a), 1), [x]);
    expect(report.inputs.length).toBe(1);
    expect(report.inputs[0].elementsChecked).toBe(12);
    expect(report.maxError).toBeLessThan(1e-4);
    x.dispose();
  });

  it('throws a readable report for a wrong gradient', () => {
    const wrong = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
      const a = args[0] as tf.Tensor;
      return {value: tf.mul(a, a), gradFunc: (dy: tf.Tensor) => [tf.mul(dy, 3)]};
    });
    const x = seededTensor([5], 6);
    const before = tf.memory().numTensors;
    expect(() => checkGradients(a => wrong(a), [x]))
        .toThrowError(/^checkGradients: gradients differ from central finite differences[^]*input 0 \[5\]: max error .* FAILED/);
    expect(tf.memory().numTensors).toBe(before);
    x.dispose();
  });

  it('rejects non-float inputs', () => {
    expect(() => checkGradients(a => a, [tf.tensor([1, 2], [2], 'int32')]))
        .toThrowError(`checkGradients: input 0 must be float32, got 'int32'`);
  });

  it('accepts tensor-likes and disposes what it made', () => {
    const before = tf.memory().numTensors;
    const report = checkGradients((a, b) => tf.mul(a, b), [[1, 2, 3], [4, 5, 6]]);
    expect(report.inputs.map(r => r.maxError).every(e => e < 1e-4)).toBe(true);
    expect(tf.memory().numTensors).toBe(before);
  });
});

import * as tf from '@tensorflow/tfjs-core';

import {CONV_BACKPROP_FILTERS_WASM_SIMD, ConvolutionBackpropFiltersAttrs, convolutionBackpropFilters, convTransposeBackpropFilters} from '../kernels/index';
import {CPU_LOOPS} from './helpers/composite_backends';
import {seededTensor} from './helpers/util';

/**
 * The cpu kernel's two paths side by side: WebAssembly SIMD ('cpu') against the TypeScript loops
 * ('cpu-loops', float64 sums) on problems shaped to reach every micro-kernel (8×4, 4×4, 8×1 and
 * 4×1 tiles, 16- and 4-lane depthwise), both choices of the vector side, several blocks of
 * positions per row and per image, and every packing (NXC as is, NCX, padded groups).
 */
interface SimdProblem {
  name: string;
  op: 'conv'|'transposed';
  input: number[];
  outputDelta: number[];
  attrs: ConvolutionBackpropFiltersAttrs;
}

const PROBLEMS: SimdProblem[] = [
  {
    name: '2-D NXC 12→7, 20×70 (8×4, 4×4, 8×1, 4×1 tiles; several row blocks)',
    op: 'conv', input: [2, 20, 70, 12], outputDelta: [2, 20, 70, 7],
    attrs: {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]},
  },
  {
    name: '2-D NXC 128→128, 5×60 (several column blocks per row)',
    op: 'conv', input: [1, 5, 60, 128], outputDelta: [1, 5, 60, 128],
    attrs: {strides: [1, 1], padsBegin: [0, 1], padsEnd: [0, 1], filterShape: [1, 3]},
  },
  {
    name: '2-D NCX OIX, groups 2 of 3→9 (vector side = outputDelta), stride 2, dilation 2, asymmetric pads',
    op: 'conv', input: [2, 6, 17, 15], outputDelta: [2, 18, 8, 6],
    attrs: {
      strides: [2, 2], dilations: [2, 2], padsBegin: [2, 1], padsEnd: [1, 0], groups: 2, dataFormat: 'NCX',
      filterFormat: 'OIX', filterShape: [3, 3],
    },
  },
  {
    name: 'depthwise NXC, 21 channels (16 + 4 + padded lanes), stride 2, dilation 2',
    op: 'conv', input: [3, 15, 16, 21], outputDelta: [3, 7, 7, 21],
    attrs: {strides: [2, 2], dilations: [2, 2], padsBegin: [1, 2], padsEnd: [1, 0], groups: 21, filterShape: [3, 3]},
  },
  {
    name: 'depthwise NCX, channel multiplier 3',
    op: 'conv', input: [2, 5, 9, 9], outputDelta: [2, 15, 9, 9],
    attrs: {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], groups: 5, dataFormat: 'NCX', filterShape: [3, 3]},
  },
  {
    name: '1-D, 3000 positions (many column blocks)',
    op: 'conv', input: [2, 3000, 4], outputDelta: [2, 2996, 5],
    attrs: {strides: [1], padsBegin: [0], padsEnd: [0], filterShape: [5]},
  },
  {
    name: '3-D NCX, stride 3 beyond the kernel, pads beyond the kernel',
    op: 'conv', input: [1, 9, 7, 8, 10], outputDelta: [1, 11, 6, 7, 5],
    attrs: {
      strides: [2, 2, 3], padsBegin: [3, 3, 3], padsEnd: [3, 3, 3], dataFormat: 'NCX', filterFormat: 'OIX',
      filterShape: [2, 2, 2],
    },
  },
  {
    name: 'transposed 2-D, groups 4, output padding shape',
    op: 'transposed', input: [2, 6, 6, 8], outputDelta: [2, 12, 12, 12],
    attrs: {strides: [2, 2], padsBegin: [1, 1], padsEnd: [0, 0], groups: 4, filterShape: [3, 3]},
  },
];

function gradientOn(backend: string, p: SimdProblem, magnitudes = false): {values: Float32Array; shape: number[]} {
  tf.setBackend(backend);
  return tf.tidy(() => {
    const input = seededTensor(p.input, 1);
    const outputDelta = seededTensor(p.outputDelta, 2);
    const op = p.op === 'conv' ? convolutionBackpropFilters : convTransposeBackpropFilters;
    const result = magnitudes ? op(tf.abs(input), tf.abs(outputDelta), p.attrs) : op(input, outputDelta, p.attrs);
    return {values: result.dataSync() as Float32Array, shape: result.shape};
  });
}

/**
 * The SIMD path sums up to 1024 terms in float32 before adding them into float64, so its error
 * is bounded by a small multiple of float32 epsilon times Σ|term|, the gradient of |input| and
 * |outputDelta| (the sum itself may cancel to near zero). 1e-5·Σ|term| is far above that
 * rounding and far below any missing or extra term.
 */
function expectWithinRounding(actual: Float32Array, exact: Float32Array, termMagnitudes: Float32Array, context: string) {
  const worst = {index: -1, excess: 0};
  exact.forEach((value, i) => {
    const excess = Math.abs(actual[i] - value) - 1e-5 * termMagnitudes[i];
    if (!(excess <= worst.excess)) Object.assign(worst, {index: i, excess});
  });
  if (worst.index >= 0) {
    const i = worst.index;
    fail(`${context}: element ${i} is ${actual[i]}, the loops give ${exact[i]}, Σ|term| ${termMagnitudes[i]}`);
  }
}

describe('cpu kernel: WebAssembly SIMD path against the TypeScript loops', () => {
  afterAll(async () => {
    await tf.setBackend('cpu');
  });

  it('runs by default in Node (the engine compiles WebAssembly SIMD)', () => {
    expect(tf.env().getBool(CONV_BACKPROP_FILTERS_WASM_SIMD)).toBe(true);
  });

  for (const p of PROBLEMS) {
    it(p.name, () => {
      const simd = gradientOn('cpu', p);
      const loops = gradientOn(CPU_LOOPS, p);
      expect(simd.shape).toEqual(loops.shape);
      expectWithinRounding(simd.values, loops.values, gradientOn(CPU_LOOPS, p, true).values, p.name);
    });
  }

  it(`with ${CONV_BACKPROP_FILTERS_WASM_SIMD} false runs the loops: bit-identical to cpu-loops`, () => {
    const saved = tf.env().getBool(CONV_BACKPROP_FILTERS_WASM_SIMD);
    tf.env().set(CONV_BACKPROP_FILTERS_WASM_SIMD, false);
    try {
      const simdOff = gradientOn('cpu', PROBLEMS[0]);
      const loops = gradientOn(CPU_LOOPS, PROBLEMS[0]);
      expect(Array.from(simdOff.values)).toEqual(Array.from(loops.values));
    } finally {
      tf.env().set(CONV_BACKPROP_FILTERS_WASM_SIMD, saved);
    }
  });
});

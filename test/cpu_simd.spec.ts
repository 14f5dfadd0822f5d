import * as tf from '@tensorflow/tfjs-core';

import {CONV_BACKPROP_FILTERS_WASM_SIMD, convolutionBackpropFilters, convTransposeBackpropFilters} from '../kernels/index';
import {CPU_LOOPS} from './helpers/composite_backends';
import {SimdProblem, SIMD_PROBLEMS} from './helpers/simd_problems';
import {seededTensor, selectBackend} from './helpers/util';

/**
 * The cpu kernel's two paths side by side: WebAssembly SIMD ('cpu') against the TypeScript loops
 * ('cpu-loops', float64 sums) on SIMD_PROBLEMS (test/helpers/simd_problems.ts).
 */
async function gradientOn(backend: string, p: SimdProblem, magnitudes = false): Promise<{values: Float32Array; shape: number[]}> {
  await selectBackend(backend);
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

  for (const p of SIMD_PROBLEMS) {
    it(p.name, async () => {
      const simd = await gradientOn('cpu', p);
      const loops = await gradientOn(CPU_LOOPS, p);
      expect(simd.shape).toEqual(loops.shape);
      expectWithinRounding(simd.values, loops.values, (await gradientOn(CPU_LOOPS, p, true)).values, p.name);
    });
  }

  it(`with ${CONV_BACKPROP_FILTERS_WASM_SIMD} false runs the loops: bit-identical to cpu-loops`, async () => {
    const saved = tf.env().getBool(CONV_BACKPROP_FILTERS_WASM_SIMD);
    tf.env().set(CONV_BACKPROP_FILTERS_WASM_SIMD, false);
    try {
      const simdOff = await gradientOn('cpu', SIMD_PROBLEMS[0]);
      const loops = await gradientOn(CPU_LOOPS, SIMD_PROBLEMS[0]);
      expect(Array.from(simdOff.values)).toEqual(Array.from(loops.values));
    } finally {
      tf.env().set(CONV_BACKPROP_FILTERS_WASM_SIMD, saved);
    }
  });
});

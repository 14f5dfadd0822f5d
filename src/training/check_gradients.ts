import * as tf from '@tensorflow/tfjs-core';

import {opError} from '../errors';

/** Options of `checkGradients`; every one has a default. */
export interface CheckGradientsOptions {
  /**
   * Half the finite-difference step, relative to each element's magnitude: an element v is
   * moved to v ± epsilon·max(1, |v|). 1e-2 by default: float32 forward passes carry ~1e-7
   * relative rounding, so a small step loses digits to cancellation, and a central difference
   * is exact for functions that are at most quadratic in each element (convolutions are
   * linear; losses such as sums of squares quadratic), so a large step costs nothing there.
   */
  epsilon?: number;
  /** Largest accepted error (see InputGradientReport.maxError); 1e-3 by default. */
  tolerance?: number;
  /**
   * Elements checked one by one per input (spread evenly over the input); 64 by default,
   * Infinity for all. Every input is also checked along one random direction as a whole.
   */
  maxElementsPerInput?: number;
  /** Seed of the output weights and the random directions; 1 by default. */
  seed?: number;
}

/** How the analytic gradient of one input compared with finite differences. */
export interface InputGradientReport {
  /** max |analytic − numeric| / max(1, max |numeric|) over the checked elements and the direction. */
  maxError: number;
  /** max |analytic − numeric| over them. */
  maxAbsError: number;
  /** Where the worst element difference is (flat index), or -1 when the direction was worst. */
  worstIndex: number;
  /** The analytic gradient at `worstIndex` (the directional derivative when that is -1). */
  analyticAtWorst: number;
  /** The numeric gradient there. */
  numericAtWorst: number;
  /** Single elements checked (at most `maxElementsPerInput`). */
  elementsChecked: number;
  /** The directional derivative along a random unit-scale direction: analytic and numeric. */
  direction: {analytic: number; numeric: number};
}

/** What `checkGradients` found, over all inputs. */
export interface GradientCheckReport {
  /** The worst input's maxError. */
  maxError: number;
  /** One report per input, in the order of the inputs. */
  inputs: InputGradientReport[];
}

function seededUniform(count: number, seed: number): Float64Array {
  let state = seed >>> 0;
  const values = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    values[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  }
  return values;
}

/**
 * Compares tf.grads of `f` with central finite differences, for tests of custom ops and models.
 *
 * The scalar checked is L = Σ_j r_j · f(inputs)_j with fixed pseudo-random weights r (so every
 * output element matters and no two can cancel by symmetry; a scalar f is used as is, r = 1).
 * The analytic gradients are tf.grads of L (computed in float32 by the backend). The numeric
 * ones evaluate f at x ± h·e (the values actually stored in float32 are used for the step
 * 2h), read the outputs back and form the weighted sums in float64, so the difference quotient
 * loses nothing beyond f's own float32 rounding. Per input: up to maxElementsPerInput single
 * elements, plus one random direction v over the whole input (numeric (L(x+hv) − L(x−hv))/2h
 * against ⟨∇L, v⟩).
 *
 * @param f - the function under test: tensors in, one tensor out (any shape).
 * @param inputs - the point to check at: float32 tensors or tensor-likes, one per argument of f.
 * @param options - step, tolerance, elements checked, seed.
 * @returns per-input errors.
 * @throws Error with a readable report (input, element, analytic and numeric values) when an
 *   error exceeds the tolerance, or when an input is not float32.
 *
 * @example
 * ```ts
 * const attrs = {strides: [1, 1], dilations: [2, 2], groups: 2};
 * checkGradients((x, w) => convolution(x, w, attrs), [tf.randomNormal([1, 9, 9, 4]), tf.randomNormal([3, 3, 2, 6])]);
 * ```
 */
export function checkGradients(
    f: (...inputs: tf.Tensor[]) => tf.Tensor, inputs: Array<tf.Tensor | tf.TensorLike>,
    options: CheckGradientsOptions = {}): GradientCheckReport {
  const {epsilon = 1e-2, tolerance = 1e-3, maxElementsPerInput = 64, seed = 1} = options;
  const xs = inputs.map(v => v instanceof tf.Tensor ? v : tf.tensor(v, undefined, 'float32'));
  const created = xs.filter((x, i) => x !== inputs[i]);
  try {
    xs.forEach((x, i) => {
      if (x.dtype !== 'float32') throw opError('checkGradients', `input ${i}`, 'must be float32', x.dtype);
    });
    const probe = tf.tidy(() => f(...xs));
    const outputSize = probe.size;
    probe.dispose();
    const weights = outputSize === 1 ? Float64Array.of(1) : seededUniform(outputSize, seed ^ 0x5bd1e995);
    const weightTensor = tf.tensor(Float32Array.from(weights), [outputSize]);
    const values = xs.map(x => Float64Array.from(x.dataSync()));

    // L in float64 from f's float32 outputs.
    const loss = (perturbed: tf.Tensor[]): number => {
      const y = tf.tidy(() => f(...perturbed));
      const data = y.dataSync();
      y.dispose();
      let sum = 0;
      for (let j = 0; j < data.length; j++) sum += weights[j] * data[j];
      return sum;
    };
    const analytic = tf.tidy(() => tf.grads((...args: tf.Tensor[]) => {
      const y = f(...args);
      return tf.sum(tf.mul(tf.reshape(y, [outputSize]), weightTensor));
    })(xs));
    const analyticValues = analytic.map(g => Float64Array.from(g.dataSync()));
    tf.dispose(analytic);
    weightTensor.dispose();

    /** L(x + t·v) − L(x − t·v) over the actual float32 step, with t = epsilon·max(1, |x|). */
    const difference = (which: number, direction: (index: number) => number, indices: Iterable<number>) => {
      const base = values[which];
      const plus = Float32Array.from(base);
      const minus = Float32Array.from(base);
      for (const i of indices) {
        const step = epsilon * Math.max(1, Math.abs(base[i])) * direction(i);
        plus[i] = base[i] + step;
        minus[i] = base[i] - step;
      }
      const evaluate = (data: Float32Array) => {
        const t = tf.tensor(data, xs[which].shape, 'float32');
        try {
          return loss(xs.map((x, k) => k === which ? t : x));
        } finally {
          t.dispose();
        }
      };
      return {delta: evaluate(plus) - evaluate(minus), plus, minus};
    };

    const reports = xs.map((x, which): InputGradientReport => {
      const g = analyticValues[which];
      const size = x.size;
      const count = Math.min(size, maxElementsPerInput);
      const picked = new Set<number>();
      for (let j = 0; j < count; j++) picked.add(Math.floor((j * size) / count));
      const numeric: Array<[number, number]> = [];
      for (const i of picked) {
        const {delta, plus, minus} = difference(which, () => 1, [i]);
        numeric.push([i, delta / (plus[i] - minus[i])]);
      }
      // One random direction over the whole input, unit scale per element.
      const v = seededUniform(size, seed + 7919 * (which + 1));
      const all = Array.from({length: size}, (_, i) => i);
      const {delta, plus, minus} = difference(which, i => v[i], all);
      let directional = 0;
      let analyticDirectional = 0;
      for (let i = 0; i < size; i++) {
        const actualStep = (plus[i] - minus[i]) / 2;  // t·v_i as stored in float32
        analyticDirectional += g[i] * actualStep;
      }
      // Numeric: ΔL / 2 ≈ Σ ∂L/∂x_i · (actual half step); compare both scaled back to t = epsilon.
      directional = delta / 2 / epsilon;
      analyticDirectional /= epsilon;

      const scale = Math.max(1, ...numeric.map(([, n]) => Math.abs(n)));
      let maxAbsError = 0;
      let worstIndex = -1;
      let analyticAtWorst = analyticDirectional;
      let numericAtWorst = directional;
      for (const [i, n] of numeric) {
        const err = Math.abs(g[i] - n);
        if (!(err <= maxAbsError)) {
          maxAbsError = err;
          worstIndex = i;
          analyticAtWorst = g[i];
          numericAtWorst = n;
        }
      }
      const directionScale = Math.max(1, Math.abs(directional));
      const directionError = Math.abs(analyticDirectional - directional) / directionScale;
      let maxError = maxAbsError / scale;
      if (!(directionError <= maxError)) {
        maxError = directionError;
        worstIndex = -1;
        analyticAtWorst = analyticDirectional;
        numericAtWorst = directional;
        maxAbsError = Math.max(maxAbsError, Math.abs(analyticDirectional - directional));
      }
      return {
        maxError, maxAbsError, worstIndex, analyticAtWorst, numericAtWorst, elementsChecked: picked.size,
        direction: {analytic: analyticDirectional, numeric: directional},
      };
    });
    const maxError = Math.max(0, ...reports.map(r => r.maxError));
    if (!(maxError <= tolerance)) {
      const lines = reports.map((r, i) => `  input ${i} [${xs[i].shape}]: max error ${r.maxError.toExponential(2)} ${
          r.maxError <= tolerance ? 'ok' : 'FAILED'}, worst at ${
          r.worstIndex < 0 ? 'the random direction' : `element ${r.worstIndex}`}: analytic ${r.analyticAtWorst}, numeric ${
          r.numericAtWorst} (${r.elementsChecked} elements and one direction checked)`);
      throw opError(
          'checkGradients', 'gradients',
          `differ from central finite differences (epsilon ${epsilon}, tolerance ${tolerance}):\n${lines.join('\n')}`);
    }
    return {maxError, inputs: reports};
  } finally {
    tf.dispose(created);
  }
}

/**
 * The tolerance of results computed on a float16-only webgl device (tfjs's
 * WEBGL_RENDER_FLOAT32_ENABLED false, WEBGL_FORCE_F16_TEXTURES true): inputs, partial sums and
 * the result are stored in float16 textures, while each fragment sums its products in float32.
 * Used by test/browser/webgl.spec.ts and test/browser/fuzz.spec.ts.
 *
 * What float16 storage costs: each input value is rounded to float16 (relative error at most
 * u = 2^-11), so each product is off by about 2u of itself and their sum by a random walk of
 * those, of order u·√L for L products of values in [-1, 1]; each stored partial sum and the
 * result are rounded once more, at most u of themselves each.
 *
 * The model, |actual − expected| ≤ atol + rtol·|expected| with atol = 2u·√L and rtol = 4u
 * (≈ 2e-3), comes from measuring that error against the float64 reference (test/reference.ts) at
 * e22ce89, float16 device in headless Chromium on SwiftShader: 751 problems (the case table's
 * 160, four split depthwise reductions of L = 900 to 3,600, and 587 fuzz problems of seeds 8 and
 * 9, problems 0–299 each), L from 1 to 3,600, data in [-1, 1]. The largest error past 4u·|expected|
 * was 0.66·u·√L (fuzz seed 8 problem 232, L = 64), so atol is 3× that; the largest error
 * altogether 1.38·u·√L (L = 4) and 0.030 absolute (L = 3,600, |expected| up to 41.5). A value
 * scaled by 1.02 misses this bound wherever |expected| > 0.054·√L, which the larger values of every
 * problem pass (sums of L products of values in [-1, 1] spread as about √L / 3).
 * The measurement: `npx karma start test/browser_measure/karma.conf.js` (test/browser_measure/float16_error.ts).
 */

/** float16's unit roundoff: half the spacing of float16 values at 1. */
export const FLOAT16_UNIT_ROUNDOFF = 2 ** -11;

/**
 * The reduction length of a call: how many products (at most) are summed into each filter value,
 * batch × outputDelta positions for the convolution, batch × input positions for the transposed
 * op (DESIGN.md §2). From the shapes alone, sharing nothing with the package.
 */
export function accumulationLength(
    transposed: boolean, inputShape: readonly number[], outputDeltaShape: readonly number[],
    dataFormat: 'NXC' | 'NCX' = 'NXC'): number {
  const shape = transposed ? inputShape : outputDeltaShape;
  const r = shape.length - 2;
  const spatial = dataFormat === 'NCX' ? shape.slice(2) : shape.slice(1, r + 1);
  return shape[0] * spatial.reduce((a, b) => a * b, 1);
}

/** |actual − expected| ≤ atol + rtol·|expected| for a float16 device and reduction length `length` (see above). */
export function float16Tolerance(length: number): {atol: number; rtol: number} {
  return {atol: 2 * FLOAT16_UNIT_ROUNDOFF * Math.sqrt(Math.max(1, length)), rtol: 4 * FLOAT16_UNIT_ROUNDOFF};
}

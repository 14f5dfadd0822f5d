/**
 * Specs of tfjs's own convolution tests skipped by name, each with its reason: what the drop-in
 * gradients lift on purpose, and what tfjs's wasm backend itself cannot run (tfjs's own wasm
 * test setup, tfjs-backend-wasm/src/setup_test.ts, excludes the same).
 */
export interface Skip {
  /** A substring of the spec's full name, or a pattern it matches. */
  readonly match: string | RegExp;
  /** Where it applies: the backends, and with or without the drop-in (both when absent). */
  readonly backends?: readonly string[];
  readonly dropIn?: boolean;
  readonly reason: string;
}

const WASM_SETUP = 'tfjs\'s own wasm test setup (tfjs-backend-wasm/src/setup_test.ts) excludes it';

export const SKIPS: readonly Skip[] = [
  {
    match: /^depthwiseConv2d gradients .* throws error on dilations > 1$/, dropIn: true,
    reason: 'asserts that tfjs rejects dilations > 1 in the depthwise gradient (tfjs#7906), which the drop-in computes on purpose',
  }, {
    match: /^(?!.*throws when x depth does not match).*NCHW/, backends: ['wasm'],  // that one passes: it only validates
    reason: `wasm's Conv2D, FusedConv2D and DepthwiseConv2dNative take channels-last data only (XNNPACK); ${WASM_SETUP}`,
  }, {
    match: / with broadcasted bias and relu$/, backends: ['wasm'],
    reason: `wasm's FusedConv2D and FusedDepthwiseConv2D take a rank-1 bias only; ${WASM_SETUP}`,
  }, {
    match: /^fused (conv2d|depthwiseConv2D) wasm \{\} gradient x=\[2,3,3,1\] f=\[2,2,1,1\] s=1 p=0 with bias$/, backends: ['wasm'],
    reason: `wasm's FusedConv2D and FusedDepthwiseConv2D take a rank-1 bias only (this bias has rank 4); ${WASM_SETUP}`,
  }, {
    match: /^fused (conv2d|depthwiseConv2D) wasm \{\} (gradient|backProp input) x=\[2,3,3,1\] f=\[2,2,1,1\] s=1 p=0$/,
    backends: ['wasm'],
    reason: 'tfjs\'s IS_TEST leak check counts the copies wasm\'s Identity kernel makes for customGrad\'s save() as a leak ' +
        `of tf.fused's forward ("internal memory leak (3 data ids) after running 'fusedConv2d__op'", without the drop-in too); ${
            WASM_SETUP}`,
  },
];

/** The line prefix a run prints its result after, as JSON. */
export const TFJS_SUITE_RESULT = 'TFJS_SUITE_RESULT ';

export function skipReason(fullName: string, backend: string, dropIn: boolean): string | undefined {
  return SKIPS.find(
             s => (typeof s.match === 'string' ? fullName.includes(s.match) : s.match.test(fullName)) && (s.backends === undefined || s.backends.includes(backend)) &&
                 (s.dropIn === undefined || s.dropIn === dropIn))
      ?.reason;
}

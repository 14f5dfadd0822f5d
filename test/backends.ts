/**
 * The backends the Node suite runs every case on. A backend may skip a case by id, with the
 * reason printed.
 *
 * - `cpu`: the cpu kernel: WebAssembly SIMD micro-kernels (float32 sums per block of positions,
 *   float64 across blocks).
 * - `cpu-loops`: the cpu kernel's TypeScript loops (float64 sums), the fallback where
 *   WebAssembly SIMD is missing — a second MathBackendCPU registered by test/helpers/setup.ts.
 * - `cpu-composite`: the composite kernel of kernels/node (tfjs ops: slices, concat, batched matMul …)
 *   on tfjs's own cpu kernels — a second MathBackendCPU registered by test/helpers/setup.ts.
 * - `wasm`: the wasm kernel on @tensorflow/tfjs-backend-wasm: the cpu kernel's WebAssembly SIMD
 *   micro-kernels over views on the backend's heap.
 * - `tensorflow`: this package's `tensorflow` kernel (tfjs's own filter-gradient kernels where
 *   they compute the case, the composite elsewhere) on tfjs-node when @tensorflow/tfjs-node
 *   loads; where it does not (its install downloads libtensorflow from outside the npm
 *   registry), on a test backend registered under that name from tfjs-cpu's kernels with
 *   TensorFlow's contract for the filter-gradient ones (test/helpers/tensorflow_test_backend.ts);
 *   test/tensorflow_backend.spec.ts is then pending with the reason tfjs-node did not load, or
 *   fails under REQUIRE_TFJS_NODE=1.
 */
export interface BackendUnderTest {
  name: string;
  /** Which implementation runs there, for reports. */
  kernel?: string;
  /** Case table and golden comparisons, |actual − expected| ≤ atol + rtol·|expected|; 1e-5 each when absent. */
  tolerance?: {atol: number; rtol: number};
  skips?: Readonly<Record<string, string>>;
}

/** The composite kernel sums in float32 inside matMul (the cpu kernel in float64). */
const COMPOSITE_TOLERANCE = Object.freeze({atol: 1e-4, rtol: 1e-4});

/** Whether @tensorflow/tfjs-node loads here (it registers the `tensorflow` backend), and if not why. */
export const TENSORFLOW_BACKEND: {readonly loaded: boolean; readonly reason?: string} = (() => {
  try {
    require('@tensorflow/tfjs-node');
    return {loaded: true};
  } catch (e) {
    return {loaded: false, reason: String((e as Error)?.message ?? e).split('\n')[0]};
  }
})();

export const NODE_BACKENDS: readonly BackendUnderTest[] = [
  {name: 'cpu', kernel: 'cpu kernel, WebAssembly SIMD'},
  {name: 'cpu-loops', kernel: 'cpu kernel, TypeScript loops'},
  {name: 'cpu-composite', kernel: 'composite kernel on tfjs cpu ops', tolerance: COMPOSITE_TOLERANCE},
  {name: 'wasm', kernel: 'wasm kernel, WebAssembly SIMD on the backend\'s heap'},
  {
    name: 'tensorflow',
    kernel: TENSORFLOW_BACKEND.loaded ? 'native or composite kernel on tfjs-node' :
                                        'native or composite kernel on the tensorflow test backend (tfjs-cpu kernels)',
    tolerance: COMPOSITE_TOLERANCE,
  },
];

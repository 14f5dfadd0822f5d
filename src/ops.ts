import * as tf from '@tensorflow/tfjs-core';

import {ConvolutionBackpropFiltersAttrs, ConvTransposeBackpropFiltersAttrs, FilterGradientAttrs} from './attributes';
import {activeBackendHasKernel, compositeFilterGradientOp} from './composite/composite_op';
import {opError, show} from './errors';
import {ConvolutionBackpropFilters, ConvTransposeBackpropFilters, OpName} from './names';

/**
 * The spec's optional third input, the filter shape: an int32 1-D tensor or a number array,
 * holding the full shape in `filterFormat` or the spatial sizes alone. It wins over
 * `attrs.filterShape`.
 */
export type FilterShapeArgument = tf.Tensor1D | number[] | Int32Array;

/**
 * Tensors pass through (the kernel checks their dtype); tensor-likes become `dtype` tensors,
 * nested arrays only when they are rectangular and hold numbers alone.
 */
function toTensor(op: OpName, name: string, value: tf.Tensor | tf.TensorLike, dtype: 'float32' | 'int32'): tf.Tensor {
  if (value instanceof tf.Tensor) return value;
  const problem = Array.isArray(value) ? nestedArrayProblem(value) : undefined;
  if (problem !== undefined) {
    throw opError(op, `argument '${name}'`, `must be a tensor or a tensor-like of numbers; ${problem}`);
  }
  try {
    return tf.tensor(value, undefined, dtype);
  } catch (cause) {
    throw opError(op, `argument '${name}'`, `must be a tensor or a tensor-like of numbers (${(cause as Error).message})`);
  }
}

function isArrayLike(value: unknown): value is ArrayLike<unknown> {
  return Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView));
}

/**
 * What is wrong with nested arrays given as a tensor, if anything: tf.tensor infers the shape
 * from the first element at each depth and silently turns anything else into NaN, 0, a number
 * parsed from a string, or a tensor with fewer values than its shape says.
 */
function nestedArrayProblem(value: readonly unknown[]): string | undefined {
  const shape: number[] = [];
  for (let v: unknown = value; isArrayLike(v); v = v[0]) shape.push(v.length);
  const at: number[] = [];
  const where = () => `element [${at.join('][')}]`;
  const visit = (v: unknown, depth: number): string | undefined => {
    if (depth === shape.length) return typeof v === 'number' ? undefined : `${where()} is not a number, got ${show(v)}`;
    if (!isArrayLike(v) || v.length !== shape[depth]) {
      const found = isArrayLike(v) ? `${v.length} value${v.length === 1 ? '' : 's'}` : typeof v === 'number' ? 'a number' : show(v);
      return `${where()} should hold ${shape[depth]} value${shape[depth] === 1 ? '' : 's'} like the first at its depth, got ${found}`;
    }
    for (let i = 0; i < v.length; i++) {
      at.push(i);
      const problem = visit(v[i], depth + 1);
      at.pop();
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
  return visit(value, 0);
}

function runFilterGradient(
    op: OpName, input: tf.Tensor | tf.TensorLike, outputDelta: tf.Tensor | tf.TensorLike, attrs: FilterGradientAttrs,
    filterShape: FilterShapeArgument | undefined): tf.Tensor {
  // Before anything is converted or allocated: a disposed tensor keeps its shape and dtype, and
  // tfjs would hand it to the kernel as it is.
  for (const [name, value] of [['input', input], ['outputDelta', outputDelta], ['filterShape', filterShape]] as const) {
    if (value instanceof tf.Tensor && value.isDisposed) throw opError(op, `argument '${name}'`, 'is a disposed tensor');
  }
  const inputs: tf.NamedTensorMap = {
    input: toTensor(op, 'input', input, 'float32'),
    outputDelta: toTensor(op, 'outputDelta', outputDelta, 'float32'),
  };
  if (filterShape !== undefined && filterShape !== null) {
    if (!(filterShape instanceof tf.Tensor) &&
        !Array.from(filterShape as ArrayLike<unknown>).every(v => Number.isSafeInteger(v))) {
      // Checked here because the conversion to int32 below would silently truncate.
      throw opError(op, 'filterShape argument', 'must hold integers', filterShape);
    }
    inputs.filterShape = toTensor(op, 'filterShape', filterShape, 'int32');
  }
  // A backend without a kernel under the op's name (one this package does not know, or one
  // registered after the import) runs the composite of tfjs ops instead.
  if (!activeBackendHasKernel(op)) return compositeFilterGradientOp(op, inputs, attrs as unknown as tf.NamedAttrMap);
  return tf.engine().runKernel(op, inputs, attrs as unknown as tf.NamedAttrMap) as tf.Tensor;
}

/**
 * The gradient of a convolution with respect to its filter (oneDNN Graph
 * ConvolutionBackpropFilters), as a float32 tensor in `attrs.filterFormat` (XIO by default):
 *
 *     dW[g·O/G + o][c][k] = Σ_n Σ_p outputDelta[n][g·O/G + o][p] · input[n][g·C/G + c][p·s − pb + k·d]
 *
 * with OIX = (O, C/G, K…) and XIO = (K…, C/G, O); C = channels of `input`, O = channels of
 * `outputDelta`, G = groups. Runs this package's kernel on the cpu, wasm, webgl, webgpu and
 * tensorflow (tfjs-node) backends, and a composite of tfjs ops on any other. Inputs are float32
 * (tfjs has no f16 or bf16 dtype: convert such data to float32 first). Sums are float32 per
 * block of ≤ 1024 positions, added in float64, on cpu and wasm (their WebAssembly SIMD
 * micro-kernels); float64 on cpu's TypeScript loops; float32 on webgl (float16 on a
 * float16-only device) and webgpu; float32 matMul sums, added in float32, on tensorflow and in
 * the composite.
 *
 * @param input - the convolution's input, [N, X…, C] (NXC) or [N, C, X…] (NCX), 1 to 3 spatial
 *   axes; float32 tensor or tensor-like.
 * @param outputDelta - the gradient of the loss with respect to the convolution's output, same
 *   layout; its spatial sizes must be floor((in + pb + pe − d·(K−1) − 1) / s) + 1.
 * @param attrs - strides (required), pads, dilations, autoPad, groups, formats, filterShape.
 * @param filterShape - the spec's optional third input: the full filter shape in filterFormat or
 *   its spatial sizes; wins over `attrs.filterShape`.
 * @returns the filter gradient, float32, shaped as `filterFormat` says.
 * @throws Error before any work on a bad call, naming the op, the attribute or argument, what was
 *   expected and what was given, e.g. `ConvolutionBackpropFilters: attribute 'strides' must hold
 *   2 positive integers for a 4-D input, got [2,0]`.
 *
 * @example
 * ```ts
 * const input = tf.randomNormal([4, 16, 16, 10]);     // NCX: N = 4, C = 16, 16×10
 * const outputDelta = tf.randomNormal([4, 8, 8, 4]);  // O = 8
 * const dW = convolutionBackpropFilters(input, outputDelta, {
 *   strides: [2, 2], padsBegin: [1, 0], padsEnd: [1, 1], dilations: [1, 2],
 *   groups: 2, dataFormat: 'NCX', filterFormat: 'OIX', filterShape: [8, 8, 3, 3],
 * });
 * dW.shape;  // [8, 8, 3, 3] = (O, C/G, K_h, K_w)
 * ```
 */
export const convolutionBackpropFilters = tf.op({
  convolutionBackpropFilters_(
      input: tf.Tensor | tf.TensorLike, outputDelta: tf.Tensor | tf.TensorLike, attrs: ConvolutionBackpropFiltersAttrs,
      filterShape?: FilterShapeArgument): tf.Tensor {
    return runFilterGradient(ConvolutionBackpropFilters, input, outputDelta, attrs, filterShape);
  },
});

/**
 * The gradient of a transposed convolution with respect to its filter (oneDNN Graph
 * ConvTransposeBackpropFilters), as a float32 tensor in `attrs.filterFormat` (XIO by default):
 *
 *     dW[o][g·C/G + c][k] = Σ_n Σ_i input[n][g·C/G + c][i] · outputDelta[n][g·O/G + o][i·s − pb + k·d]
 *
 * The filter is OIX = (O/G, C, K…) or XIO = (K…, C, O/G) as in the spec, or oneDNN's current
 * IOX = (C, O/G, K…) and XOI = (K…, O/G, C); C = channels of `input`, O = channels of
 * `outputDelta`, G = groups. It is the convolution's filter gradient with `input` and
 * `outputDelta` swapped: it runs on the same backends (this package's kernel on cpu, wasm,
 * webgl, webgpu and tensorflow, the composite of tfjs ops on any other), takes float32 and sums
 * as `convolutionBackpropFilters` does. The op takes the spec's defaults;
 * `runKernel('ConvTransposeBackwardWeights', …)` defaults the layout to XOI, as oneDNN v3 does
 * (`fromSpecAttrs(spec, 'ConvTransposeBackwardWeights')` gives the op that default).
 *
 * @param input - the transposed convolution's input (the small side), [N, X…, C] (NXC) or
 *   [N, C, X…] (NCX); float32 tensor or tensor-like.
 * @param outputDelta - the gradient of the loss with respect to its output, same layout; its
 *   spatial sizes must be (in − 1)·s − pb − pe + d·(K−1) + 1 + outputPadding.
 * @param attrs - strides (required), pads, dilations, autoPad, groups, formats, filterShape,
 *   outputPadding.
 * @param filterShape - the spec's optional third input, as for `convolutionBackpropFilters`.
 * @returns the filter gradient, float32, shaped as `filterFormat` says.
 * @throws Error before any work on a bad call, naming the op, the attribute or argument, what was
 *   expected and what was given, e.g. `ConvTransposeBackpropFilters: groups (3) must divide input
 *   channels (4) and outputDelta channels (6)`.
 *
 * @example
 * ```ts
 * const x = tf.randomNormal([1, 8, 8, 2]);     // NXC, C = 2
 * const dy = tf.randomNormal([1, 16, 16, 3]);  // O = 3
 * convTransposeBackpropFilters(x, dy, {strides: [2, 2], autoPad: 'same_upper', filterShape: [3, 3]}).shape;
 * // [3, 3, 2, 3] = XIO (K_h, K_w, C, O/G)
 * ```
 */
export const convTransposeBackpropFilters = tf.op({
  convTransposeBackpropFilters_(
      input: tf.Tensor | tf.TensorLike, outputDelta: tf.Tensor | tf.TensorLike,
      attrs: ConvTransposeBackpropFiltersAttrs, filterShape?: FilterShapeArgument): tf.Tensor {
    return runFilterGradient(ConvTransposeBackpropFilters, input, outputDelta, attrs, filterShape);
  },
});

import * as tf from '@tensorflow/tfjs-core';

import {ConvolutionBackpropFiltersAttrs, ConvTransposeBackpropFiltersAttrs, DataFormat, FilterFormat, parseAttributes, TransposedFilterFormat} from '../attributes';
import {opError} from '../errors';
import {computeGeometry, FilterGradientGeometry} from '../geometry';
import {ConvolutionBackpropFilters, ConvTransposeBackpropFilters, OpName} from '../names';
import {convolutionBackpropFilters, convTransposeBackpropFilters} from '../ops';
import {rawConvolution, rawConvTranspose, stridedAxis} from './raw_convolution';

/** `convolution`'s attributes: those of ConvolutionBackpropFilters; the filter tensor gives the filter shape. */
export type ConvolutionAttrs = Omit<ConvolutionBackpropFiltersAttrs, 'filterShape'>;

/** `convTranspose`'s attributes: those of ConvTransposeBackpropFilters, plus `outputShape`. */
export interface ConvTransposeAttrs extends Omit<ConvTransposeBackpropFiltersAttrs, 'filterShape'> {
  /**
   * The output's spatial sizes (or its full shape in dataFormat), for when the size is
   * ambiguous (strides > 1): sets outputPadding to what gives this size. With autoPad
   * 'same_*' or 'valid' it must equal the size the attributes give.
   */
  outputShape?: number[];
}

const CONVOLUTION = 'convolution';
const CONV_TRANSPOSE = 'convTranspose';

/**
 * The problem, resolved once (as computeGeometry does for the filter-gradient kernels): it is the
 * geometry of the matching filter-gradient problem (input = x, outputDelta = y, filterShape = the
 * filter's shape), so validation and its messages are those of the kernels, with the op named.
 */
export interface ResolvedConvolution {
  readonly transposed: boolean;
  readonly spatialRank: number;
  readonly strides: readonly number[];
  readonly dilations: readonly number[];
  readonly padsBegin: readonly number[];
  readonly padsEnd: readonly number[];
  /** The transposed op's output padding (its output size minus the size with none); 0 for the convolution. */
  readonly outputPadding: readonly number[];
  readonly groups: number;
  readonly dataFormat: DataFormat;
  readonly filterFormat: TransposedFilterFormat;
  readonly filterShape: readonly number[];
  /** Spatial sizes of x (the convolution's input, the transposed convolution's small side) and y. */
  readonly inputSpatial: readonly number[];
  readonly outputSpatial: readonly number[];
  /** y's full shape in dataFormat. */
  readonly outputShape: readonly number[];
}

/** Resolved problem from a filter-gradient geometry (used by the gradients of the kernels too). */
export function resolvedFromGeometry(geometry: FilterGradientGeometry): ResolvedConvolution {
  const transposed = geometry.op === ConvTransposeBackpropFilters;
  const axes = geometry.axes;
  const inputSpatial = axes.map(a => transposed ? a.diffDstSize : a.srcSize);
  const outputSpatial = axes.map(a => transposed ? a.srcSize : a.diffDstSize);
  const outputShape = transposed ? geometry.src.shape : geometry.diffDst.shape;
  return Object.freeze({
    transposed,
    spatialRank: geometry.spatialRank,
    strides: axes.map(a => a.stride),
    dilations: axes.map(a => a.dilation),
    padsBegin: axes.map(a => a.padBegin),
    padsEnd: axes.map(a => a.padEnd),
    outputPadding: axes.map(
        (a, i) => transposed ?
            outputSpatial[i] - ((inputSpatial[i] - 1) * a.stride - a.padBegin - a.padEnd + a.dilation * (a.kernelSize - 1) + 1) :
            0),
    groups: geometry.groups,
    dataFormat: geometry.dataFormat,
    filterFormat: geometry.filterFormat,
    filterShape: geometry.filterShape,
    inputSpatial,
    outputSpatial,
    outputShape,
  });
}

function toFloatTensor(label: string, name: string, value: tf.Tensor | tf.TensorLike): tf.Tensor {
  if (value instanceof tf.Tensor) return value;
  try {
    return tf.tensor(value, undefined, 'float32');
  } catch (cause) {
    throw opError(label, `argument '${name}'`, `must be a tensor or a tensor-like of numbers (${(cause as Error).message})`);
  }
}

/** Runs a validation of the matching filter-gradient problem, naming the forward op in its errors. */
function asForwardOp<T>(label: string, op: OpName, f: () => T): T {
  try {
    return f();
  } catch (e) {
    const message = String((e as Error)?.message ?? e);
    if (!message.startsWith(`${op}: `)) throw e;
    throw new Error(`${label}: ${message.slice(op.length + 2)
                                     .replace(/attribute 'filterShape'/g, 'filter shape')
                                     .replace(/outputDelta/g, 'output')}`);
  }
}

function filterLetters(format: string, spatialRank: number): string[] {
  return format.replace('X', 'X'.repeat(spatialRank)).split('');
}

/** Channels of y the filter gives: the convolution's O, or G · (O/G) for the transposed one. */
function outputChannels(transposed: boolean, format: string, filterShape: readonly number[], groups: number): number {
  const letters = filterLetters(format, filterShape.length - 2);
  const o = filterShape[letters.indexOf('O')];
  return transposed ? o * groups : o;
}

/** The explicit pads of DESIGN.md §2 (same as computeGeometry's), to size y before validating. */
function guessPads(
    autoPad: string, transposed: boolean, inputSpatial: readonly number[], kernel: readonly number[],
    strides: readonly number[], dilations: readonly number[], padsBegin: readonly number[],
    padsEnd: readonly number[], outputPadding: readonly number[]): {begin: number[]; end: number[]} {
  if (autoPad === 'none') return {begin: [...padsBegin], end: [...padsEnd]};
  if (autoPad === 'valid') return {begin: kernel.map(() => 0), end: kernel.map(() => 0)};
  const totals = inputSpatial.map((size, i) => {
    const extent = dilations[i] * (kernel[i] - 1) + 1;
    return Math.max(
        0, transposed ? extent + outputPadding[i] - strides[i] : (Math.ceil(size / strides[i]) - 1) * strides[i] + extent - size);
  });
  const halves = totals.map(t => Math.floor(t / 2));
  const rests = totals.map((t, i) => t - halves[i]);
  return autoPad === 'same_upper' ? {begin: halves, end: rests} : {begin: rests, end: halves};
}

function resolve(
    label: string, transposed: boolean, x: tf.Tensor, w: tf.Tensor,
    attrs: ConvolutionAttrs | ConvTransposeAttrs | undefined): ResolvedConvolution {
  const op: OpName = transposed ? ConvTransposeBackpropFilters : ConvolutionBackpropFilters;
  const {outputShape: requestedOutput, ...rest} = (attrs ?? {}) as ConvTransposeAttrs;
  if (!transposed && requestedOutput !== undefined) {
    throw opError(label, `attribute 'outputShape'`, `is not an attribute of ${label} (only of convTranspose)`);
  }
  if ((rest as {filterShape?: unknown}).filterShape !== undefined) {
    throw opError(label, `attribute 'filterShape'`, 'is not an attribute here: the filter tensor gives the filter shape');
  }
  if (x.rank < 3 || x.rank > 5) {
    throw opError(label, 'input', `must have rank 3, 4 or 5 (batch, channels, 1 to 3 spatial axes), got shape [${x.shape}]`);
  }
  if (w.rank !== x.rank) {
    throw opError(label, 'filter', `must have the input's rank (${x.rank}), got shape [${w.shape}]`);
  }
  if (w.dtype !== 'float32') throw opError(label, 'filter', `must be float32, got ${w.dtype}`);
  const r = x.rank - 2;
  const attrsForGeometry = {...rest, filterShape: [...w.shape]} as Record<string, unknown>;
  const parsed = asForwardOp(label, op, () => parseAttributes(op, attrsForGeometry as never, r));
  const inputSpatial = parsed.dataFormat === 'NXC' ? x.shape.slice(1, 1 + r) : x.shape.slice(2);
  const kernel = w.shape.filter((_, axis) => filterLetters(parsed.filterFormat, r)[axis] === 'X');
  let outputPadding = [...parsed.outputPadding];
  const sizeWith = (padding: readonly number[]) => {
    const pads = guessPads(
        parsed.autoPad, transposed, inputSpatial, kernel, parsed.strides, parsed.dilations, parsed.padsBegin,
        parsed.padsEnd, padding);
    return inputSpatial.map((size, i) => {
      const extent = parsed.dilations[i] * (kernel[i] - 1);
      return transposed ? (size - 1) * parsed.strides[i] - pads.begin[i] - pads.end[i] + extent + 1 + padding[i] :
                          Math.floor((size + pads.begin[i] + pads.end[i] - extent - 1) / parsed.strides[i]) + 1;
    });
  };
  let outSpatial = sizeWith(outputPadding);
  if (requestedOutput !== undefined) {
    const list = Array.isArray(requestedOutput) ? requestedOutput : undefined;
    const spatial = list?.length === r + 2 ? (parsed.dataFormat === 'NXC' ? list.slice(1, 1 + r) : list.slice(2)) : list;
    if (spatial === undefined || spatial.length !== r || !spatial.every(v => Number.isSafeInteger(v) && v >= 1)) {
      throw opError(
          label, `attribute 'outputShape'`, `must hold ${r} positive integers (spatial sizes) or ${r + 2} (the full shape)`,
          requestedOutput);
    }
    if (parsed.autoPad === 'none') {
      const unpadded = sizeWith(outputPadding.map(() => 0));
      outputPadding = spatial.map((size, i) => size - unpadded[i]);
      if (outputPadding.some(v => v < 0)) {
        throw opError(
            label, `attribute 'outputShape'`,
            `must be at least the size [${unpadded}] the attributes give for input [${x.shape}]`, requestedOutput);
      }
      if ((rest as ConvTransposeAttrs).outputPadding !== undefined &&
          outputPadding.some((v, i) => v !== parsed.outputPadding[i])) {
        throw opError(
            label, `attribute 'outputShape'`,
            `disagrees with outputPadding [${parsed.outputPadding}] (it needs [${outputPadding}])`, requestedOutput);
      }
      outSpatial = [...spatial];
    } else if (spatial.some((size, i) => size !== outSpatial[i])) {
      throw opError(
          label, `attribute 'outputShape'`,
          `must be [${outSpatial}], the size autoPad '${parsed.autoPad}' gives for input [${x.shape}]`, requestedOutput);
    }
  }
  if (outSpatial.some(size => !(size >= 1))) {
    throw opError(
        label, 'the attributes', `give an empty output [${outSpatial}] for input [${x.shape}] and filter [${w.shape}]`);
  }
  const outChannels = outputChannels(transposed, parsed.filterFormat, w.shape, parsed.groups);
  const yShape = parsed.dataFormat === 'NXC' ? [x.shape[0], ...outSpatial, outChannels] :
                                               [x.shape[0], outChannels, ...outSpatial];
  const geometry = asForwardOp(label, op, () => computeGeometry(op, {
    input: {shape: x.shape, dtype: x.dtype},
    outputDelta: {shape: yShape, dtype: 'float32'},
  }, transposed ? {...attrsForGeometry, outputPadding} : attrsForGeometry));
  return resolvedFromGeometry(geometry);
}

/**
 * Permutes blocks of axes: `blocks` splits w's axes into consecutive runs (sizes in axes), each
 * run is merged into one axis, the merged axes are transposed by `order`, and the runs expanded
 * again. Filters' spatial axes move as one block, so every transpose is of rank 3 (webgl has
 * no rank-5 shader for some ops).
 */
function permuteBlocks(w: tf.Tensor, blocks: readonly number[], order: readonly number[]): tf.Tensor {
  const runs: number[][] = [];
  let axis = 0;
  for (const length of blocks) {
    runs.push(w.shape.slice(axis, axis + length));
    axis += length;
  }
  const merged = tf.reshape(w, runs.map(run => run.reduce((a, b) => a * b, 1)));
  return tf.reshape(tf.transpose(merged, [...order]), order.flatMap(i => runs[i]));
}

/** A transposed-convolution filter in `format` → (O/G, C, K…). */
function transposedFilterToOIX(w: tf.Tensor, format: TransposedFilterFormat): tf.Tensor {
  const r = w.rank - 2;
  switch (format) {
    case 'OIX': return w;
    case 'IOX': return permuteBlocks(w, [1, 1, r], [1, 0, 2]);  // (C, O/G, K…)
    case 'XIO': return permuteBlocks(w, [r, 1, 1], [2, 1, 0]);  // (K…, C, O/G)
    default: return permuteBlocks(w, [r, 1, 1], [1, 2, 0]);     // XOI (K…, O/G, C)
  }
}

function rawParams(p: ResolvedConvolution) {
  return {strides: p.strides, dilations: p.dilations, padsBegin: p.padsBegin, padsEnd: p.padsEnd, groups: p.groups};
}

/** y of the resolved problem, recording no gradient (the callers wrap it in customGrad). */
function forwardValue(p: ResolvedConvolution, x: tf.Tensor, w: tf.Tensor): tf.Tensor {
  return tf.tidy(() => {
    const channelsLast = p.dataFormat === 'NXC';
    if (!p.transposed) return rawConvolution(x, w, rawParams(p), channelsLast, p.filterFormat as FilterFormat);
    return rawConvTranspose(
        x, transposedFilterToOIX(w, p.filterFormat),
        {...rawParams(p), padsEnd: p.padsEnd.map((e, i) => e - p.outputPadding[i])}, channelsLast);
  });
}

/** Explicit attributes of a resolved problem (autoPad none) for the public ops. */
function explicitAttrs(p: ResolvedConvolution) {
  return {
    strides: [...p.strides], dilations: [...p.dilations], padsBegin: [...p.padsBegin], padsEnd: [...p.padsEnd],
    autoPad: 'none' as const, groups: p.groups, dataFormat: p.dataFormat,
  };
}

/**
 * The convolution's data gradient dx for upstream dy, through filter w (in the convolution's
 * format): the transposed convolution with the same strides, dilations, pads and groups, sized
 * to x. The convolution filter (O, C/G, K…) read as a transposed one is IOX; XIO is XOI.
 * Differentiable (it is the public convTranspose).
 */
export function convolutionDataGradient(p: ResolvedConvolution, dy: tf.Tensor, w: tf.Tensor): tf.Tensor {
  return convTranspose(dy, w, {
    ...explicitAttrs(p),
    filterFormat: p.filterFormat === 'OIX' ? 'IOX' : 'XOI',
    outputShape: [...p.inputSpatial],
  });
}

/** The convolution's y for filter w through the resolved problem (differentiable). */
export function convolutionExplicit(p: ResolvedConvolution, x: tf.Tensor, w: tf.Tensor): tf.Tensor {
  return convolution(x, w, {...explicitAttrs(p), filterFormat: p.filterFormat as FilterFormat});
}

/**
 * The transposed convolution's data gradient dx for upstream dy, through filter w (in the
 * transposed format): the convolution with the same strides, dilations, pads and groups, whose
 * filter is the transposed one read as (C, O/G, K…) = OIX (or XOI = XIO); OIX and XIO filters
 * are transposed to those first. A convolution may cover more than x when the output padding
 * exceeds the end pad: its end pad is clamped at 0 and the result cropped to x.
 */
export function convTransposeDataGradient(p: ResolvedConvolution, dy: tf.Tensor, w: tf.Tensor): tf.Tensor {
  const r = p.spatialRank;
  let filter = w;
  let format: FilterFormat;
  switch (p.filterFormat) {
    case 'IOX': format = 'OIX'; break;
    case 'XOI': format = 'XIO'; break;
    case 'OIX': filter = permuteBlocks(w, [1, 1, r], [1, 0, 2]); format = 'OIX'; break;
    default: filter = permuteBlocks(w, [r, 1, 1], [0, 2, 1]); format = 'XIO'; break;
  }
  const attrs = explicitAttrs(p);
  attrs.padsEnd = p.padsEnd.map((e, i) => Math.max(0, e - p.outputPadding[i]));
  const full = convolution(dy, filter, {...attrs, filterFormat: format});
  const spatialStart = p.dataFormat === 'NXC' ? 1 : 2;
  // Crops axis by axis on rank-3 views (differentiable: reshape and slice).
  return p.inputSpatial.reduce((t, size, i) => stridedAxis(t, spatialStart + i, 0, size), full);
}

/** The transposed convolution's y for filter w through the resolved problem (differentiable). */
export function convTransposeExplicit(p: ResolvedConvolution, x: tf.Tensor, w: tf.Tensor): tf.Tensor {
  return convTranspose(x, w, {...explicitAttrs(p), filterFormat: p.filterFormat, outputShape: [...p.outputSpatial]});
}

function filterGradientAttrs(p: ResolvedConvolution, attrs: object) {
  const {outputShape: _, ...rest} = attrs as ConvTransposeAttrs;
  void _;
  return {...rest, filterShape: [...p.filterShape], ...(p.transposed ? {outputPadding: [...p.outputPadding]} : {})};
}

/**
 * A convolution with every attribute of the oneDNN Graph spec, differentiable with respect to
 * both arguments (tf.grad/tf.grads/optimizers):
 *
 *   y[n][g·O/G + o][p] = Σ_c Σ_k x[n][g·C/G + c][p·s − pb + k·d] · W[o][c][k]
 *
 * @param input [N, X…, C] (NXC) or [N, C, X…] (NCX), 1 to 3 spatial axes.
 * @param filter (K…, C/G, O) for filterFormat XIO (the default), (O, C/G, K…) for OIX.
 * @param attrs strides (required), padsBegin/padsEnd, dilations, autoPad, groups, dataFormat, filterFormat.
 * @returns y in dataFormat, float32; d/dinput is the data gradient (a transposed convolution of
 *     dy with the same filter), d/dfilter is the ConvolutionBackpropFilters kernel.
 */
export const convolution = tf.op({convolution_});

function convolution_(
    input: tf.Tensor | tf.TensorLike, filter: tf.Tensor | tf.TensorLike, attrs: ConvolutionAttrs): tf.Tensor {
  return differentiable(CONVOLUTION, false, input, filter, attrs, convolutionDataGradient, (x, dy, gradientAttrs) =>
      convolutionBackpropFilters(x, dy, gradientAttrs as ConvolutionBackpropFiltersAttrs));
}

/**
 * A transposed convolution with every attribute of the spec, differentiable with respect to
 * both arguments: every input element is scattered through the filter,
 *
 *   y[n][g·O/G + o][i·s − pb + k·d] += x[n][g·C/G + c][i] · W[o][g·C/G + c][k],
 *
 * output size (in − 1)·s − pb − pe + d·(K − 1) + 1 + outputPadding.
 *
 * @param input the small side, C channels, in dataFormat.
 * @param filter as for ConvTransposeBackpropFilters: XIO (K…, C, O/G) by default, OIX (O/G, C, K…),
 *     IOX (C, O/G, K…) or XOI (K…, O/G, C).
 * @param attrs those of ConvTransposeBackpropFilters (outputPadding included), plus outputShape.
 * @returns y, float32; d/dinput is a convolution of dy with the same filter, d/dfilter the
 *     ConvTransposeBackpropFilters kernel.
 */
export const convTranspose = tf.op({convTranspose_});

function convTranspose_(
    input: tf.Tensor | tf.TensorLike, filter: tf.Tensor | tf.TensorLike, attrs: ConvTransposeAttrs): tf.Tensor {
  return differentiable(CONV_TRANSPOSE, true, input, filter, attrs, convTransposeDataGradient, (x, dy, gradientAttrs) =>
      convTransposeBackpropFilters(x, dy, gradientAttrs as ConvTransposeBackpropFiltersAttrs));
}

/**
 * y of either op through the resolved problem, with its gradients: the data gradient
 * `dataGradient` and the filter gradient, the op's kernel through `filterGradient`.
 */
function differentiable(
    label: string, transposed: boolean, input: tf.Tensor | tf.TensorLike, filter: tf.Tensor | tf.TensorLike,
    attrs: ConvolutionAttrs | ConvTransposeAttrs,
    dataGradient: (p: ResolvedConvolution, dy: tf.Tensor, w: tf.Tensor) => tf.Tensor,
    filterGradient: (x: tf.Tensor, dy: tf.Tensor, gradientAttrs: object) => tf.Tensor): tf.Tensor {
  const x = toFloatTensor(label, 'input', input);
  const w = toFloatTensor(label, 'filter', filter);
  const p = resolve(label, transposed, x, w, attrs);
  const gradientAttrs = filterGradientAttrs(p, attrs);
  const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    // Saved, not closed over: under a nested tf.grad, x and w may be intermediates of an outer
    // gradient that its tidy disposes before this gradient runs; saved tensors are kept.
    const [xs, ws, save] = args as [tf.Tensor, tf.Tensor, tf.GradSaveFunc];
    save([xs, ws]);
    return {
      value: forwardValue(p, xs, ws),
      gradFunc: (dy: tf.Tensor, [xSaved, wSaved]: tf.Tensor[]) =>
          [dataGradient(p, dy, wSaved), filterGradient(xSaved, dy, gradientAttrs)],
    };
  });
  return f(x, w);
}

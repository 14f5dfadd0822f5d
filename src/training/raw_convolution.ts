import * as tf from '@tensorflow/tfjs-core';

/**
 * Forward convolutions built from tfjs ops every backend runs (cpu, webgl, wasm, tensorflow).
 * No gradients are recorded through these functions: the public ops (forward_ops.ts) wrap them
 * in tf.customGrad with the gradients written out.
 *
 * Canonical filters: the convolution's OIX = (O, C/G, K…); the transposed convolution's
 * OIX = (O/G, C, K…). Pads are explicit and may be negative (a negative pad crops).
 */
export interface RawConvParams {
  readonly strides: readonly number[];
  readonly dilations: readonly number[];
  readonly padsBegin: readonly number[];
  readonly padsEnd: readonly number[];
  readonly groups: number;
}

export type ForwardImplementation = 'auto' | 'native' | 'composite';
let implementation: ForwardImplementation = 'auto';

/**
 * Which forward path convolutions take: 'auto' (tfjs's native conv1d/conv2d/conv3d per group,
 * or depthwiseConv2d, where the backend has the kernel — at stride 1 and subsampled when both
 * strides and dilations are above 1 — else the composite), or one of them forced ('native' is
 * 'auto'). For tests and comparisons; returns the previous setting.
 */
export function setForwardImplementation(value: ForwardImplementation): ForwardImplementation {
  const previous = implementation;
  implementation = value;
  return previous;
}

function spatialAxis(channelsLast: boolean, i: number) {
  return channelsLast ? 1 + i : 2 + i;
}

/*
 * Every op below runs on a view of rank ≤ 4 (axes merged by reshapes): webgl's pad, reverse,
 * stack and some transposes have no shaders for ranks 5 and 6.
 */

function product(list: readonly number[]) {
  return list.reduce((a, b) => a * b, 1);
}

/** [N, C, X…] ↔ [N, X…, C] through a rank-3 view. */
export function toChannelsLast(x: tf.Tensor): tf.Tensor {
  const [N, C, ...spatial] = x.shape;
  return tf.reshape(tf.transpose(tf.reshape(x, [N, C, product(spatial)]), [0, 2, 1]), [N, ...spatial, C]);
}

export function toChannelsFirst(x: tf.Tensor): tf.Tensor {
  const N = x.shape[0];
  const C = x.shape[x.rank - 1];
  const spatial = x.shape.slice(1, x.rank - 1);
  return tf.reshape(tf.transpose(tf.reshape(x, [N, product(spatial), C]), [0, 2, 1]), [N, C, ...spatial]);
}

/** x viewed as [outer, L, inner] around `axis`, f applied, and the result viewed back. */
function onAxis(x: tf.Tensor, axis: number, f: (view: tf.Tensor3D) => tf.Tensor3D): tf.Tensor {
  const outer = product(x.shape.slice(0, axis));
  const inner = product(x.shape.slice(axis + 1));
  const y = f(tf.reshape(x, [outer, x.shape[axis], inner]));
  return tf.reshape(y, [...x.shape.slice(0, axis), y.shape[1], ...x.shape.slice(axis + 1)]);
}

/** `count` elements of `axis` from `begin`, `stride` apart. */
export function stridedAxis(x: tf.Tensor, axis: number, begin: number, count: number, stride = 1): tf.Tensor {
  if (begin === 0 && count === x.shape[axis] && (stride === 1 || count === 1)) return x;
  return onAxis(x, axis, view => {
    const [outer, , inner] = view.shape;
    return stride === 1 ? tf.slice(view, [0, begin, 0], [outer, count, inner]) :
                          tf.stridedSlice(view, [0, begin, 0], [outer, begin + (count - 1) * stride + 1, inner], [1, stride, 1]) as
            tf.Tensor3D;
  });
}

/** Pads (positive) or crops (negative) each spatial axis at both ends. */
export function padOrCrop(
    x: tf.Tensor, begins: readonly number[], ends: readonly number[], channelsLast: boolean): tf.Tensor {
  let result = x;
  begins.forEach((b, i) => {
    const e = ends[i];
    const axis = spatialAxis(channelsLast, i);
    if (b < 0 || e < 0) {
      const cropBegin = Math.max(0, -b);
      result = stridedAxis(result, axis, cropBegin, Math.max(0, result.shape[axis] - cropBegin - Math.max(0, -e)));
    }
    if (b > 0 || e > 0) result = onAxis(result, axis, view => tf.pad(view, [[0, 0], [Math.max(0, b), Math.max(0, e)], [0, 0]]));
  });
  return result;
}

function nativeKernelName(spatialRank: number, inputChannels: number, groups: number) {
  if (spatialRank === 2 && groups > 1 && inputChannels === groups) return 'DepthwiseConv2dNative';
  return spatialRank === 3 ? 'Conv3D' : 'Conv2D';
}

function nativeFits(spatialRank: number, p: RawConvParams, inputChannels: number): boolean {
  if (implementation === 'composite') return false;
  return tf.getKernel(nativeKernelName(spatialRank, inputChannels, p.groups), tf.getBackend()) != null;
}

function allOnes(list: readonly number[]) {
  return list.every(v => v === 1);
}

/** Output spatial sizes of a convolution of an already padded src. */
function convOutputSizes(paddedSpatial: readonly number[], kernel: readonly number[], p: RawConvParams): number[] {
  return paddedSpatial.map((size, i) => Math.floor((size - p.dilations[i] * (kernel[i] - 1) - 1) / p.strides[i]) + 1);
}

/** (O, C/G, K…) ↔ (K…, C/G, O) through a rank-3 view. */
function oixToXio(w: tf.Tensor): tf.Tensor {
  const [o, c] = w.shape as [number, number];
  const kernel = w.shape.slice(2);
  return tf.reshape(tf.transpose(tf.reshape(w, [o, c, product(kernel)]), [2, 1, 0]), [...kernel, c, o]);
}

function xioToOix(w: tf.Tensor): tf.Tensor {
  const r = w.rank - 2;
  const [c, o] = w.shape.slice(r) as [number, number];
  const kernel = w.shape.slice(0, r);
  return tf.reshape(tf.transpose(tf.reshape(w, [product(kernel), c, o]), [2, 1, 0]), [o, c, ...kernel]);
}

/**
 * y = x ⋆ W: x [N, C, X…] (channelsLast: [N, X…, C]), W (O, C/G, K…) or, with filterLayout
 * 'XIO', (K…, C/G, O) → y in x's layout. Pads may be negative (crop). The caller has checked
 * that the sizes are consistent.
 */
export function rawConvolution(
    x: tf.Tensor, w: tf.Tensor, p: RawConvParams, channelsLast: boolean, filterLayout: 'OIX' | 'XIO' = 'OIX'): tf.Tensor {
  return tf.tidy(() => {
    const r = x.rank - 2;
    const kernel = filterLayout === 'OIX' ? w.shape.slice(2) : w.shape.slice(0, r);
    const outChannels = filterLayout === 'OIX' ? w.shape[0] : w.shape[r + 1];
    const inputSpatial = x.shape.slice(channelsLast ? 1 : 2, channelsLast ? 1 + r : 2 + r);
    const out = convOutputSizes(inputSpatial.map((size, i) => size + p.padsBegin[i] + p.padsEnd[i]), kernel, p);
    if (x.shape[0] === 0) {
      return tf.zeros(channelsLast ? [0, ...out, outChannels] : [0, outChannels, ...out]);
    }
    const inputChannels = x.shape[channelsLast ? r + 1 : 1];
    if (nativeFits(r, p, inputChannels)) {
      const xLast = channelsLast ? x : toChannelsLast(x);
      // tfjs's conv ops take strides or dilations, not both: with both, the op runs at stride 1
      // and its output is subsampled (s^r times the work, still far faster than the composite).
      const subsample = !allOnes(p.strides) && !allOnes(p.dilations);
      const q = subsample ? {...p, strides: p.strides.map(() => 1)} : p;
      // conv2d and depthwiseConv2d take explicit pads; otherwise pad first and run 'valid'.
      const explicit = r === 2 && [...p.padsBegin, ...p.padsEnd].every(v => v >= 0);
      let y = nativeConvolution(
          explicit ? xLast : padOrCrop(xLast, p.padsBegin, p.padsEnd, true), filterLayout === 'XIO' ? w : oixToXio(w), q,
          explicit);
      if (subsample) out.forEach((size, i) => y = stridedAxis(y, 1 + i, 0, size, p.strides[i]));
      return channelsLast ? y : toChannelsFirst(y);
    }
    const padded = padOrCrop(channelsLast ? toChannelsFirst(x) : x, p.padsBegin, p.padsEnd, false);
    const y = compositeConvolution(padded, filterLayout === 'OIX' ? w : xioToOix(w), p, out);
    return channelsLast ? toChannelsLast(y) : y;
  });
}

/**
 * tfjs's conv1d/conv2d/conv3d (channels last, filter (K…, C/G, O)), once per group on channel
 * slices, or depthwiseConv2d for 2-D problems with one input channel per group. `explicitPads`:
 * x is unpadded and the pads go to the op (2-D); otherwise x is padded and the op runs 'valid'.
 */
function nativeConvolution(x: tf.Tensor, filter: tf.Tensor, p: RawConvParams, explicitPads: boolean): tf.Tensor {
  const r = x.rank - 2;
  const G = p.groups;
  const C = x.shape[r + 1];
  const O = filter.shape[r + 1];
  const pad2d: 'valid' | [[number, number], [number, number], [number, number], [number, number]] = explicitPads ?
      [[0, 0], [p.padsBegin[0], p.padsEnd[0]], [p.padsBegin[1], p.padsEnd[1]], [0, 0]] :
      'valid';
  if (r === 2 && G > 1 && C === G) {
    // (KH, KW, 1, O) = (KH, KW, C, O/C): output channel g·(O/G) + m is depthwise's c·mult + m.
    return tf.depthwiseConv2d(
        x as tf.Tensor4D, tf.reshape(filter, [filter.shape[0] as number, filter.shape[1] as number, C, O / C]) as tf.Tensor4D,
        p.strides as [number, number], pad2d, 'NHWC', p.dilations as [number, number]);
  }
  const outputs: tf.Tensor[] = [];
  for (let g = 0; g < G; g++) {
    const xg = G === 1 ? x : stridedAxis(x, r + 1, g * (C / G), C / G);
    const fg = G === 1 ? filter : stridedAxis(filter, r + 1, g * (O / G), O / G);
    if (r === 1) {
      outputs.push(tf.conv1d(xg as tf.Tensor3D, fg as tf.Tensor3D, p.strides[0], 'valid', 'NWC', p.dilations[0]));
    } else if (r === 2) {
      outputs.push(tf.conv2d(
          xg as tf.Tensor4D, fg as tf.Tensor4D, p.strides as [number, number], pad2d, 'NHWC',
          p.dilations as [number, number]));
    } else {
      outputs.push(tf.conv3d(
          xg as tf.Tensor5D, fg as tf.Tensor5D, p.strides as [number, number, number], 'valid', 'NDHWC',
          p.dilations as [number, number, number]));
    }
  }
  return outputs.length === 1 ? outputs[0] : tf.concat(outputs, r + 1);
}

/**
 * Window gather + batched matMul (NCX): one strided slice per kernel offset k gives the taps
 * x[n][c][p·s + k·d] for every output position p; the K slices form [G, C/G·K, N·P], contracted
 * with W as [G, O/G, C/G·K] in one matMul with the groups as its batch.
 */
function compositeConvolution(x: tf.Tensor, w: tf.Tensor, p: RawConvParams, out: readonly number[]): tf.Tensor {
  const [N, C] = x.shape;
  const O = w.shape[0];
  const G = p.groups;
  const kernel = w.shape.slice(2);
  const kernelVolume = kernel.reduce((a, b) => a * b, 1);
  const positions = out.reduce((a, b) => a * b, 1);
  // Taps in row-major kernel order, one strided slice per axis on rank-3 views.
  let taps: tf.Tensor[] = [x];
  kernel.forEach((size, i) => {
    taps = taps.flatMap(t => Array.from(
                            {length: size}, (_, k) => stridedAxis(t, 2 + i, k * p.dilations[i], out[i], p.strides[i])));
  });
  const flatTaps = taps.map(t => tf.reshape(t, [N, C, 1, positions]));
  const windows = tf.reshape(flatTaps.length === 1 ? flatTaps[0] : tf.concat(flatTaps, 2),
                             [N, G, (C / G) * kernelVolume, positions]);
  const columns = tf.reshape(tf.transpose(windows, [1, 2, 0, 3]), [G, (C / G) * kernelVolume, N * positions]);
  const weights = tf.reshape(w, [G, O / G, (C / G) * kernelVolume]);
  const y = tf.reshape(tf.matMul(weights, columns), [O, N, positions]);
  return tf.reshape(tf.transpose(y, [1, 0, 2]), [N, O, ...out]);
}

/**
 * The transposed convolution, scattering every input element through the filter:
 *   y[n][g·O/G + o][i·s − pb + k·d] += x[n][g·C/G + c][i] · W[o][g·C/G + c][k],
 * W (O/G, C, K…), output size (in − 1)·s − pb − pe + d·(K − 1) + 1 (pe < 0 adds output padding).
 *
 * Computed as the convolution it is the data gradient of, written as a gather: x is dilated by
 * the strides (s − 1 zeros between elements), padded by d·(K−1) − pb and d·(K−1) − pe (crops
 * where negative), and convolved at stride 1, dilation d with the spatially flipped filter
 * regrouped to (O, C/G, K…).
 */
export function rawConvTranspose(x: tf.Tensor, w: tf.Tensor, p: RawConvParams, channelsLast: boolean): tf.Tensor {
  return tf.tidy(() => {
    const r = x.rank - 2;
    const G = p.groups;
    const [og, C] = w.shape;
    const kernel = w.shape.slice(2);
    let dilated = x;
    for (let i = 0; i < r; i++) {
      if (p.strides[i] > 1) dilated = insertZeros(dilated, spatialAxis(channelsLast, i), p.strides[i]);
    }
    const kernelVolume = product(kernel);
    // (O/G, G·C/G, K…) → (G·O/G, C/G, K…), then every spatial axis reversed (on a rank ≤ 4 view)
    const regrouped = tf.transpose(tf.reshape(w, [og, G, (C / G) * kernelVolume]), [1, 0, 2]);
    const flipped = tf.reshape(
        tf.reverse(tf.reshape(regrouped, [og * C, ...kernel]), kernel.map((_, i) => 1 + i)), [og * G, C / G, ...kernel]);
    const extents = kernel.map((k, i) => p.dilations[i] * (k - 1));
    return rawConvolution(
        dilated, flipped, {
          strides: kernel.map(() => 1),
          dilations: p.dilations,
          padsBegin: extents.map((e, i) => e - p.padsBegin[i]),
          padsEnd: extents.map((e, i) => e - p.padsEnd[i]),
          groups: G,
        },
        channelsLast);
  });
}

/** s − 1 zeros between neighbours along `axis`: length L → (L − 1)·s + 1. */
function insertZeros(x: tf.Tensor, axis: number, s: number): tf.Tensor {
  return onAxis(x, axis, view => {
    const [outer, length, inner] = view.shape;
    const spread = tf.pad(tf.reshape(view, [outer, length, 1, inner]), [[0, 0], [0, 0], [0, s - 1], [0, 0]]);
    return tf.slice(tf.reshape(spread, [outer, length * s, inner]), [0, 0, 0], [outer, (length - 1) * s + 1, inner]) as
        tf.Tensor3D;
  });
}

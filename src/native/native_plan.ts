import {env} from '@tensorflow/tfjs-core';

import type {FilterGradientGeometry, SpatialAxis} from '../geometry';
import {registerFlagOnce} from '../tuning_flags';

/**
 * The tfjs flag that lets a backend's own filter-gradient kernel run problems whose reads fall
 * in padding: `tf.env().set('CONV_BACKPROP_FILTERS_NATIVE_PADDED', true)`. Default false.
 *
 * TensorFlow's CPU kernels (what tfjs-node runs) multiply the padding zeros with outputDelta,
 * so an infinite outputDelta meeting padding gives NaN where the spec's sum (DESIGN.md §2) has
 * no such term and is exact. With the flag off, a problem whose reads fall in padding takes the
 * composite, which never forms those products; with it on, 'same'-padded problems take the
 * backend's kernel too, with that backend's behaviour on non-finite values.
 */
export const CONV_BACKPROP_FILTERS_NATIVE_PADDED = 'CONV_BACKPROP_FILTERS_NATIVE_PADDED';

/** Registers the flag (idempotent; a value already set is kept). */
export function registerNativePaddedFlag() {
  registerFlagOnce(CONV_BACKPROP_FILTERS_NATIVE_PADDED, () => false);
}

/** The flag's value in force. */
export function nativePaddedAllowed(): boolean {
  registerNativePaddedFlag();
  return env().getBool(CONV_BACKPROP_FILTERS_NATIVE_PADDED);
}

/** tfjs's filter-gradient kernels (tfjs-node runs them as TensorFlow's native ops). */
export type NativeKernelName = 'Conv2DBackpropFilter' | 'DepthwiseConv2dNativeBackpropFilter' | 'Conv3DBackpropFilterV2';

export const NATIVE_KERNELS: readonly NativeKernelName[] =
    Object.freeze(['Conv2DBackpropFilter', 'DepthwiseConv2dNativeBackpropFilter', 'Conv3DBackpropFilterV2']);

/**
 * Why a problem takes the composite rather than the backend's own kernel:
 * - `empty-batch`: a batch of 0 (the gradient is zeros; no kernel is asked);
 * - `dilated`: a dilation above 1 (TensorFlow's CPU kernels reject it, its depthwise one ignores it);
 * - `grouped`: groups other than 1 and depthwise (C/G = 1);
 * - `depthwise-3d`: a depthwise 3-D problem (there is no such kernel);
 * - `depthwise-strides`: a 2-D depthwise problem with unequal strides (TensorFlow's CPU kernel needs them equal);
 * - `no-native-kernel`: the backend does not register the kernel the problem needs;
 * - `pads`: pads that neither 'valid' nor 'same' (TensorFlow's: the odd element at the end) give;
 * - `reads-padding`: 'same' pads some read falls in, while CONV_BACKPROP_FILTERS_NATIVE_PADDED is off.
 */
export type CompositeReason =
    'empty-batch' | 'dilated' | 'grouped' | 'depthwise-3d' | 'depthwise-strides' | 'no-native-kernel' | 'pads' |
    'reads-padding';

/**
 * The backend's own kernel computes the problem: its inputs are `src` as x and `diffDst` as dy
 * (the transposed op's roles are already swapped in the geometry), channels last, a 1-D
 * problem as 2-D with height 1, and its result, reshaped to [K…, SC, G·DC], is the canonical
 * filter gradient, transposed into the requested filter format.
 */
export interface NativePlan {
  readonly path: 'native';
  readonly kernel: NativeKernelName;
  /** 'valid' when no read falls in padding; 'same' (only with CONV_BACKPROP_FILTERS_NATIVE_PADDED) otherwise. */
  readonly pad: 'valid' | 'same';
  /**
   * The src positions each spatial axis reads, from 0: the src size, or less where the output
   * is shorter than 'valid' would make it (a transposed op's output padding: src rows past the
   * last window), which are cropped off so that TensorFlow's 'valid' gives dy's size.
   */
  readonly srcSpatial: readonly number[];
  /** The shapes x and dy take: NHWC, or NDHWC for Conv3DBackpropFilterV2. */
  readonly xShape: readonly number[];
  readonly dyShape: readonly number[];
  /** The attributes runKernel gets, as tfjs's ops pass them to the kernel. */
  readonly attrs: Readonly<Record<string, unknown>>;
}

/** The composite of tfjs ops computes the problem, for `reason`. */
export interface CompositePlan {
  readonly path: 'composite';
  readonly reason: CompositeReason;
}

export type FilterGradientPlan = NativePlan | CompositePlan;

/** What the plan depends on besides the problem. */
export interface NativeOptions {
  /** Whether the backend registers `kernel`. */
  readonly hasKernel: (kernel: NativeKernelName) => boolean;
  /** CONV_BACKPROP_FILTERS_NATIVE_PADDED: take the kernel for 'same' pads some read falls in. */
  readonly padded: boolean;
}

/** Whether a tap of this axis reads outside the src (into padding). */
function readsPadding(axis: SpatialAxis): boolean {
  return axis.padBegin > 0 || (axis.diffDstSize - 1) * axis.stride + (axis.kernelSize - 1) * axis.dilation > axis.srcSize - 1;
}

/**
 * Whether TensorFlow's (and tfjs's computeConv2DInfo's) 'same' gives this axis: output
 * ceil(in / s), and the begin pad half the total, rounded down. A larger end pad than the total
 * leaves the output size unchanged and adds no term, so only the begin pad is compared.
 */
function isSame(axis: SpatialAxis): boolean {
  const out = Math.ceil(axis.srcSize / axis.stride);
  const total = Math.max(0, (out - 1) * axis.stride + axis.kernelSize - axis.srcSize);
  return axis.diffDstSize === out && axis.padBegin === Math.floor(total / 2);
}

/**
 * Which implementation computes the problem on a backend without a dedicated kernel of this
 * package: the backend's own filter-gradient kernel where it computes exactly what the spec
 * asks, or the composite, with the reason. The first rule that refuses decides the reason, in
 * the order of CompositeReason.
 *
 * @example
 * ```ts
 * planNative(geometry, {hasKernel: () => true, padded: false});
 * // {path: 'native', kernel: 'Conv2DBackpropFilter', pad: 'valid', xShape: [2, 9, 9, 3], …}
 * // or {path: 'composite', reason: 'dilated'}
 * ```
 */
export function planNative(geometry: FilterGradientGeometry, options: NativeOptions): FilterGradientPlan {
  const composite = (reason: CompositeReason): CompositePlan => ({path: 'composite', reason});
  const {axes, spatialRank, groups} = geometry;
  if (geometry.batch === 0) return composite('empty-batch');
  if (axes.some(axis => axis.dilation !== 1)) return composite('dilated');
  const depthwise = groups > 1 && geometry.src.channelsPerGroup === 1;
  if (groups > 1 && !depthwise) return composite('grouped');
  if (depthwise && spatialRank === 3) return composite('depthwise-3d');
  if (depthwise && spatialRank === 2 && axes[0].stride !== axes[1].stride) return composite('depthwise-strides');
  const kernel: NativeKernelName =
      depthwise ? 'DepthwiseConv2dNativeBackpropFilter' : spatialRank === 3 ? 'Conv3DBackpropFilterV2' : 'Conv2DBackpropFilter';
  if (!options.hasKernel(kernel)) return composite('no-native-kernel');
  let pad: 'valid' | 'same';
  if (!axes.some(readsPadding)) {
    pad = 'valid';
  } else if (axes.every(isSame)) {
    if (!options.padded) return composite('reads-padding');
    pad = 'same';
  } else {
    return composite('pads');
  }

  // Where 'valid' would give more output than dy has (src rows past the last window), the src
  // is cropped to the rows the windows read.
  const srcSpatial = axes.map(
      axis => pad === 'valid' ? Math.min(axis.srcSize, (axis.diffDstSize - 1) * axis.stride + axis.kernelSize) : axis.srcSize);

  // 1-D as 2-D: a unit height axis in front. Its stride is the width's for depthwise (TensorFlow
  // needs equal strides there; one row of one tap gives one output row at any stride), 1 otherwise.
  const asTwoD = spatialRank === 1;
  const unit = (size: number) => asTwoD ? [size] : [];
  const kernelSizes = [...unit(1), ...axes.map(axis => axis.kernelSize)];
  const strides = [...unit(depthwise ? axes[0].stride : 1), ...axes.map(axis => axis.stride)];
  const channelsLast = (spatial: number[], channels: number) => [geometry.batch, ...unit(1), ...spatial, channels];
  const xShape = channelsLast(srcSpatial, geometry.src.channels);
  const dyShape = channelsLast(axes.map(axis => axis.diffDstSize), geometry.diffDst.channels);
  const sc = geometry.src.channelsPerGroup;
  const dc = geometry.diffDst.channelsPerGroup;
  let attrs: Record<string, unknown>;
  switch (kernel) {
    case 'Conv2DBackpropFilter':
      attrs = {strides, pad, dataFormat: 'NHWC', filterShape: [...kernelSizes, sc, dc]};
      break;
    case 'DepthwiseConv2dNativeBackpropFilter':
      attrs = {strides, dilations: [1, 1], pad, filterShape: [...kernelSizes, groups, dc]};
      break;
    case 'Conv3DBackpropFilterV2':
      attrs = {strides, pad, filterShape: [...kernelSizes, sc, dc]};
      break;
  }
  return {path: 'native', kernel, pad, srcSpatial, xShape, dyShape, attrs};
}

/** The plan as the verbose line prints it: `native <kernel>` or `composite (<reason>)`. */
export function describePlan(plan: FilterGradientPlan): string {
  return plan.path === 'native' ? `native ${plan.kernel}` : `composite (${plan.reason})`;
}

import * as tf from '@tensorflow/tfjs-core';
import type {TensorInfo} from '@tensorflow/tfjs-core';

import {chunkBudgetBytes} from '../composite/chunk_budget';
import {asTensor, compositeFilterGradient, sliceMerged, transposeMerged} from '../composite/filter_gradient_composite';
import type {FilterGradientGeometry} from '../geometry';
import {reportPath} from '../verbose';
import {describePlan, FilterGradientPlan, NativeKernelName, nativePaddedAllowed, NativePlan, planNative} from './native_plan';

/**
 * The filter gradient by the backend's own kernel, as `plan` says: src and diffDst moved
 * channels last and reshaped to the kernel's rank on the device, one runKernel, and the result
 * ([K…, SC, G·DC] once reshaped: a depthwise [K…, G, DC] is [K…, 1, G·DC] in the same order)
 * transposed into the geometry's filter format. `src` and `diffDst` are TensorInfos of the
 * current backend, left as they are; the result is a new tensor of it.
 */
export function nativeFilterGradient(
    geometry: FilterGradientGeometry, plan: NativePlan, src: TensorInfo, diffDst: TensorInfo): tf.Tensor {
  return tf.tidy(() => {
    const x = toChannelsLast(geometry, cropSpatial(geometry, asTensor(src), plan.srcSpatial), plan.xShape);
    const dy = toChannelsLast(geometry, asTensor(diffDst), plan.dyShape);
    const raw = tf.engine().runKernel(plan.kernel, {x, dy}, plan.attrs as tf.NamedAttrMap) as tf.Tensor;
    const kernelSizes = geometry.axes.map(axis => axis.kernelSize);
    const canonical = tf.reshape(raw, [...kernelSizes, geometry.src.channelsPerGroup, geometry.diffDst.channels]);
    return toFilterFormat(geometry, canonical);
  });
}

/** `tensor` (src, in the data format) cut to the first `spatial` positions of each spatial axis; itself when nothing is cut. */
function cropSpatial(geometry: FilterGradientGeometry, tensor: tf.Tensor, spatial: readonly number[]): tf.Tensor {
  const first = geometry.dataFormat === 'NXC' ? 1 : 2;
  if (spatial.every((size, i) => size === tensor.shape[first + i])) return tensor;
  const size = [...tensor.shape];
  spatial.forEach((value, i) => size[first + i] = value);
  return sliceMerged(tensor, size.map(() => 0), size);
}

/** A tensor of the data format as the kernel takes it: NCX moved to NXC, then reshaped (1-D: a unit height). */
function toChannelsLast(geometry: FilterGradientGeometry, tensor: tf.Tensor, shape: readonly number[]): tf.Tensor {
  const rank = tensor.rank;
  const nxc = geometry.dataFormat === 'NCX' ?
      transposeMerged(tensor, [0, ...Array.from({length: rank - 2}, (_, i) => i + 2), 1]) :
      tensor;
  return tf.reshape(nxc, [...shape]);
}

/**
 * [K…, SC, G·DC] → the result in `filterFormat`: its axes ordered by the geometry's element
 * strides in the result (unit axes may go anywhere), one transpose and a reshape.
 */
function toFilterFormat(geometry: FilterGradientGeometry, canonical: tf.Tensor): tf.Tensor {
  const r = geometry.spatialRank;
  const strides: Array<[number, number]> = [
    ...geometry.axes.map((axis, i): [number, number] => [i, axis.filterStride]),
    [r, geometry.filterStrides.srcChannel],
    [r + 1, geometry.filterStrides.diffDstChannel],
  ];
  const perm = strides.filter(([axis]) => canonical.shape[axis] > 1).sort((a, b) => b[1] - a[1]).map(([axis]) => axis);
  for (let axis = 0; axis < canonical.rank; axis++) if (canonical.shape[axis] === 1) perm.push(axis);
  return tf.reshape(transposeMerged(canonical, perm), [...geometry.filterShape]);
}

/**
 * The plan for the current backend (by name): its own kernels where they compute the problem
 * (native_plan.ts), the composite elsewhere.
 */
export function planForBackend(geometry: FilterGradientGeometry, backendName: string): FilterGradientPlan {
  return planNative(geometry, {
    hasKernel: (kernel: NativeKernelName) => tf.getKernel(kernel, backendName) !== undefined,
    padded: nativePaddedAllowed(),
  });
}

/**
 * The filter gradient on a backend without a dedicated kernel of this package: planned, the
 * path reported to the verbose line, and computed by the backend's own kernel or the composite.
 */
export function routedFilterGradient(
    geometry: FilterGradientGeometry, src: TensorInfo, diffDst: TensorInfo, backendName: string): tf.Tensor {
  const plan = planForBackend(geometry, backendName);
  reportPath(geometry, describePlan(plan));
  if (plan.path === 'native') return nativeFilterGradient(geometry, plan, src, diffDst);
  return compositeFilterGradient(geometry, src, diffDst, chunkBudgetBytes(geometry.op));
}

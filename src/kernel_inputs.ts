import type {KernelBackend, NamedAttrMap, NamedTensorInfoMap} from '@tensorflow/tfjs-core';

import {opError} from './errors';
import {computeGeometry, FilterGradientGeometry} from './geometry';
import {OpName} from './names';

/**
 * The geometry of a kernel call, as every backend's kernel computes it: checks the optional
 * filterShape input (int32, 1-D) before reading its few values through the backend.
 */
export function geometryOfKernelCall(
    op: OpName, inputs: NamedTensorInfoMap, backend: KernelBackend,
    attrs: NamedAttrMap | undefined): FilterGradientGeometry {
  const {input, outputDelta, filterShape} = inputs;
  let filterShapeValues: ArrayLike<number> | undefined;
  if (filterShape !== undefined && filterShape !== null) {
    if (filterShape.dtype !== 'int32' || filterShape.shape.length !== 1) {
      throw opError(
          op, 'filterShape input',
          `must be an int32 1-D tensor, got a ${filterShape.dtype} tensor of shape [${filterShape.shape}]`);
    }
    filterShapeValues = backend.readSync(filterShape.dataId) as Int32Array;
  }
  return computeGeometry(op, {input, outputDelta, filterShape: filterShapeValues}, attrs);
}

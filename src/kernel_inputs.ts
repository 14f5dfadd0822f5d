import {engine, tensor as makeTensor} from '@tensorflow/tfjs-core';
import type {KernelBackend, NamedAttrMap, NamedTensorInfoMap, Tensor, TensorInfo} from '@tensorflow/tfjs-core';

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
  checkContextNotLost(op, backend);
  const {input, outputDelta, filterShape} = inputs;
  checkNotDisposed(op, 'input', input, backend);
  checkNotDisposed(op, 'outputDelta', outputDelta, backend);
  checkNotDisposed(op, 'filterShape', filterShape, backend);
  let filterShapeValues: ArrayLike<number> | undefined;
  if (filterShape !== undefined && filterShape !== null) {
    if (filterShape.dtype !== 'int32' || filterShape.shape.length !== 1) {
      throw opError(
          op, 'filterShape input',
          `must be an int32 1-D tensor, got a ${filterShape.dtype} tensor of shape [${filterShape.shape}]`);
    }
    filterShapeValues = readWhereItLives(filterShape, backend) as Int32Array;
  }
  return computeGeometry(op, {input, outputDelta, filterShape: filterShapeValues}, attrs);
}

/**
 * Why an input made on another backend is copied, not moved: tfjs moves a foreign tensor's data
 * to the backend on first access, and under IS_TEST (tfjs's own tests, this suite, the fuzzer)
 * checks each runKernel for leaked data ids net of the moves it made. It counts moves on a
 * stack it pushes per runKernel and never pops, so a kernel that runs inner ops (the composite
 * kernel) is checked against the count of its last inner op: a move in it, whether made by an
 * inner op or by the kernel itself, reads as a leak ("internal memory leak (2 data ids)").
 * A copy made and disposed within the kernel leaves the count of data ids unchanged.
 */

/** A tensor's values read on the backend that holds them, without moving them to `backend`. */
export function readWhereItLives(tensor: TensorInfo, backend: KernelBackend) {
  const engineInfo = engine().state.tensorInfo.get(tensor.dataId);
  return engineInfo !== undefined && engineInfo.backend !== backend ? engine().readSync(tensor.dataId) :
                                                                      backend.readSync(tensor.dataId);
}

/**
 * A copy on `backend` (the current one, where the kernel runs) of an input another backend
 * holds, for the caller to dispose before returning; undefined when the input is on `backend`
 * (or is a kernel's own intermediate, which the engine does not know).
 */
export function copyOfForeignInput(tensor: TensorInfo, backend: KernelBackend): Tensor | undefined {
  const engineInfo = engine().state.tensorInfo.get(tensor.dataId);
  if (engineInfo === undefined || engineInfo.backend === backend) return undefined;
  return makeTensor(engine().readSync(tensor.dataId) as Float32Array, [...tensor.shape], 'float32');
}

/**
 * A webgl backend whose WebGL context was lost (WEBGL_lose_context, a GPU reset, too many
 * contexts) runs programs without error but computes nothing: tfjs's dataSync then returns
 * zeros and data() never resolves. Refuse to run there. Read by duck typing: no backend code.
 */
function checkContextNotLost(op: OpName, backend: KernelBackend) {
  const gl = (backend as {gpgpu?: {gl?: {isContextLost?: () => boolean}}}).gpgpu?.gl;
  if (gl?.isContextLost?.() === true) {
    throw opError(
        op, 'the webgl backend',
        'has lost its WebGL context: it would return zeros or never resolve; register and select a new webgl backend');
  }
}

/**
 * runKernel hands a disposed tensor to the kernel as is (its shape and dtype survive): its data
 * would then be read through the engine, which fails with a TypeError naming nothing, or, on
 * the composite kernel, only after other kernels ran. Data is gone when neither the engine nor
 * the backend knows it (a kernel's own intermediate TensorInfo is known to the backend only).
 */
function checkNotDisposed(op: OpName, name: string, tensor: TensorInfo | undefined, backend: KernelBackend) {
  if (tensor === undefined || tensor === null) return;
  if (!engine().state.tensorInfo.has(tensor.dataId) && !(backend.refCount(tensor.dataId) > 0)) {
    throw opError(op, `input '${name}'`, 'is a disposed tensor');
  }
}

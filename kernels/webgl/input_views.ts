import type {TensorInfo} from '@tensorflow/tfjs-core';
import {getKernel} from '@tensorflow/tfjs-core';
import type {MathBackendWebGL} from '@tensorflow/tfjs-backend-webgl';

import type {InputView} from './plan/planner';
import {ONE_CHANNEL_ROWS_SRC_COLUMNS} from './passes/rows/one_channel';

// The views of the input tensors the plan's programs read (InputView), made on the GPU, and how
// the textures tfjs hands over hold them.

/** The view `view` names of a tensor, and a temporary texture made for it (for the caller to dispose). */
export function makeView(backend: MathBackendWebGL, tensor: TensorInfo, view: InputView): {view: TensorInfo; temporary?: TensorInfo} {
  if (view.kind === 'paddedBlocks') return {view: paddedBlocksView(tensor, view.blockRows)};
  if (view.kind === 'pairedPositions') return pairedPositionsView(backend, tensor);
  return matrixView(backend, tensor, view.packed);
}

/** The padded 2-D view [blocks · (blockRows + 1), columns] of a tensor packed in blocks of an odd number of rows. */
export function paddedBlocksView(tensor: TensorInfo, blockRows: number): TensorInfo {
  const columns = tensor.shape[tensor.shape.length - 1];
  const rows = tensor.shape.reduce((a, b) => a * b, 1) / columns;
  return {dataId: tensor.dataId, shape: [rows / blockRows * (blockRows + 1), columns], dtype: tensor.dtype};
}

/**
 * The packed view [positions / 2, 2] of a tensor of one channel that one-channel rows read (four
 * positions a texel, in order). An unpacked tensor, or one not on the GPU yet, is packed for it
 * as matrixView packs views; a packed one (tfjs packed it as [positions, 1]: two positions and
 * two empty lanes a texel) is reshaped by tfjs's webgl Reshape kernel, one pass.
 */
export function pairedPositionsView(backend: MathBackendWebGL, tensor: TensorInfo): {view: TensorInfo; temporary?: TensorInfo} {
  const data = backend.texData.get(tensor.dataId);
  if (data.texture == null || !data.isPacked) return matrixView(backend, tensor, true, ONE_CHANNEL_ROWS_SRC_COLUMNS);
  const shape = [tensor.shape.reduce((a, b) => a * b, 1) / ONE_CHANNEL_ROWS_SRC_COLUMNS, ONE_CHANNEL_ROWS_SRC_COLUMNS];
  const reshape = getKernel('Reshape', 'webgl');
  if (reshape === undefined) return matrixView(backend, tensor, true, ONE_CHANNEL_ROWS_SRC_COLUMNS);
  const view = reshape.kernelFunc({inputs: {x: tensor}, backend, attrs: {shape}}) as TensorInfo;
  return {view, temporary: view};
}

/**
 * The 2-D view [elements / last axis, last axis] of a tensor. Unpacked, it is the shape tfjs
 * gives an unpacked texture whenever that fits, which lets the shader read it without integer
 * division (tfjs falls back to flat indexing by itself when the texture had to be reshaped);
 * packed tensors are then unpacked first (returned as `temporary`, for the caller to dispose).
 * Packed ('packedTiles'), an unpacked texture is packed for the view here (a temporary, as
 * tfjs would make inside runWebGLProgram), so its texture's shape is known before the program
 * is made (see textureLayout), and a packed texture laid out for other blocks than the view's
 * rows is re-packed (unpacked, then packed for the view); a tensor not on the GPU yet, or
 * packed for the view already, is handed over as it is.
 */
export function matrixView(backend: MathBackendWebGL, tensor: TensorInfo, packed: boolean,
                    columns = tensor.shape[tensor.shape.length - 1]): {view: TensorInfo; temporary?: TensorInfo} {
  const shape = [tensor.shape.reduce((a, b) => a * b, 1) / columns, columns];
  const data = backend.texData.get(tensor.dataId);
  const view = {dataId: tensor.dataId, shape, dtype: tensor.dtype};
  if (packed && data.texture != null && !data.isPacked) {
    const packedView = backend.packTensor(view);
    return {view: packedView, temporary: packedView};
  }
  if (packed && data.texture != null && !packsLikeView(data.shape, shape)) {
    // Packed for blocks of an odd number of rows (e.g. NHWC with odd W): texels pair positions
    // across blocks differently. Re-pack for the view, so it is read directly.
    const unpacked = backend.unpackTensor(tensor);
    const packedView = backend.packTensor({dataId: unpacked.dataId, shape, dtype: tensor.dtype});
    backend.disposeIntermediateTensorInfo(unpacked);
    return {view: packedView, temporary: packedView};
  }
  if (packed || !data.isPacked) return {view};
  const unpacked = backend.unpackTensor(tensor);
  return {view: {dataId: unpacked.dataId, shape, dtype: tensor.dtype}, temporary: unpacked};
}

/**
 * Whether a packed texture made for `shape` holds the 2-D view [rows, columns] of it in the
 * view's own texel order: the same matrix, or batches of matrices with the view's columns and
 * an even number of rows (so no texel pairs rows of two batches).
 */
function packsLikeView(shape: readonly number[], [rows, columns]: readonly number[]): boolean {
  return shape.length === 2 ? shape[0] === rows && shape[1] === columns :
                              shape[shape.length - 1] === columns && shape[shape.length - 2] % 2 === 0;
}

/**
 * How the texture behind a 2-D view [rows, columns] holds it, when the shader can read it
 * without tfjs's samplers (see readFunctions in passes/single_target.ts) because tfjs will
 * hand the texture to the program as it is: 'rowMajor', texel (row, col) — for packed textures
 * the texel of 2 × 2 holding it, at (row/2, col/2); 'folded' (packed only), the same texels in
 * order but wrapped at the texture's width, because a side exceeded WEBGL_MAX_TEXTURE_SIZE;
 * null when neither. Unpacked views are uploaded here if they are not on the GPU yet (which
 * also keeps tfjs from passing a tiny tensor as a uniform array), packed ones packed for the
 * view; a packed texture made for another shape must have the same columns and an even number
 * of rows per block, else tfjs re-packs it inside runWebGLProgram and the program keeps tfjs's
 * samplers. Unpacked folded textures are not read directly.
 */
export function textureLayout(backend: MathBackendWebGL, view: TensorInfo, packed: boolean, blockRows = 0):
    'rowMajor' | 'folded' | null {
  const [rows, columns] = view.shape;
  const data = backend.texData.get(view.dataId);
  if (!packed) {
    if (data.isPacked) return null;
    if (data.texture == null) backend.uploadToGPU(view.dataId);
    return data.texShape?.[0] === rows && data.texShape?.[1] === columns ? 'rowMajor' : null;
  }
  if (data.texture == null) {  // upload it packed for the view, as runWebGLProgram would for a packed program
    data.isPacked = true;
    data.shape = view.shape;
    backend.uploadToGPU(view.dataId);
  }
  if (data.isPacked !== true || data.texture == null) return null;
  if (blockRows === 0 && !packsLikeView(data.shape, view.shape)) return null;
  return data.texShape?.[0] === rows + rows % 2 && data.texShape?.[1] === columns + columns % 2 ? 'rowMajor' : 'folded';
}

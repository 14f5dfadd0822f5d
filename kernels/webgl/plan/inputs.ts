import type {NamedTensorInfoMap, TensorInfo} from '@tensorflow/tfjs-core';
import type {MathBackendWebGL} from '@tensorflow/tfjs-backend-webgl';

import type {FilterGradientGeometry} from '../../../src/geometry';

/** What the planner knows of an input tensor's texture before anything is converted. */
export interface InputTexture {
  /** On the GPU already (else tfjs uploads it when a view of it is made). */
  readonly onGpu: boolean;
  /** A packed texture (2 × 2 elements a texel). */
  readonly packed: boolean;
  /**
   * The rows per block of a channels-last tensor's packed texture when that number is odd and
   * the multi-target programs can read the texture in place (see PackedTexture.blockRows): tfjs
   * packed it for a shape with the tensor's channels last and an odd second-last size, whose
   * blocks are whole runs of the tensor's positions along its inner spatial axes (W, H·W, …);
   * 0 otherwise (even blocks, unpacked, not on the GPU, or blocks that cut across rows).
   */
  readonly oddBlockRows: number;
}

export interface WebglInputs {
  readonly src: InputTexture;
  readonly diffDst: InputTexture;
}

/** The InputTexture of a tensor of the webgl backend. */
export function describeInput(backend: MathBackendWebGL, tensor: TensorInfo): InputTexture {
  const data = backend.texData.get(tensor.dataId);
  const onGpu = data.texture != null;
  const packed = data.isPacked === true;
  return Object.freeze({onGpu, packed, oddBlockRows: onGpu && packed ? oddBlockRows(data.shape, tensor.shape) : 0});
}

/** The inputs of a kernel call as the planner sees them. */
export function describeInputs(backend: MathBackendWebGL, geometry: FilterGradientGeometry, inputs: NamedTensorInfoMap):
    WebglInputs {
  return Object.freeze({src: describeInput(backend, inputs[geometry.src.name]!),
                        diffDst: describeInput(backend, inputs[geometry.diffDst.name]!)});
}

/** InputTexture.oddBlockRows of a tensor of `shape` whose packed texture tfjs made for `packedShape`. */
export function oddBlockRows(packedShape: readonly number[], shape: readonly number[]): number {
  if (packedShape.length < 3) return 0;
  const columns = shape[shape.length - 1];
  const blockRows = packedShape[packedShape.length - 2];
  if (packedShape[packedShape.length - 1] !== columns || blockRows % 2 === 0) return 0;
  let positions = 1;
  for (let axis = shape.length - 2; axis >= 0; axis--) {
    positions *= shape[axis];
    if (positions === blockRows) return blockRows;
  }
  return 0;
}

/** The inputs' odd block rows, as the passes reading packed textures in place take them. */
export function blockRowsOf(inputs: WebglInputs): {readonly src: number; readonly diffDst: number} {
  return {src: inputs.src.oddBlockRows, diffDst: inputs.diffDst.oddBlockRows};
}

/** Whether an input is read in padded blocks (odd block rows). */
export function paddedBlocks(inputs: WebglInputs): boolean {
  return inputs.src.oddBlockRows > 0 || inputs.diffDst.oddBlockRows > 0;
}

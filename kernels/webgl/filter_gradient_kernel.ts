import type {KernelConfig, KernelFunc, TensorInfo} from '@tensorflow/tfjs-core';
import {env} from '@tensorflow/tfjs-core';
import type {MathBackendWebGL} from '@tensorflow/tfjs-backend-webgl';

import {geometryOfKernelCall} from '../../src/kernel_inputs';
import {kernelConfigsFor, OpName} from '../../src/names';
import {ArrangeTilesProgram, FilterGradientProgram, SumSplitsProgram} from './filter_gradient_program';
import {planReduction} from './reduction_plan';

/**
 * The 2-D view [elements / last axis, last axis] of a tensor. Unpacked, it is the shape tfjs
 * gives an unpacked texture whenever that fits, which lets the shader read it without integer
 * division (tfjs falls back to flat indexing by itself when the texture had to be reshaped);
 * packed tensors are then unpacked first (returned as `temporary`, for the caller to dispose).
 * Packed ('packedTiles'), the view is handed over as it is: runWebGLProgram packs an unpacked
 * tensor, or re-packs one whose packed layout differs from the view's, by itself.
 */
function matrixView(backend: MathBackendWebGL, tensor: TensorInfo, packed: boolean):
    {view: TensorInfo; temporary?: TensorInfo} {
  const columns = tensor.shape[tensor.shape.length - 1];
  const shape = [tensor.shape.reduce((a, b) => a * b, 1) / columns, columns];
  if (packed || !backend.texData.get(tensor.dataId).isPacked) {
    return {view: {dataId: tensor.dataId, shape, dtype: tensor.dtype}};
  }
  const unpacked = backend.unpackTensor(tensor);
  return {view: {dataId: unpacked.dataId, shape, dtype: tensor.dtype}, temporary: unpacked};
}

/**
 * The webgl kernel of either op: geometry once, pass 1 (partial sums over splits of the
 * reduction, per 2×2 channel tile, 4 kernel taps or filter element), pass 2 (sum of the splits, and for
 * tiles the filter layout) when needed, and the result — an unpacked, row-major texture —
 * handed out under the filter's shape without a copy.
 */
function filterGradientKernel(op: OpName): KernelFunc {
  return ({inputs, backend, attrs}): TensorInfo => {
    const webgl = backend as MathBackendWebGL;
    const geometry = geometryOfKernelCall(op, inputs, webgl, attrs);
    const filterShape = [...geometry.filterShape];
    if (geometry.batch === 0) {
      return webgl.makeTensorInfo(filterShape, 'float32', new Float32Array(geometry.filterSize));
    }
    const webgl2 = env().getNumber('WEBGL_VERSION') === 2;
    const plan = planReduction(geometry);
    const packed = plan.mode === 'packedTiles';
    const src = matrixView(webgl, inputs[geometry.src.name]!, packed);
    const diffDst = matrixView(webgl, inputs[geometry.diffDst.name]!, packed);
    const temporaries = [src.temporary, diffDst.temporary];
    try {
      const partialProgram = new FilterGradientProgram(geometry, plan, webgl2);
      const partial =
          webgl.runWebGLProgram(partialProgram, [src.view, diffDst.view], 'float32', partialProgram.uniforms());
      let result = partial;
      if (plan.mode !== 'single' || plan.splits > 1) {
        temporaries.push(partial);
        const finish = plan.mode !== 'single' ? new ArrangeTilesProgram(geometry, plan, webgl2) :
                                                new SumSplitsProgram(geometry.filterSize, plan.splits, webgl2);
        result = webgl.runWebGLProgram(finish, [partial], 'float32', finish.uniforms());
      }
      return {dataId: result.dataId, shape: filterShape, dtype: 'float32'};
    } finally {
      for (const temporary of temporaries) {
        if (temporary !== undefined) webgl.disposeIntermediateTensorInfo(temporary);
      }
    }
  };
}

/** Kernel configs of `op` under each of its names for the webgl backend. */
export function webglKernelConfigs(op: OpName): KernelConfig[] {
  return kernelConfigsFor(op, 'webgl', filterGradientKernel(op));
}

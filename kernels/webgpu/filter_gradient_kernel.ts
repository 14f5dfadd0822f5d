import type {KernelConfig, KernelFunc, TensorInfo} from '@tensorflow/tfjs-core';
import type {WebGPUBackend} from '@tensorflow/tfjs-backend-webgpu';

import {geometryOfKernelCall} from '../../src/kernel_inputs';
import {kernelConfigsFor, OpName} from '../../src/names';
import {reportPath} from '../../src/verbose';
import {FilterGradientBlocksProgram, FilterGradientTapsProgram, geometryUniforms, SumSplitsProgram} from './filter_gradient_program';
import {planWebgpuReduction, webgpuPlanSummary} from './reduction_plan';

/** A tensor as the flat 1-D array the programs index with the geometry's element strides. */
function flat(tensor: TensorInfo): TensorInfo {
  return {dataId: tensor.dataId, shape: [tensor.shape.reduce((a, b) => a * b, 1)], dtype: tensor.dtype};
}

/**
 * The webgpu kernel of either op: geometry once, pass 1 (the plan's blocks or taps, partial
 * sums per split of the reduction), pass 2 (the sum of the splits) when the reduction was
 * split, and the flat result handed out under the filter's shape without a copy.
 */
function filterGradientKernel(op: OpName): KernelFunc {
  return ({inputs, backend, attrs}): TensorInfo => {
    const webgpu = backend as WebGPUBackend;
    const geometry = geometryOfKernelCall(op, inputs, webgpu, attrs);
    const filterShape = [...geometry.filterShape];
    if (geometry.batch === 0) {
      reportPath(geometry, 'zeros');
      return webgpu.makeTensorInfo(filterShape, 'float32', new Float32Array(geometry.filterSize));
    }
    const plan = planWebgpuReduction(geometry);
    reportPath(geometry, webgpuPlanSummary(plan));
    const program = plan.mode === 'blocks' ? new FilterGradientBlocksProgram(geometry, plan) :
                                             new FilterGradientTapsProgram(geometry, plan);
    const operands = [flat(inputs[geometry.src.name]!), flat(inputs[geometry.diffDst.name]!)];
    let result = webgpu.runWebGPUProgram(program, operands, 'float32', geometryUniforms(geometry, plan));
    if (plan.splits > 1) {
      const partial = result;
      const sum = new SumSplitsProgram(geometry.filterSize, plan.splits);
      result = webgpu.runWebGPUProgram(sum, [partial], 'float32', sum.programUniforms());
      webgpu.disposeData(partial.dataId);
    }
    return {dataId: result.dataId, shape: filterShape, dtype: 'float32'};
  };
}

/** Kernel configs of `op` under each of its names for the webgpu backend. */
export function webgpuKernelConfigs(op: OpName): KernelConfig[] {
  return kernelConfigsFor(op, 'webgpu', filterGradientKernel(op));
}

import type {KernelConfig, KernelFunc, NamedTensorInfoMap, TensorInfo} from '@tensorflow/tfjs-core';
import type {MathBackendWebGL} from '@tensorflow/tfjs-backend-webgl';

import type {FilterGradientGeometry} from '../../src/geometry';
import {geometryOfKernelCall} from '../../src/kernel_inputs';
import {kernelConfigsFor, OpName} from '../../src/names';
import {reportPath} from '../../src/verbose';
import {ArrangeChannelTexelsProgram, ArrangeTargetsProgram} from './finish/arrange_targets';
import {ArrangeTilesProgram} from './finish/arrange_tiles';
import {FilterGradientProgram} from './passes/single_target';
import {SumSplitsProgram} from './finish/sum_splits';
import {makeView, textureLayout} from './input_views';
import {makeTargets, runMultiTarget} from './multi_target';
import type {PackedTexture} from './glsl/packed_reads';
import {webglDevice} from './plan/device';
import {describeInputs} from './plan/inputs';
import {passProgram} from './passes/pass';
import {multiTargetPass, MultiTargetPlan, planWebgl, SingleTargetPlan} from './plan/planner';
import {splitGridShape, sumTargetSplitsProgram} from './finish/sum_target_splits';

export {CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET, registerMultiTargetFlag} from './plan/device';

function disposeAll(webgl: MathBackendWebGL, tensors: ReadonlyArray<TensorInfo | undefined>) {
  for (const tensor of tensors) {
    if (tensor !== undefined) webgl.disposeIntermediateTensorInfo(tensor);
  }
}

/**
 * Runs a multi-target plan: pass 1 into the targets, SumTargetSplitsProgram adding each
 * target's splits into a target of one split's size when pass 1 split the reduction, and the
 * arrangement into the filter layout. Null when tfjs cannot make a target unfolded or hands a
 * view over in a texture the programs cannot read directly (the plan's fallback then runs); the
 * targets are made first, so no input has been converted for nothing.
 */
function runMultiTargetPlan(webgl: MathBackendWebGL, geometry: FilterGradientGeometry, plan: MultiTargetPlan,
                            inputs: NamedTensorInfoMap): TensorInfo | null {
  const {targetCount} = plan.location;
  const splits = plan.targetSplits.splits;
  const targets = makeTargets(webgl, targetCount, ...splitGridShape(plan.targetSplits));
  if (targets === null) return null;
  const summed = splits > 1 ? makeTargets(webgl, targetCount, plan.targetSplits.blockRows, plan.targetSplits.blockColumns) : [];
  if (summed === null) {
    disposeAll(webgl, targets);
    return null;
  }
  const src = makeView(webgl, inputs[geometry.src.name]!, plan.views.src);
  const diffDst = makeView(webgl, inputs[geometry.diffDst.name]!, plan.views.diffDst);
  try {
    const srcLayout = textureLayout(webgl, src.view, true, plan.views.src.blockRows);
    const diffDstLayout = textureLayout(webgl, diffDst.view, true, plan.views.diffDst.blockRows);
    if (srcLayout === null || diffDstLayout === null) return null;
    const texture = (view: TensorInfo, layout: 'rowMajor' | 'folded', blockRows: number): PackedTexture =>
        ({texShape: webgl.texData.get(view.dataId).texShape!, columns: view.shape[1], folded: layout === 'folded', blockRows});
    const program = passProgram(multiTargetPass(plan.pass), geometry, plan.params, {
      src: texture(src.view, srcLayout, plan.views.src.blockRows),
      diffDst: texture(diffDst.view, diffDstLayout, plan.views.diffDst.blockRows),
    });
    reportPath(geometry, plan.summary);
    runMultiTarget(webgl, program, [src.view, diffDst.view], targets);
    if (splits > 1) runMultiTarget(webgl, sumTargetSplitsProgram(targetCount, plan.targetSplits), targets, summed);
    const arrange = plan.arrangement === 'channelTexels' ? new ArrangeChannelTexelsProgram(geometry, plan.location) :
                                                           new ArrangeTargetsProgram(geometry, plan.location);
    return webgl.runWebGLProgram(arrange, splits > 1 ? summed : targets, 'float32', arrange.uniforms());
  } finally {
    disposeAll(webgl, [...targets, ...summed, src.temporary, diffDst.temporary]);
  }
}

/**
 * Runs a single-target plan: FilterGradientProgram (partial sums over splits of the reduction,
 * per 2×2 channel tile, 4 kernel taps or filter element), then ArrangeTilesProgram or
 * SumSplitsProgram where the plan has a second pass. The program reads the textures itself on
 * WebGL 2 when both hold their views row-major (textureLayout), else through tfjs's samplers.
 */
function runSingleTargetPlan(webgl: MathBackendWebGL, geometry: FilterGradientGeometry, plan: SingleTargetPlan,
                             inputs: NamedTensorInfoMap): TensorInfo {
  reportPath(geometry, plan.summary);
  const webgl2 = plan.webglVersion === 2;
  const src = makeView(webgl, inputs[geometry.src.name]!, plan.views.src);
  const diffDst = makeView(webgl, inputs[geometry.diffDst.name]!, plan.views.diffDst);
  const temporaries = [src.temporary, diffDst.temporary];
  try {
    const layouts = plan.directReadsWhenRowMajor ?
        [textureLayout(webgl, src.view, plan.views.src.packed), textureLayout(webgl, diffDst.view, plan.views.diffDst.packed)] : [];
    const directReads = layouts.length === 2 && layouts.every(layout => layout === 'rowMajor');
    const partialProgram = new FilterGradientProgram(geometry, plan.reduction, webgl2, directReads);
    const partial = webgl.runWebGLProgram(partialProgram, [src.view, diffDst.view], 'float32', partialProgram.uniforms());
    if (plan.finish === null) return partial;
    temporaries.push(partial);
    const finish = plan.finish === 'arrangeTiles' ? new ArrangeTilesProgram(geometry, plan.reduction, webgl2) :
                                                    new SumSplitsProgram(geometry.filterSize, plan.reduction.splits, webgl2);
    return webgl.runWebGLProgram(finish, [partial], 'float32', finish.uniforms());
  } finally {
    disposeAll(webgl, temporaries);
  }
}

/**
 * The webgl kernel of either op: geometry once, the plan (planWebgl: a function of the geometry,
 * the device and what the input textures look like), and the plan run; the result — an
 * unpacked, row-major texture, or packed for the filter's shape where ArrangeChannelTexelsProgram
 * wrote it — handed out under the filter's shape without a copy.
 */
function filterGradientKernel(op: OpName): KernelFunc {
  return ({inputs, backend, attrs}): TensorInfo => {
    const webgl = backend as MathBackendWebGL;
    const geometry = geometryOfKernelCall(op, inputs, webgl, attrs);
    const filterShape = [...geometry.filterShape];
    const plan = planWebgl(geometry, webglDevice(webgl), describeInputs(webgl, geometry, inputs));
    let result: TensorInfo;
    if (plan.path === 'zeros') {
      reportPath(geometry, plan.summary);
      return webgl.makeTensorInfo(filterShape, 'float32', new Float32Array(geometry.filterSize));
    } else if (plan.path === 'multiTarget') {
      result = runMultiTargetPlan(webgl, geometry, plan, inputs) ?? runSingleTargetPlan(webgl, geometry, plan.fallback, inputs);
    } else {
      result = runSingleTargetPlan(webgl, geometry, plan, inputs);
    }
    return {dataId: result.dataId, shape: filterShape, dtype: 'float32'};
  };
}

/** Kernel configs of `op` under each of its names for the webgl backend. */
export function webglKernelConfigs(op: OpName): KernelConfig[] {
  return kernelConfigsFor(op, 'webgl', filterGradientKernel(op));
}

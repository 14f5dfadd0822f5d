import * as tf from '@tensorflow/tfjs-core';
import type {GradConfig, NamedAttrMap} from '@tensorflow/tfjs-core';

import {computeGeometry} from '../geometry';
import {ConvolutionBackpropFilters, ConvTransposeBackpropFilters, KERNEL_ALIASES, OpName, withKernelNameDefaults} from '../names';
import {convolutionDataGradient, convolutionExplicit, convTransposeDataGradient, convTransposeExplicit, resolvedFromGeometry} from './forward_ops';

/**
 * Gradients of the two filter-gradient kernels themselves, so that tf.grad works through them
 * (second order: gradient penalties, Hessian-vector products). Each kernel is bilinear in
 * (input, outputDelta); with the upstream gradient G shaped like the filter:
 *
 * - ConvolutionBackpropFilters, dW = Σ outputDelta ⋆ input:
 *     d/dinput       = the convolution's data gradient of outputDelta through filter G
 *                      (a transposed convolution), d/doutputDelta = the convolution of input with G.
 * - ConvTransposeBackpropFilters:
 *     d/dinput       = the convolution of outputDelta with G (the transposed convolution's data
 *                      gradient), d/doutputDelta = the transposed convolution of input with G.
 *
 * Both are built from the package's differentiable `convolution` / `convTranspose`, with the
 * pads resolved by the kernel's own geometry (G's shape is the filter shape), so higher orders
 * work too. The optional int32 filterShape input gets no gradient (nothing float flows into it).
 */
function gradientConfig(op: OpName, kernelName: string): GradConfig {
  return {
    kernelName,
    inputsToSave: ['input', 'outputDelta'],
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[], attrs: NamedAttrMap) => {
      const upstream = dy as tf.Tensor;
      const [input, outputDelta] = saved;
      // The engine hands over the attributes runKernel got: the kernel name's defaults are filled in here
      // as its kernel fills them in (KERNEL_NAME_DEFAULTS).
      const geometry = computeGeometry(
          op, {input, outputDelta, filterShape: upstream.shape},
          withKernelNameDefaults(kernelName, attrs as unknown as Record<string, unknown>));
      const p = resolvedFromGeometry(geometry);
      if (op === ConvolutionBackpropFilters) {
        return {
          input: () => convolutionDataGradient(p, outputDelta, upstream),
          outputDelta: () => convolutionExplicit(p, input, upstream),
        };
      }
      return {
        input: () => convTransposeDataGradient(p, outputDelta, upstream),
        outputDelta: () => convTransposeExplicit(p, input, upstream),
      };
    },
  };
}

let registered = false;

/** Registers the gradients of both kernels under every kernel name (see KERNEL_ALIASES); once. */
export function registerFilterGradientGradients(): void {
  if (registered) return;
  registered = true;
  for (const op of [ConvolutionBackpropFilters, ConvTransposeBackpropFilters] as const) {
    for (const name of KERNEL_ALIASES[op]) tf.registerGradient(gradientConfig(op, name));
  }
}

import type {KernelConfig, KernelFunc} from '@tensorflow/tfjs-core';

/** Kernel names of the oneDNN Graph specification, as registered with tfjs. */
export const ConvolutionBackpropFilters = 'ConvolutionBackpropFilters';
export const ConvTransposeBackpropFilters = 'ConvTransposeBackpropFilters';

/**
 * oneDNN's current names for the same two operations; registered as aliases with the same
 * inputs and attributes so graphs exported with either vocabulary run unchanged.
 */
export const ConvolutionBackwardWeights = 'ConvolutionBackwardWeights';
export const ConvTransposeBackwardWeights = 'ConvTransposeBackwardWeights';

export type OpName = typeof ConvolutionBackpropFilters | typeof ConvTransposeBackpropFilters;

export const KERNEL_ALIASES: Readonly<Record<OpName, readonly string[]>> = Object.freeze({
  [ConvolutionBackpropFilters]: Object.freeze([ConvolutionBackpropFilters, ConvolutionBackwardWeights]),
  [ConvTransposeBackpropFilters]: Object.freeze([ConvTransposeBackpropFilters, ConvTransposeBackwardWeights]),
});

/** A kernel registered under each name of `op` (see KERNEL_ALIASES) for `backendName`. */
export function kernelConfigsFor(op: OpName, backendName: string, kernelFunc: KernelFunc): KernelConfig[] {
  return KERNEL_ALIASES[op].map(kernelName => ({kernelName, backendName, kernelFunc}));
}

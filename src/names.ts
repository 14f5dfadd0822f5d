import {getKernel} from '@tensorflow/tfjs-core';
import type {KernelConfig, KernelFunc, NamedAttrMap} from '@tensorflow/tfjs-core';

import {withVerboseLine} from './verbose';

/**
 * Kernel name of the oneDNN Graph specification's ConvolutionBackpropFilters, as registered with
 * tfjs: `tf.engine().runKernel(ConvolutionBackpropFilters, {input, outputDelta, filterShape?}, attrs)`.
 * Omitted attributes take the spec's defaults (`filterFormat` 'XIO').
 */
export const ConvolutionBackpropFilters = 'ConvolutionBackpropFilters';
/**
 * Kernel name of the oneDNN Graph specification's ConvTransposeBackpropFilters, as registered
 * with tfjs. Omitted attributes take the spec's defaults (`filterFormat` 'XIO').
 */
export const ConvTransposeBackpropFilters = 'ConvTransposeBackpropFilters';

/**
 * oneDNN v3's name for ConvolutionBackpropFilters, registered as an alias with the same inputs
 * and attributes. Its defaults are oneDNN v3's, which for this op are the spec's (`filterFormat`
 * 'XIO').
 */
export const ConvolutionBackwardWeights = 'ConvolutionBackwardWeights';
/**
 * oneDNN v3's name for ConvTransposeBackpropFilters, registered as an alias with the same inputs
 * and attributes. Its defaults are oneDNN v3's: an omitted `filterFormat` is 'XOI' = (K…, O/G, C)
 * (oneDNN's op schema: default XOI, allowed XOI and IOX), where the spec name gives 'XIO'.
 * For C = 2, O = 3 and a 3×3 kernel the result is [3,3,3,2] here and [3,3,2,3] under
 * ConvTransposeBackpropFilters.
 */
export const ConvTransposeBackwardWeights = 'ConvTransposeBackwardWeights';

/** The two operations, by their spec names. */
export type OpName = typeof ConvolutionBackpropFilters | typeof ConvTransposeBackpropFilters;

/** Every kernel name each operation is registered under: its spec name, then oneDNN v3's. */
export const KERNEL_ALIASES: Readonly<Record<OpName, readonly string[]>> = Object.freeze({
  [ConvolutionBackpropFilters]: Object.freeze([ConvolutionBackpropFilters, ConvolutionBackwardWeights]),
  [ConvTransposeBackpropFilters]: Object.freeze([ConvTransposeBackpropFilters, ConvTransposeBackwardWeights]),
});

/**
 * Attribute defaults that a kernel name sets apart from the spec's (which the attribute parser
 * fills in): oneDNN v3's op schema defaults ConvTransposeBackwardWeights' `weights_format` to XOI.
 * An attribute given (not undefined) always wins.
 */
export const KERNEL_NAME_DEFAULTS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = Object.freeze({
  [ConvTransposeBackwardWeights]: Object.freeze({filterFormat: 'XOI'}),
});

/** `attrs` with the defaults of `kernelName` (KERNEL_NAME_DEFAULTS) filled in where absent. */
export function withKernelNameDefaults<T extends object>(kernelName: string, attrs: T | undefined): T | undefined {
  const defaults = KERNEL_NAME_DEFAULTS[kernelName];
  if (defaults === undefined) return attrs;
  const filled: Record<string, unknown> = {...attrs};
  for (const [name, value] of Object.entries(defaults)) {
    if (filled[name] === undefined || filled[name] === null) filled[name] = value;
  }
  return filled as T;
}

/**
 * What a kernel of this package is on its backend: `dedicated`, its own computation (cpu, wasm,
 * webgl, webgpu: faster than the backend's own filter-gradient kernels), or `built-on-tfjs`, a
 * translation onto the backend's own kernels and tfjs ops (tensorflow). The drop-in gradients
 * keep tfjs's own gradient, where it works, on every backend without a dedicated kernel.
 */
export type KernelKind = 'dedicated' | 'built-on-tfjs';

/** The property of a registered KernelConfig holding its KernelKind (shared by every copy of the package). */
const KERNEL_KIND = Symbol.for('tfjs-conv-backprop-filters.kernelKind');

/**
 * A kernel registered under each name of `op` (see KERNEL_ALIASES) for `backendName`; under a
 * name with defaults of its own (KERNEL_NAME_DEFAULTS) the kernel sees them filled in. Every
 * call prints its verbose line when CONV_BACKPROP_FILTERS_VERBOSE is on (src/verbose.ts).
 */
export function kernelConfigsFor(
    op: OpName, backendName: string, kernelFunc: KernelFunc, kind: KernelKind = 'dedicated'): KernelConfig[] {
  return KERNEL_ALIASES[op].map(kernelName => ({
    kernelName,
    backendName,
    kernelFunc: withVerboseLine(
        kernelName, backendName,
        KERNEL_NAME_DEFAULTS[kernelName] === undefined ?
            kernelFunc :
            args => kernelFunc({...args, attrs: withKernelNameDefaults<NamedAttrMap>(kernelName, args.attrs)})),
    [KERNEL_KIND]: kind,
  }));
}

/** Whether `backendName` has a dedicated kernel of this package (see KernelKind). */
export function hasDedicatedKernel(backendName: string): boolean {
  const config = getKernel(ConvolutionBackpropFilters, backendName) as (KernelConfig & {[KERNEL_KIND]?: KernelKind}) | undefined;
  return config?.[KERNEL_KIND] === 'dedicated';
}

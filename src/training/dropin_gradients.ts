import * as tf from '@tensorflow/tfjs-core';
import type {GradConfig, NamedAttrMap} from '@tensorflow/tfjs-core';

import {DataFormat} from '../attributes';
import {hasDedicatedKernel} from '../names';
import {convolutionBackpropFilters} from '../ops';
import {convTranspose} from './forward_ops';

/**
 * Drop-in gradients for tfjs's own convolution kernels (`import 'tfjs-conv-backprop-filters/gradients'`).
 *
 * tfjs's gradients of Conv2D, Conv3D and DepthwiseConv2dNative assert dilations of 1 (tfjs#7906),
 * Conv3DBackpropInputV2 has none (tfjs#6323), and their filter parts run tfjs's slow
 * Conv*BackpropFilter kernels. These replacements compute every filter gradient with
 * ConvolutionBackpropFilters and the data gradient, when a dilation exceeds 1, with this
 * package's transposed convolution. Where tfjs's own gradient handles the case, the data part
 * runs the very kernel tfjs's does with the same attributes, so it is identical — if the active
 * backend has that kernel; otherwise it too is the transposed convolution. On a backend without
 * a dedicated kernel of this package (tensorflow, or one it does not know: see KernelKind in
 * src/names.ts), the filter part too runs tfjs's own kernel with tfjs's attributes wherever
 * tfjs's gradient handles the case (tfjsGradientHandles), so the drop-in gives tfjs's own
 * gradient there, bit for bit, never slower than without the import; only what tfjs cannot do
 * comes to ConvolutionBackpropFilters, which on a backend this package has no kernel for runs
 * the backend's kernels or the composite of tfjs ops (see src/ops.ts), so importing the drop-in
 * never takes a capability away.
 *
 * tf.fused.conv2d (which tf.layers.conv2d calls) and tf.fused.depthwiseConv2d record their
 * gradient as a closure under their op scope name, which the engine looks up in the gradient
 * registry before using the closure; a gradient registered under that scope name replaces it.
 * The closure's attributes are not passed to a registered gradient, so the attributes of every
 * fused kernel call are remembered by its output tensor (and its clones, which is what the
 * fused op saves for its gradient).
 */

type Attrs = Record<string, unknown>;
type PadAttr = 'same' | 'valid' | number | number[][];

/** Names of the tfjs kernels (and fused op scopes) whose gradients are replaced. */
export const DROP_IN_GRADIENT_KERNELS = [
  'Conv2D', 'Conv3D', 'DepthwiseConv2dNative', 'Conv2DBackpropInput', 'Conv3DBackpropInputV2', 'fusedConv2d__op',
  'fusedDepthwiseConv2d__op',
] as const;

/** A convolution problem as this package's attributes, resolved from tfjs's attributes with tfjs's own rules. */
interface TfjsConvolution {
  strides: number[];
  dilations: number[];
  padsBegin: number[];
  padsEnd: number[];
  dataFormat: DataFormat;
  /** Spatial sizes of the convolution's input. */
  inputSpatial: number[];
}

function asList(value: unknown, rank: number, fallback: number): number[] {
  if (value == null) return new Array(rank).fill(fallback);
  return typeof value === 'number' ? new Array(rank).fill(value) : [...(value as number[])];
}

/**
 * Pads as tfjs computes them (computeConv2DInfo / computeConv3DInfo: 'same', 'valid', a number
 * with its rounding mode, explicit pads). The end pad is the smallest one that gives the output
 * size tfjs gives: padding past it adds no term to any gradient.
 */
function resolveTfjsConvolution(
    inputShape: readonly number[], filterShape: readonly number[], attrs: Attrs, depthwise: boolean): TfjsConvolution {
  const r = inputShape.length - 2;
  const channelsFirst = attrs.dataFormat === 'NCHW' || attrs.dataFormat === 'NCDHW';
  const strides = asList(attrs.strides, r, 1);
  const dilations = asList(attrs.dilations, r, 1);
  const pad = attrs.pad as PadAttr;
  const rounding = attrs.dimRoundingMode as 'floor' | 'round' | 'ceil' | undefined;
  const dataFormat = channelsFirst ? 'channelsFirst' : 'channelsLast';
  let padsBegin: number[];
  let outputSpatial: number[];
  let inputSpatial: number[];
  if (r === 2) {
    const info = tf.backend_util.computeConv2DInfo(
        inputShape as [number, number, number, number], filterShape as [number, number, number, number],
        strides as [number, number], dilations as [number, number], pad as 'same', rounding, depthwise, dataFormat);
    padsBegin = [info.padInfo.top, info.padInfo.left];
    outputSpatial = [info.outHeight, info.outWidth];
    inputSpatial = [info.inHeight, info.inWidth];
  } else {
    const info = tf.backend_util.computeConv3DInfo(
        inputShape as [number, number, number, number, number], filterShape as [number, number, number, number, number],
        strides as [number, number, number], dilations as [number, number, number], pad as 'same', depthwise, dataFormat,
        rounding);
    padsBegin = [info.padInfo.front, info.padInfo.top, info.padInfo.left];
    outputSpatial = [info.outDepth, info.outHeight, info.outWidth];
    inputSpatial = [info.inDepth, info.inHeight, info.inWidth];
  }
  const kernel = filterShape.slice(0, r);
  const padsEnd = outputSpatial.map(
      (out, i) => Math.max(0, (out - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1 - inputSpatial[i] - padsBegin[i]));
  return {strides, dilations, padsBegin, padsEnd, dataFormat: channelsFirst ? 'NCX' : 'NXC', inputSpatial};
}

function explicit(p: TfjsConvolution, groups: number) {
  return {
    strides: p.strides, dilations: p.dilations, padsBegin: p.padsBegin, padsEnd: p.padsEnd, groups,
    dataFormat: p.dataFormat,
  };
}

function allOne(values: readonly number[]): boolean {
  return values.every(v => v === 1);
}

/**
 * dW of the convolution x → dy with an XIO filter (K…, C/G, O) of `filterShape`, by ConvolutionBackpropFilters.
 * A depthwise filter (K…, C, M) is the grouped filter (K…, 1, C·M) with G = C, read in the same order.
 */
function filterGradient(
    x: tf.Tensor, dy: tf.Tensor, filterShape: readonly number[], p: TfjsConvolution, depthwise: boolean): tf.Tensor {
  if (!depthwise) {
    return convolutionBackpropFilters(x, dy, {...explicit(p, 1), filterFormat: 'XIO', filterShape: [...filterShape]});
  }
  const r = filterShape.length - 2;
  const channels = filterShape[r];
  const grouped = [...filterShape.slice(0, r), 1, channels * filterShape[r + 1]];
  const dW = convolutionBackpropFilters(x, dy, {...explicit(p, channels), filterFormat: 'XIO', filterShape: grouped});
  return tf.reshape(dW, [...filterShape]);
}

/**
 * dx of the convolution x → dy through an XIO filter: the transposed convolution of dy with the
 * same strides, dilations and pads, sized to x. A convolution filter (K…, C/G, O) read as a
 * transposed one (dy's O channels to x's C) is XOI.
 */
function dataGradient(dy: tf.Tensor, filter: tf.Tensor, p: TfjsConvolution, depthwise: boolean): tf.Tensor {
  const r = filter.rank - 2;
  const groups = depthwise ? filter.shape[r] : 1;
  const w = depthwise ? tf.reshape(filter, [...filter.shape.slice(0, r), 1, filter.shape[r] * filter.shape[r + 1]]) : filter;
  return convTranspose(dy, w, {...explicit(p, groups), filterFormat: 'XOI', outputShape: p.inputSpatial});
}

/** The data-gradient kernel tfjs's own gradient runs for each forward kernel (used when tfjs handles the case). */
const TFJS_DATA_GRADIENT_KERNEL: Record<string, string> = {
  Conv2D: 'Conv2DBackpropInput',
  Conv3D: 'Conv3DBackpropInputV2',
  DepthwiseConv2dNative: 'DepthwiseConv2dNativeBackpropInput',
};

/** The filter-gradient kernel tfjs's own gradient runs for each forward kernel (and for Conv2DBackpropInput). */
const TFJS_FILTER_GRADIENT_KERNEL: Record<string, string> = {
  Conv2D: 'Conv2DBackpropFilter',
  Conv3D: 'Conv3DBackpropFilterV2',
  DepthwiseConv2dNative: 'DepthwiseConv2dNativeBackpropFilter',
  Conv2DBackpropInput: 'Conv2DBackpropFilter',
};

/**
 * Attributes tfjs's gradient passes to its data-gradient kernel (`{inputShape}`) or its
 * filter-gradient kernel (`{filterShape}`); tfjs's ops fill in dataFormat 'NHWC'.
 */
function tfjsGradientAttrs(
    kernelName: string, attrs: Attrs, shape: {inputShape: number[]} | {filterShape: number[]}): NamedAttrMap {
  const {strides, pad} = attrs;
  switch (kernelName) {
    case 'Conv3D': return {strides, pad, ...shape} as NamedAttrMap;
    case 'DepthwiseConv2dNative': {
      const {dilations, dimRoundingMode} = attrs;
      return {strides, pad, dilations: dilations ?? [1, 1], dimRoundingMode, ...shape} as unknown as NamedAttrMap;
    }
    default: {
      const {dataFormat, dimRoundingMode} = attrs;
      return {strides, pad, dataFormat: dataFormat ?? 'NHWC', dimRoundingMode, ...shape} as unknown as NamedAttrMap;
    }
  }
}

/**
 * Whether tfjs's own gradient of `kernelName` handles the call on the active backend and is
 * what the drop-in gives there: the backend has no dedicated kernel of this package (on cpu,
 * wasm, webgl and webgpu ours is faster), every dilation is 1 (tfjs#7906), no rounding mode
 * goes with a numeric pad (tfjs's conv2d gradient drops it: a wrong dx), the backend has
 * tfjs's kernels of that gradient, and, on tfjs-node's `tensorflow`, the pad is 'valid' or
 * 'same' (its filter-gradient kernels throw on any other).
 */
function tfjsGradientHandles(kernelName: string, attrs: Attrs, rank: number): boolean {
  const backendName = tf.getBackend();
  if (hasDedicatedKernel(backendName)) return false;
  if (!allOne(asList(attrs.dilations, rank - 2, 1))) return false;
  const {pad, dimRoundingMode} = attrs;
  if (typeof pad === 'number' && dimRoundingMode != null) return false;
  if (backendName === 'tensorflow' && !(pad === 'valid' || pad === 'same' || pad === 0)) return false;
  const kernels = [TFJS_FILTER_GRADIENT_KERNEL[kernelName], TFJS_DATA_GRADIENT_KERNEL[kernelName]].filter(k => k !== undefined);
  return kernels.every(name => tf.getKernel(name, backendName) !== undefined);
}

/** {dx, dW} of a forward convolution kernel (Conv2D, Conv3D, DepthwiseConv2dNative) for upstream dy. */
function forwardGradients(kernelName: string, x: tf.Tensor, filter: tf.Tensor, dy: tf.Tensor, attrs: Attrs) {
  const depthwise = kernelName === 'DepthwiseConv2dNative';
  const dataKernel = TFJS_DATA_GRADIENT_KERNEL[kernelName];
  const tfjsData = () =>
      tf.engine().runKernel(dataKernel, {dy, filter}, tfjsGradientAttrs(kernelName, attrs, {inputShape: x.shape})) as tf.Tensor;
  if (tfjsGradientHandles(kernelName, attrs, x.rank)) {
    const filterKernel = TFJS_FILTER_GRADIENT_KERNEL[kernelName];
    return {
      dx: tfjsData,
      dW: () => tf.engine().runKernel(filterKernel, {x, dy}, tfjsGradientAttrs(kernelName, attrs, {filterShape: filter.shape})) as
          tf.Tensor,
    };
  }
  const p = resolveTfjsConvolution(x.shape, filter.shape, attrs, depthwise);
  // tfjs's data-gradient kernel where tfjs's own gradient would run it and the active backend
  // has it (asked per call: tfjs-backend-wasm has no DepthwiseConv2dNativeBackpropInput, a
  // backend of someone else's may lack any); otherwise this package's transposed convolution.
  return {
    dx: () => allOne(p.dilations) && tf.getKernel(dataKernel, tf.getBackend()) !== undefined ?
        tfjsData() :
        dataGradient(dy, filter, p, depthwise),
    dW: () => filterGradient(x, dy, filter.shape, p, depthwise),
  };
}

function forwardGradientConfig(kernelName: string): GradConfig {
  return {
    kernelName,
    inputsToSave: ['x', 'filter'],
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[], attrs: NamedAttrMap) => {
      const [x, filter] = saved;
      const {dx, dW} = forwardGradients(kernelName, x, filter, dy as tf.Tensor, attrs as unknown as Attrs);
      return {x: dx, filter: dW};
    },
  };
}

/**
 * Conv2DBackpropInput / Conv3DBackpropInputV2 compute dx = the data gradient of the convolution
 * x → dy (x of shape `inputShape`). With upstream G shaped like x: d/ddy = the convolution of G
 * (tfjs's conv2d/conv3d, as tfjs's own gradient does), d/dfilter = ConvolutionBackpropFilters(G, dy).
 */
export function backpropInputGradientConfig(kernelName: 'Conv2DBackpropInput' | 'Conv3DBackpropInputV2'): GradConfig {
  return {
    kernelName,
    inputsToSave: ['dy', 'filter'],
    gradFunc: (upstream: tf.Tensor | tf.Tensor[], saved: tf.Tensor[], attrs: NamedAttrMap) => {
      const [dy, filter] = saved;
      const G = upstream as tf.Tensor;
      const a = attrs as unknown as Attrs;
      const pad = a.pad as 'same';
      // tfjs's own filter part (where it handles the case, see tfjsGradientHandles), or ours.
      const filterPart = kernelName === 'Conv2DBackpropInput' && tfjsGradientHandles(kernelName, a, G.rank) ?
          () => tf.engine().runKernel(
                    'Conv2DBackpropFilter', {x: G, dy}, tfjsGradientAttrs(kernelName, a, {filterShape: filter.shape})) as tf.Tensor :
          () => filterGradient(G, dy, filter.shape, resolveTfjsConvolution(G.shape, filter.shape, a, false), false);
      return {
        dy: () => kernelName === 'Conv2DBackpropInput' ?
            tf.conv2d(
                G as tf.Tensor4D, filter as tf.Tensor4D, a.strides as [number, number], pad, a.dataFormat as 'NHWC', 1,
                a.dimRoundingMode as 'floor') :
            tf.conv3d(G as tf.Tensor5D, filter as tf.Tensor5D, a.strides as [number, number, number], pad),
        filter: filterPart,
      };
    },
  };
}

/** Attributes of the fused kernel calls, by output tensor (see the file comment). */
interface FusedCall {
  kernelName: 'FusedConv2D' | 'FusedDepthwiseConv2D';
  attrs: Attrs;
}

/**
 * Gradient of tf.fused.conv2d / tf.fused.depthwiseConv2d under their op scope. The tape node's
 * inputs are the customGrad arguments 0 = x, 1 = filter, 2 = bias; saved = [filter, x, y, bias?].
 */
function fusedGradientConfig(scopeName: string, kernelName: string, state: DropInState): GradConfig {
  return {
    kernelName: scopeName,
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
      const [filter, x, y, bias] = saved;
      const call = state.fusedCalls.get(y);
      if (call === undefined) {
        throw new Error(
            `tfjs-conv-backprop-filters/gradients: no attributes recorded for this ${kernelName} call, ` +
            'so its gradient cannot be computed; was it run before the drop-in gradients were imported?');
      }
      // Under a gradient tfjs 4.22 fuses only 'linear' (other activations run unfused); relu is
      // handled as tfjs's closure handles it, in case a later tfjs fuses it too.
      const {activation} = call.attrs;
      let dyActivation = dy as tf.Tensor;
      if (activation === 'relu') {
        dyActivation = tf.mul(dyActivation, tf.step(y));
      } else if (activation != null && activation !== 'linear') {
        throw new Error(`Cannot compute gradient for fused activation ${activation}.`);
      }
      const forwardKernel = kernelName === 'FusedConv2D' ? 'Conv2D' : 'DepthwiseConv2dNative';
      const {dx, dW} = forwardGradients(forwardKernel, x, filter, dyActivation, call.attrs);
      const grads: Record<string, () => tf.Tensor> = {0: dx, 1: dW};
      if (bias !== undefined) {
        // As tfjs's fused gradient: sum over the axes the bias was broadcast along (NCHW: a
        // per-channel bias of size 1 or O along axis 1).
        const axes = call.attrs.dataFormat === 'NCHW' ?
            [0, 1, 2, 3].filter(axis => axis !== 1 || bias.size === 1) :
            tf.backend_util.getReductionAxes(bias.shape, dyActivation.shape);
        grads[2] = () => tf.reshape(axes.length > 0 ? tf.sum(dyActivation, axes) : dyActivation, bias.shape);
      }
      return grads;
    },
  };
}

const MARK = Symbol.for('tfjs-conv-backprop-filters.dropInGradient');
const STATE = Symbol.for('tfjs-conv-backprop-filters.dropInGradients');

/** Shared by every copy of this package in the process (a CommonJS and an ESM copy, say). */
interface DropInState {
  installed: boolean;
  /** Gradients found or registered under the replaced names while installed: tfjs's own, usually. */
  originals: Map<string, GradConfig>;
  fusedCalls: WeakMap<tf.Tensor, FusedCall>;
  configs: GradConfig[];
}

/** tfjs's global namespace (window, global, process or self, as tfjs picks it). */
function tfjsGlobalNamespace(): {_tfGlobals?: Map<string, unknown>} {
  // `global` and `process` are Node's; this file is typechecked without Node's types.
  const scope = globalThis as unknown as Record<string, unknown>;
  if (typeof window !== 'undefined') return window as never;
  if (scope.global !== undefined) return scope.global as never;
  if (scope.process !== undefined) return scope.process as never;
  return self as never;
}

function gradientRegistry(): Map<string, GradConfig> {
  // tfjs-core creates the registry when it loads (getGlobal('gradRegistry')) and exports no
  // handle to it: every copy of tfjs-core reads it from the global namespace, and so does this.
  const registry = tfjsGlobalNamespace()._tfGlobals?.get('gradRegistry') as Map<string, GradConfig> | undefined;
  if (registry === undefined) throw new Error('tfjs-conv-backprop-filters/gradients: tfjs-core\'s gradient registry was not found');
  return registry;
}

function isDropIn(config: unknown): boolean {
  return (config as Record<symbol, unknown> | undefined)?.[MARK] === true;
}

/**
 * The state, created once per process. Two hooks are installed with it, once:
 * - the gradient registry keeps the drop-in gradients while installed: tfjs registering its own
 *   later (importing @tensorflow/tfjs after this package) records them as the originals instead;
 * - the engine's runKernel remembers the attributes of fused convolution calls (see above).
 */
function dropInState(): DropInState {
  const holder = globalThis as unknown as Record<symbol, DropInState | undefined>;
  const existing = holder[STATE];
  if (existing !== undefined) return existing;
  const state: DropInState = {installed: false, originals: new Map(), fusedCalls: new WeakMap(), configs: []};
  holder[STATE] = state;

  const registry = gradientRegistry();
  const names = new Set<string>(DROP_IN_GRADIENT_KERNELS);
  const set = registry.set;
  registry.set = function(this: Map<string, GradConfig>, name: string, config: GradConfig) {
    if (state.installed && names.has(name) && !isDropIn(config)) {
      state.originals.set(name, config);
      return this;
    }
    return set.call(this, name, config);
  };

  const engine = tf.engine() as unknown as {runKernel: (name: string, inputs: object, attrs?: object) => unknown};
  const runKernel = engine.runKernel;
  engine.runKernel = function(this: unknown, name: string, inputs: object, attrs?: object) {
    const out = runKernel.call(this, name, inputs, attrs);
    if (name === 'FusedConv2D' || name === 'FusedDepthwiseConv2D') {
      state.fusedCalls.set(out as tf.Tensor, {kernelName: name, attrs: {...attrs} as Attrs});
    } else if (name === 'Identity') {
      const call = state.fusedCalls.get((inputs as {x: tf.Tensor}).x);
      if (call !== undefined) state.fusedCalls.set(out as tf.Tensor, call);
    }
    return out;
  };

  state.configs = [
    forwardGradientConfig('Conv2D'),
    forwardGradientConfig('Conv3D'),
    forwardGradientConfig('DepthwiseConv2dNative'),
    backpropInputGradientConfig('Conv2DBackpropInput'),
    backpropInputGradientConfig('Conv3DBackpropInputV2'),
    fusedGradientConfig('fusedConv2d__op', 'FusedConv2D', state),
    fusedGradientConfig('fusedDepthwiseConv2d__op', 'FusedDepthwiseConv2D', state),
  ].map(config => Object.assign(config, {[MARK]: true}));
  return state;
}

/**
 * Registers the drop-in gradients (what `import 'tfjs-conv-backprop-filters/gradients'` does).
 * Idempotent, and safe in any order relative to tfjs's own registration.
 */
export function installDropInGradients(): void {
  const state = dropInState();
  if (state.installed) return;
  for (const config of state.configs) {
    const current = tf.getGradient(config.kernelName);
    if (current !== undefined && !isDropIn(current)) state.originals.set(config.kernelName, current);
    tf.registerGradient(config);
  }
  state.installed = true;
}

/** Puts back the gradients the drop-in ones replaced (tfjs's own), or none where there were none. */
export function uninstallDropInGradients(): void {
  const state = dropInState();
  if (!state.installed) return;
  state.installed = false;
  const registry = gradientRegistry();
  for (const config of state.configs) {
    const original = state.originals.get(config.kernelName);
    if (original !== undefined) registry.set(config.kernelName, original);
    else registry.delete(config.kernelName);
  }
  state.originals.clear();
}

/** Whether the drop-in gradients are registered. */
export function dropInGradientsInstalled(): boolean {
  return dropInState().installed;
}

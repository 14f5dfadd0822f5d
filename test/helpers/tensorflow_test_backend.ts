import {MathBackendCPU} from '@tensorflow/tfjs-backend-cpu';
import * as tf from '@tensorflow/tfjs-core';
import type {KernelFunc, TensorInfo} from '@tensorflow/tfjs-core';

import {ConvolutionBackpropFilters, ConvTransposeBackpropFilters, KERNEL_ALIASES} from '../../src/names';

/**
 * Where @tensorflow/tfjs-node does not load (its install downloads libtensorflow from outside
 * the npm registry), a backend registered under its name, `tensorflow`, made of tfjs-cpu's
 * kernels — the kernel contract tfjs-node implements, which tfjs's own conv tests check on
 * both — and of this package's `tensorflow` kernels, which the package entry registers for that
 * name. Registered with a low priority: never picked unless asked for.
 *
 * tfjs's three filter-gradient kernels, the ones this package's `tensorflow` kernels route to,
 * take no more than tfjs-node 4.22 and TensorFlow 2.9.1's CPU kernels do, and compute as those
 * do where tfjs-cpu's differ:
 * - Conv2DBackpropFilter: pad 'valid' or 'same' only (tfjs-node throws on any other), NHWC only
 *   (TensorFlow's CPU kernel);
 * - DepthwiseConv2dNativeBackpropFilter: pad 'valid' or 'same', equal row and column strides;
 *   dilations above 1 throw here (TensorFlow's CPU kernel ignores them: a wrong result);
 * - Conv3DBackpropFilterV2: pad 'valid' or 'same';
 * - all three multiply the padding zeros with dy, as TensorFlow's do (tfjs-cpu's loops skip
 *   the padded reads): the input is zero-padded first and the kernel runs 'valid', so an
 *   infinite dy meeting padding gives NaN as on tfjs-node.
 */
export const TENSORFLOW = 'tensorflow';

/** The filter-gradient kernels with TensorFlow's contract on the test backend. */
export const TENSORFLOW_FILTER_GRADIENT_KERNELS = ['Conv2DBackpropFilter', 'DepthwiseConv2dNativeBackpropFilter', 'Conv3DBackpropFilterV2'];

interface PadInfo {
  type: string;
  top: number;
  bottom: number;
  left: number;
  right: number;
  front?: number;
  back?: number;
}

function cpuKernel(name: string): KernelFunc {
  const config = tf.getKernel(name, 'cpu');
  if (config === undefined) throw new Error(`tensorflow test backend: tfjs-cpu has no ${name} kernel`);
  return config.kernelFunc;
}

function checkPadType(kernel: string, padInfo: PadInfo) {
  if (padInfo.type !== 'VALID' && padInfo.type !== 'SAME') {
    throw new Error(`${kernel}: TF Backend supports only 'valid' and 'same' padding while padding was ${padInfo.type}`);
  }
}

/**
 * `kernelName` of tfjs-cpu run as TensorFlow does: x zero-padded as padInfo says (NHWC or
 * NDHWC), then the kernel with pad 'valid'.
 */
function withPaddingMultiplied(
    kernelName: string, args: Parameters<KernelFunc>[0], padInfo: PadInfo, spatialRank: 2 | 3): TensorInfo {
  const {inputs, backend, attrs} = args;
  const x = inputs.x as TensorInfo;
  const spatial = spatialRank === 3 ?
      [[padInfo.front!, padInfo.back!], [padInfo.top, padInfo.bottom], [padInfo.left, padInfo.right]] :
      [[padInfo.top, padInfo.bottom], [padInfo.left, padInfo.right]];
  const unpadded = spatial.every(([b, e]) => b === 0 && e === 0);
  const padded = unpadded ? x :
                            cpuKernel('PadV2')({
                              inputs: {x}, backend,
                              attrs: {paddings: [[0, 0], ...spatial, [0, 0]], constantValue: 0} as unknown as tf.NamedAttrMap,
                            }) as TensorInfo;
  try {
    return cpuKernel(kernelName)({inputs: {...inputs, x: padded}, backend, attrs: {...attrs, pad: 'valid'}}) as TensorInfo;
  } finally {
    if (!unpadded) (backend as MathBackendCPU).disposeIntermediateTensorInfo(padded);
  }
}

const WITH_TENSORFLOW_CONTRACT: Record<string, KernelFunc> = {
  Conv2DBackpropFilter: args => {
    const {strides, pad, dataFormat, dimRoundingMode, filterShape} = args.attrs as unknown as tf.Conv2DBackpropFilterAttrs;
    const x = args.inputs.x as TensorInfo;
    const info = tf.backend_util.computeConv2DInfo(
        x.shape as [number, number, number, number], filterShape, strides, 1, pad, dimRoundingMode, false,
        tf.backend_util.convertConv2DDataFormat(dataFormat));
    checkPadType('Conv2DBackpropFilter', info.padInfo);
    if (info.dataFormat !== 'channelsLast') throw new Error('Conv2DCustomBackpropFilterOp only supports NHWC.');
    return withPaddingMultiplied('Conv2DBackpropFilter', args, info.padInfo, 2);
  },
  DepthwiseConv2dNativeBackpropFilter: args => {
    const {strides, dilations, pad, dimRoundingMode, filterShape} =
        args.attrs as unknown as tf.DepthwiseConv2dNativeBackpropFilterAttrs;
    const x = args.inputs.x as TensorInfo;
    const info = tf.backend_util.computeConv2DInfo(
        x.shape as [number, number, number, number], filterShape, strides, dilations, pad, dimRoundingMode, true);
    checkPadType('DepthwiseConv2dNativeBackpropFilter', info.padInfo);
    if (info.strideHeight !== info.strideWidth) {
      throw new Error('Current implementation only supports equal length strides in the row and column dimensions.');
    }
    if (info.dilationHeight !== 1 || info.dilationWidth !== 1) {
      throw new Error(
          'tensorflow test backend: TensorFlow\'s CPU DepthwiseConv2dNativeBackpropFilter ignores dilations ' +
          `(${info.dilationHeight}, ${info.dilationWidth}): its result would be wrong`);
    }
    return withPaddingMultiplied('DepthwiseConv2dNativeBackpropFilter', args, info.padInfo, 2);
  },
  Conv3DBackpropFilterV2: args => {
    const {strides, pad, filterShape} = args.attrs as unknown as tf.Conv3DBackpropFilterV2Attrs;
    const x = args.inputs.x as TensorInfo;
    const info = tf.backend_util.computeConv3DInfo(
        x.shape as [number, number, number, number, number], filterShape as [number, number, number, number, number],
        strides, 1, pad);
    checkPadType('Conv3DBackpropFilterV2', info.padInfo);
    return withPaddingMultiplied('Conv3DBackpropFilterV2', args, info.padInfo, 3);
  },
};

/** Registers the test backend `tensorflow` (see above); a no-op once registered. */
export function registerTensorflowTestBackend(): void {
  if (tf.findBackendFactory(TENSORFLOW) != null) return;
  tf.registerBackend(TENSORFLOW, () => new MathBackendCPU(), -1);
  const ours = new Set<string>([...KERNEL_ALIASES[ConvolutionBackpropFilters], ...KERNEL_ALIASES[ConvTransposeBackpropFilters]]);
  for (const config of tf.getKernelsForBackend('cpu')) {
    if (ours.has(config.kernelName)) continue;  // this package's tensorflow kernels are registered already
    const kernelFunc = WITH_TENSORFLOW_CONTRACT[config.kernelName] ?? config.kernelFunc;
    tf.registerKernel({...config, backendName: TENSORFLOW, kernelFunc});
  }
}

/**
 * The case table: data, run by one spec on every backend. Each geometric problem is expanded
 * over every data format × filter format the op takes, and over the four ways of giving the
 * filter shape (spatial or full, as attribute or as the int32 input).
 */
import {computeGeometry, FilterGradientGeometry} from '../src/geometry';
import {ConvolutionBackpropFilters, ConvTransposeBackpropFilters, OpName} from '../src/names';
import {ReferenceAttrs, referenceOutputDeltaShape} from './reference';

/** A problem's attributes: the layouts and the filter shape vary per case. */
export type ProblemAttrs = Omit<ReferenceAttrs, 'dataFormat' | 'filterFormat' | 'kernel'>;

interface Problem {
  id: string;
  transposed?: boolean;
  /** NXC shape of `input` (for the transposed op: the small side). */
  input: number[];
  /** Channels of outputDelta. */
  outputDeltaChannels: number;
  kernel: number[];
  attrs: ProblemAttrs;
}

export type FilterShapeSource = 'attribute-spatial' | 'attribute-full' | 'input-full' | 'input-spatial';

export interface FilterGradientCase {
  id: string;
  op: OpName;
  inputShape: number[];
  outputDeltaShape: number[];
  kernel: number[];
  /** Attributes as a user passes them (filterShape included when it comes from the attribute). */
  attrs: Record<string, unknown>;
  /** The filterShape kernel input, when the case gives it that way. */
  filterShapeInput?: number[];
  seed: number;
}

const PROBLEMS: Problem[] = [
  {id: 'conv1d_basic', input: [2, 9, 3], outputDeltaChannels: 4, kernel: [3], attrs: {strides: [1]}},
  {id: 'conv1d_stride_gt_kernel', input: [2, 10, 2], outputDeltaChannels: 3, kernel: [2], attrs: {strides: [3]}},
  {
    id: 'conv1d_groups2_dilation2_asym',
    input: [3, 11, 4], outputDeltaChannels: 6, kernel: [3],
    attrs: {strides: [2], dilations: [2], padsBegin: [1], padsEnd: [2], groups: 2},
  },
  {
    id: 'conv2d_pads', input: [2, 5, 6, 3], outputDeltaChannels: 2, kernel: [3, 3],
    attrs: {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1]},
  },
  {
    id: 'conv2d_everything',
    input: [2, 8, 7, 4], outputDeltaChannels: 6, kernel: [3, 2],
    attrs: {strides: [2, 1], dilations: [1, 2], padsBegin: [1, 0], padsEnd: [2, 1], groups: 2},
  },
  {
    id: 'conv2d_depthwise_same_upper', input: [2, 6, 6, 4], outputDeltaChannels: 4, kernel: [3, 3],
    attrs: {strides: [2, 2], autoPad: 'same_upper', groups: 4},
  },
  {
    id: 'conv2d_channel_multiplier_valid', input: [1, 5, 5, 3], outputDeltaChannels: 6, kernel: [2, 2],
    attrs: {strides: [1, 1], dilations: [2, 2], autoPad: 'valid', padsBegin: [3, 3], groups: 3},
  },
  {
    id: 'conv2d_kernel_larger_than_input', input: [2, 3, 2, 2], outputDeltaChannels: 3, kernel: [5, 4],
    attrs: {strides: [1, 1], padsBegin: [2, 2], padsEnd: [2, 2]},
  },
  {
    id: 'conv2d_same_lower_odd_total', input: [2, 7, 6, 2], outputDeltaChannels: 3, kernel: [4, 3],
    attrs: {strides: [2, 3], autoPad: 'same_lower', padsBegin: [9, 9]},
  },
  {
    id: 'conv2d_SAME_UPPER_dilated', input: [2, 6, 5, 3], outputDeltaChannels: 2, kernel: [3, 3],
    attrs: {strides: [1, 1], dilations: [2, 1], autoPad: 'SAME_UPPER'},
  },
  {
    id: 'conv2d_stride_gt_kernel', input: [2, 9, 9, 2], outputDeltaChannels: 3, kernel: [1, 2],
    attrs: {strides: [3, 4]},
  },
  {
    id: 'conv2d_ragged_tiles', input: [2, 6, 6, 9], outputDeltaChannels: 7, kernel: [3, 3],
    attrs: {strides: [1, 1], padsBegin: [0, 1], padsEnd: [1, 0]},
  },
  {
    id: 'conv2d_groups2_ragged', input: [2, 5, 5, 10], outputDeltaChannels: 6, kernel: [2, 2],
    attrs: {strides: [1, 2], groups: 2},
  },
  {
    id: 'conv2d_depthwise_wide_kernel_stride2', input: [2, 7, 16, 2], outputDeltaChannels: 2, kernel: [2, 6],
    attrs: {strides: [1, 2], padsBegin: [0, 2], padsEnd: [1, 3], groups: 2},
  },
  {
    id: 'conv1d_depthwise_dilated', input: [2, 20, 3], outputDeltaChannels: 3, kernel: [5],
    attrs: {strides: [1], dilations: [2], padsBegin: [3], padsEnd: [2], groups: 3},
  },
  {
    id: 'conv1d_channel_multiplier_stride3', input: [2, 25, 2], outputDeltaChannels: 4, kernel: [4],
    attrs: {strides: [3], padsBegin: [1], padsEnd: [2], groups: 2},
  },
  {
    id: 'conv2d_depthwise_kernel_column', input: [2, 6, 5, 3], outputDeltaChannels: 3, kernel: [3, 1],
    attrs: {strides: [1, 2], padsBegin: [1, 0], padsEnd: [1, 0], groups: 3},
  },
  {id: 'conv3d_basic', input: [2, 4, 5, 3, 2], outputDeltaChannels: 3, kernel: [2, 3, 2], attrs: {strides: [1, 1, 1]}},
  {
    id: 'conv3d_everything', input: [2, 5, 6, 5, 4], outputDeltaChannels: 2, kernel: [3, 2, 3],
    attrs: {strides: [2, 1, 2], dilations: [1, 2, 1], padsBegin: [1, 0, 2], padsEnd: [0, 1, 1], groups: 2},
  },
  {
    id: 'conv3d_depthwise_same_lower', input: [1, 4, 4, 4, 3], outputDeltaChannels: 3, kernel: [3, 3, 3],
    attrs: {strides: [2, 2, 2], autoPad: 'same_lower', groups: 3},
  },
  {
    id: 'deconv1d_output_padding', transposed: true, input: [2, 4, 3], outputDeltaChannels: 2, kernel: [3],
    attrs: {strides: [2], outputPadding: [1]},
  },
  {
    id: 'deconv1d_groups2_dilation2_asym', transposed: true, input: [2, 5, 4], outputDeltaChannels: 6, kernel: [3],
    attrs: {strides: [2], dilations: [2], padsBegin: [1], padsEnd: [2], groups: 2},
  },
  {
    id: 'deconv2d_everything', transposed: true, input: [2, 3, 4, 4], outputDeltaChannels: 6, kernel: [3, 2],
    attrs: {strides: [2, 1], dilations: [1, 2], padsBegin: [1, 0], padsEnd: [0, 1], outputPadding: [1, 0], groups: 2},
  },
  {
    id: 'deconv2d_depthwise_same_upper', transposed: true, input: [2, 3, 3, 4], outputDeltaChannels: 4,
    kernel: [3, 3], attrs: {strides: [2, 2], autoPad: 'same_upper', groups: 4},
  },
  {
    id: 'deconv2d_same_lower_output_padding', transposed: true, input: [1, 3, 2, 2], outputDeltaChannels: 3,
    kernel: [4, 3], attrs: {strides: [2, 2], autoPad: 'Same_Lower', outputPadding: [1, 0]},
  },
  {
    id: 'deconv2d_valid_stride_gt_kernel', transposed: true, input: [2, 3, 3, 2], outputDeltaChannels: 3,
    kernel: [2, 3], attrs: {strides: [3, 1], autoPad: 'valid', padsEnd: [4, 4]},
  },
  {
    id: 'deconv2d_ragged_tiles', transposed: true, input: [2, 4, 4, 9], outputDeltaChannels: 7, kernel: [3, 3],
    attrs: {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1]},
  },
  {
    id: 'deconv2d_kernel_larger_than_input', transposed: true, input: [2, 2, 2, 2], outputDeltaChannels: 2,
    kernel: [4, 5], attrs: {strides: [1, 1], padsBegin: [2, 2], padsEnd: [1, 2]},
  },
  {
    id: 'deconv3d_everything', transposed: true, input: [2, 2, 3, 2, 2], outputDeltaChannels: 3, kernel: [2, 2, 3],
    attrs: {strides: [2, 1, 2], dilations: [1, 1, 2], padsBegin: [0, 1, 1], padsEnd: [1, 0, 0]},
  },
  {
    id: 'deconv3d_channel_multiplier_same_upper', transposed: true, input: [1, 3, 3, 3, 2], outputDeltaChannels: 4,
    kernel: [2, 2, 2], attrs: {strides: [2, 2, 2], autoPad: 'same_upper', groups: 2},
  },
];

const CONV_FILTER_FORMATS = ['XIO', 'OIX'];
const TRANSPOSED_FILTER_FORMATS = ['XIO', 'OIX', 'IOX', 'XOI'];
const FILTER_SHAPE_SOURCES: FilterShapeSource[] = ['attribute-spatial', 'attribute-full', 'input-full', 'input-spatial'];

/** The full filter shape in `format`; O and I sized as DESIGN.md §2 says for each op. */
export function fullFilterShape(
    transposed: boolean, format: string, inputChannels: number, outputDeltaChannels: number, groups: number,
    kernel: number[]): number[] {
  const sizeOf: Record<string, number> = transposed ? {O: outputDeltaChannels / groups, I: inputChannels} :
                                                      {O: outputDeltaChannels, I: inputChannels / groups};
  return format.split('').flatMap(letter => letter === 'X' ? kernel : [sizeOf[letter]]);
}

function toNcx(shape: number[]): number[] {
  return [shape[0], shape[shape.length - 1], ...shape.slice(1, -1)];
}

function expand(): FilterGradientCase[] {
  const cases: FilterGradientCase[] = [];
  for (const problem of PROBLEMS) {
    const transposed = problem.transposed === true;
    const filterFormats = transposed ? TRANSPOSED_FILTER_FORMATS : CONV_FILTER_FORMATS;
    for (const dataFormat of ['NXC', 'NCX'] as const) {
      for (const filterFormat of filterFormats) {
        const inputShape = dataFormat === 'NXC' ? problem.input : toNcx(problem.input);
        const outputDeltaShape = referenceOutputDeltaShape(
            transposed, inputShape, problem.outputDeltaChannels, {...problem.attrs, dataFormat, kernel: problem.kernel});
        const full = fullFilterShape(
            transposed, filterFormat, problem.input[problem.input.length - 1], problem.outputDeltaChannels,
            problem.attrs.groups ?? 1, problem.kernel);
        const source = FILTER_SHAPE_SOURCES[cases.length % FILTER_SHAPE_SOURCES.length];
        const given = source.endsWith('full') ? full : problem.kernel;
        cases.push({
          id: `${problem.id}/${dataFormat}/${filterFormat}/${source}`,
          op: transposed ? ConvTransposeBackpropFilters : ConvolutionBackpropFilters,
          inputShape,
          outputDeltaShape,
          kernel: problem.kernel,
          attrs: {
            ...problem.attrs,
            dataFormat,
            filterFormat,
            ...(source.startsWith('attribute') ? {filterShape: given} : {}),
          },
          ...(source.startsWith('input') ? {filterShapeInput: given} : {}),
          seed: cases.length + 1,
        });
      }
    }
  }
  return cases;
}

export const CASES: readonly FilterGradientCase[] = expand();

/** The geometry of a case, computed from its shapes alone (no tensors). */
export function geometryOfCase(c: FilterGradientCase): FilterGradientGeometry {
  return computeGeometry(
      c.op, {
        input: {shape: c.inputShape, dtype: 'float32'},
        outputDelta: {shape: c.outputDeltaShape, dtype: 'float32'},
        filterShape: c.filterShapeInput,
      },
      c.attrs);
}

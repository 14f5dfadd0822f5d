import type {DataType} from '@tensorflow/tfjs-core';

import {DataFormat, FilterGradientAttrs, parseAttributes, ParsedAttributes, readFilterShape, TransposedFilterFormat} from './attributes';
import {opError} from './errors';
import {ConvTransposeBackpropFilters, OpName} from './names';

/**
 * Both operations reduce to one canonical problem, the filter gradient of a convolution:
 *
 *   dW[g][dc][sc][k] = Σ_n Σ_p  diffDst[n][g·DC + dc][p] · src[n][g·SC + sc][p·stride − padBegin + k·dilation]
 *
 * with SC = src channels per group and DC = diffDst channels per group. For
 * ConvolutionBackpropFilters, src is `input` and diffDst is `outputDelta`; for
 * ConvTransposeBackpropFilters the roles swap (src = `outputDelta`, diffDst = `input`), as
 * oneDNN's reference deconvolution does. Everything a kernel needs is in this frozen object:
 * explicit pads, sizes, and the element strides of the tensors and of the requested filter
 * layout, so layouts are index arithmetic and never copies.
 */
export interface FilterGradientGeometry {
  /** The operation, by its spec name (aliases are resolved to it). */
  readonly op: OpName;
  /** Spatial axes: 1, 2 or 3. */
  readonly spatialRank: number;
  /** N, the batch size (0 gives a zero gradient). */
  readonly batch: number;
  /** G. */
  readonly groups: number;
  /** The tensor read through the sliding window (conv: input; transposed: outputDelta). */
  readonly src: CanonicalTensor;
  /** The tensor reduced against it (conv: outputDelta; transposed: input). */
  readonly diffDst: CanonicalTensor;
  /** One entry per spatial axis, outermost first. */
  readonly axes: readonly SpatialAxis[];
  /** Layout of `input` and `outputDelta`. */
  readonly dataFormat: DataFormat;
  /** Layout of the result. */
  readonly filterFormat: TransposedFilterFormat;
  /** The result's shape, in `filterFormat`. */
  readonly filterShape: readonly number[];
  /** Elements of the result. */
  readonly filterSize: number;
  /** Element strides of the result for the canonical indices g, dc, sc (the k strides are in `axes`). */
  readonly filterStrides: {readonly group: number; readonly diffDstChannel: number; readonly srcChannel: number};
  /** Multiply-adds × 2 of the whole gradient, for GFLOP/s figures. */
  readonly flops: number;
}

/** One of the two tensors of the canonical problem (src or diffDst), as strides into its data. */
export interface CanonicalTensor {
  /** Which kernel input plays this role. */
  readonly name: 'input' | 'outputDelta';
  /** The tensor's shape, in the data format. */
  readonly shape: readonly number[];
  /** Channels of the whole tensor. */
  readonly channels: number;
  /** Channels / groups. */
  readonly channelsPerGroup: number;
  /** Elements from one sample to the next. */
  readonly batchStride: number;
  /** Elements from one channel to the next (1 in NXC). */
  readonly channelStride: number;
}

/** One spatial axis of the canonical problem: sizes, window and element strides. */
export interface SpatialAxis {
  /** Size of src along this axis (the windowed tensor). */
  readonly srcSize: number;
  /** Size of diffDst along this axis (the output positions p). */
  readonly diffDstSize: number;
  /** K, the filter's size along this axis. */
  readonly kernelSize: number;
  /** s. */
  readonly stride: number;
  /** d. */
  readonly dilation: number;
  /** pb, explicit (auto_pad resolved). */
  readonly padBegin: number;
  /** pe, explicit (auto_pad resolved). */
  readonly padEnd: number;
  /** Element stride of one step along this axis in src. */
  readonly srcStride: number;
  /** Element stride of one step along this axis in diffDst. */
  readonly diffDstStride: number;
  /** Element stride of one step along this axis in the result. */
  readonly filterStride: number;
}

/**
 * The spatial axes as three, outermost first, with unit axes in front for 1-D and 2-D
 * problems: kernels that run one fixed 3-D loop nest (cpu loops, webgl shaders) read these.
 */
export function spatialAxesAs3d(axes: readonly SpatialAxis[]): SpatialAxis[] {
  const unit: SpatialAxis = {
    srcSize: 1, diffDstSize: 1, kernelSize: 1, stride: 1, dilation: 1, padBegin: 0, padEnd: 0,
    srcStride: 0, diffDstStride: 0, filterStride: 0,
  };
  return [...new Array<SpatialAxis>(3 - axes.length).fill(unit), ...axes];
}

/** What a kernel knows about its tensors before reading any data. */
export interface TensorDescription {
  /** The tensor's shape. */
  readonly shape: readonly number[];
  /** The tensor's dtype: the ops take float32 only. */
  readonly dtype: DataType;
}

/** The tensors `computeGeometry` checks: shapes and dtypes (tensors qualify), no data. */
export interface GeometryInputs {
  /** The `input` tensor (or its shape and dtype). */
  readonly input: TensorDescription | undefined;
  /** The `outputDelta` tensor (or its shape and dtype). */
  readonly outputDelta: TensorDescription | undefined;
  /** Values of the optional filterShape input tensor, already checked to be int32 1-D. */
  readonly filterShape?: ArrayLike<number>;
}

const MAX_ELEMENTS = 2 ** 31 - 1;
/**
 * The largest result this package allocates: 2^28 float32 elements, 1 GiB (the composite kernel
 * also sums into float64: 3 GiB in all). Filters of real networks stay below ~10^8 elements
 * (VGG-16's fc6 as a 7×7 convolution: 1.03·10^8); anything larger would otherwise fail deep
 * inside a backend (an ArrayBuffer, texture or wasm heap allocation) or take the process down.
 */
const MAX_FILTER_ELEMENTS = 2 ** 28;

/**
 * Checks a call of either op and returns the frozen problem every kernel runs: pads explicit
 * (auto_pad resolved), sizes, element strides of both tensors and of the result's layout, the
 * result's shape, and `flops` (2·N·O·(C/G)·K·out-spatial). No data is read and nothing is
 * allocated.
 *
 * @param op - 'ConvolutionBackpropFilters' or 'ConvTransposeBackpropFilters' (the spec names:
 *   defaults by kernel name are applied by the kernels, before this).
 * @param inputs - shapes and dtypes of `input` and `outputDelta` (tensors qualify), and the
 *   optional filterShape input's values.
 * @param attrs - the op's attributes (camelCase).
 * @throws Error naming the op, the attribute or input, what was expected and what was given:
 *   ranks, batch mismatch, attribute lengths and ranges, unknown enum values or attribute
 *   names, groups not dividing channels, filterShape missing or inconsistent, sizes that do not
 *   match, non-float32 dtypes, zero-sized axes, results over 2^28 elements.
 *
 * @example
 * ```ts
 * const g = computeGeometry('ConvolutionBackpropFilters',
 *     {input: {shape: [2, 56, 56, 64], dtype: 'float32'}, outputDelta: {shape: [2, 56, 56, 64], dtype: 'float32'}},
 *     {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3]});
 * g.filterShape;  // [3, 3, 64, 64]
 * g.flops;        // 462422016
 * ```
 */
export function computeGeometry(
    op: OpName, inputs: GeometryInputs,
    attrs: FilterGradientAttrs | Readonly<Record<string, unknown>> | undefined): FilterGradientGeometry {
  const input = checkTensor(op, 'input', inputs.input);
  const outputDelta = checkTensor(op, 'outputDelta', inputs.outputDelta);
  if (input.shape.length !== outputDelta.shape.length) {
    throw opError(
        op, `outputDelta rank (${outputDelta.shape.length})`, `must equal input rank (${input.shape.length})`);
  }
  const rank = input.shape.length;
  const spatialRank = rank - 2;
  const parsed = parseAttributes(op, attrs as never, spatialRank);
  if (input.shape[0] !== outputDelta.shape[0]) {
    throw opError(
        op, `outputDelta batch (${outputDelta.shape[0]})`, `must equal input batch (${input.shape[0]})`);
  }
  const inputLayout = describeLayout(input.shape, parsed.dataFormat);
  const deltaLayout = describeLayout(outputDelta.shape, parsed.dataFormat);
  checkPositive(op, 'input', inputLayout, parsed.dataFormat);
  checkPositive(op, 'outputDelta', deltaLayout, parsed.dataFormat);

  const {groups} = parsed;
  if (inputLayout.channels % groups !== 0 || deltaLayout.channels % groups !== 0) {
    throw opError(
        op, `groups (${groups})`,
        `must divide input channels (${inputLayout.channels}) and outputDelta channels (${deltaLayout.channels})`);
  }

  const transposed = op === ConvTransposeBackpropFilters;
  const filterShapeGiven = inputs.filterShape !== undefined ?
      readFilterShape(op, 'filterShape input', Array.from(inputs.filterShape), spatialRank) :
      parsed.filterShape;
  const source = inputs.filterShape !== undefined ? 'filterShape input' : `attribute 'filterShape'`;
  if (filterShapeGiven === undefined) {
    throw opError(
        op, 'filterShape',
        `is required (as attribute or as the third input): the kernel size cannot be inferred from the tensors`);
  }

  const src = transposed ? deltaLayout : inputLayout;
  const diffDst = transposed ? inputLayout : deltaLayout;
  const kernelSizes = filterShapeGiven.length === spatialRank ?
      [...filterShapeGiven] :
      filterShapeGiven.filter((_, axis) => filterLetters(parsed.filterFormat, spatialRank)[axis] === 'X');
  const filterLayout =
      describeFilter(parsed.filterFormat, transposed, src.channels / groups, diffDst.channels, kernelSizes);
  const filterShape = filterLayout.shape;
  if (filterShapeGiven.length === rank && filterShape.some((size, i) => size !== filterShapeGiven[i])) {
    throw opError(
        op, source,
        `must be [${filterShape}] in ${parsed.filterFormat} for ${inputLayout.channels} input channels, ${
            deltaLayout.channels} outputDelta channels and groups ${groups}`,
        filterShapeGiven);
  }
  const filterSize = filterShape.reduce((a, b) => a * b, 1);
  if (filterSize > MAX_ELEMENTS) {
    throw opError(op, `filter shape [${filterShape}]`, `must hold at most ${MAX_ELEMENTS} elements`);
  }
  if (filterSize > MAX_FILTER_ELEMENTS) {
    throw opError(
        op, `filter shape [${filterShape}]`,
        `must hold at most ${MAX_FILTER_ELEMENTS} elements (1 GiB of float32) for the result to fit in memory`, filterSize);
  }

  const pads = resolvePads(parsed, inputLayout.spatial, kernelSizes, transposed);
  const expected = inputLayout.spatial.map(
      (size, i) => transposed ?
          (size - 1) * parsed.strides[i] - pads.begin[i] - pads.end[i] + parsed.dilations[i] * (kernelSizes[i] - 1) +
              1 + parsed.outputPadding[i] :
          Math.floor(
              (size + pads.begin[i] + pads.end[i] - parsed.dilations[i] * (kernelSizes[i] - 1) - 1) /
              parsed.strides[i]) +
              1);
  if (expected.some(size => size < 1)) {
    throw opError(
        op, `the attributes`,
        `give an empty output [${expected}] for input [${input.shape}] (kernel [${kernelSizes}], dilations [${
            parsed.dilations}], pads [${pads.begin}] + [${pads.end}])`);
  }
  if (expected.some((size, i) => size !== deltaLayout.spatial[i])) {
    throw opError(
        op, `outputDelta spatial shape [${deltaLayout.spatial}]`,
        `does not match the shape [${expected}] computed from input [${input.shape}] and the attributes`);
  }

  const axes = kernelSizes.map((kernelSize, i): SpatialAxis => Object.freeze({
    srcSize: src.spatial[i],
    diffDstSize: diffDst.spatial[i],
    kernelSize,
    stride: parsed.strides[i],
    dilation: parsed.dilations[i],
    padBegin: pads.begin[i],
    padEnd: pads.end[i],
    srcStride: src.spatialStrides[i],
    diffDstStride: diffDst.spatialStrides[i],
    filterStride: filterLayout.strides.spatial[i],
  }));
  const kernelVolume = kernelSizes.reduce((a, b) => a * b, 1);
  const diffDstVolume = diffDst.spatial.reduce((a, b) => a * b, 1);
  return Object.freeze({
    op,
    spatialRank,
    batch: input.shape[0],
    groups,
    src: canonicalTensor(transposed ? 'outputDelta' : 'input', src, groups),
    diffDst: canonicalTensor(transposed ? 'input' : 'outputDelta', diffDst, groups),
    axes: Object.freeze(axes),
    dataFormat: parsed.dataFormat,
    filterFormat: parsed.filterFormat,
    filterShape: Object.freeze(filterShape),
    filterSize,
    filterStrides: Object.freeze({
      group: filterLayout.strides.diffDstChannel * (diffDst.channels / groups),
      diffDstChannel: filterLayout.strides.diffDstChannel,
      srcChannel: filterLayout.strides.srcChannel,
    }),
    flops: 2 * input.shape[0] * diffDst.channels * (src.channels / groups) * kernelVolume * diffDstVolume,
  });
}

function checkTensor(op: OpName, name: string, tensor: TensorDescription | undefined): TensorDescription {
  if (tensor === undefined || tensor === null) throw opError(op, `input '${name}'`, 'is required');
  if (tensor.dtype !== 'float32') throw opError(op, name, `must be float32, got ${tensor.dtype}`);
  const rank = tensor.shape.length;
  if (rank < 3 || rank > 5) {
    throw opError(
        op, name, `must have rank 3, 4 or 5 (batch, channels, 1 to 3 spatial axes), got shape [${tensor.shape}]`);
  }
  return tensor;
}

/**
 * Explicit pads per axis. For same_upper/same_lower the output size is ceil(in / s) for the
 * convolution and in · s for the transposed one; the total pad is what makes the size formula
 * hold (clamped at 0), split in half with the odd element at the end (upper) or beginning (lower).
 */
function resolvePads(
    parsed: ParsedAttributes, inputSpatial: readonly number[], kernelSizes: readonly number[],
    transposed: boolean): {begin: number[]; end: number[]} {
  if (parsed.autoPad === 'none') return {begin: [...parsed.padsBegin], end: [...parsed.padsEnd]};
  if (parsed.autoPad === 'valid') return {begin: inputSpatial.map(() => 0), end: inputSpatial.map(() => 0)};
  const totals = inputSpatial.map((size, i) => {
    const stride = parsed.strides[i];
    const kernelExtent = parsed.dilations[i] * (kernelSizes[i] - 1) + 1;
    const total = transposed ? kernelExtent + parsed.outputPadding[i] - stride :
                               (Math.ceil(size / stride) - 1) * stride + kernelExtent - size;
    return Math.max(0, total);
  });
  const halves = totals.map(total => Math.floor(total / 2));
  const rests = totals.map((total, i) => total - halves[i]);
  return parsed.autoPad === 'same_upper' ? {begin: halves, end: rests} : {begin: rests, end: halves};
}

interface DataLayout {
  readonly shape: readonly number[];
  readonly channels: number;
  readonly spatial: readonly number[];
  readonly batchStride: number;
  readonly channelStride: number;
  readonly spatialStrides: readonly number[];
}

/** Row-major element strides of `shape`. */
function rowMajorStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let stride = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

function describeLayout(shape: readonly number[], format: DataFormat): DataLayout {
  const strides = rowMajorStrides(shape);
  const channelAxis = format === 'NXC' ? shape.length - 1 : 1;
  const spatialAxes = shape.map((_, i) => i).filter(i => i !== 0 && i !== channelAxis);
  return {
    shape,
    channels: shape[channelAxis],
    spatial: spatialAxes.map(i => shape[i]),
    batchStride: strides[0],
    channelStride: strides[channelAxis],
    spatialStrides: spatialAxes.map(i => strides[i]),
  };
}

function checkPositive(op: OpName, name: string, layout: DataLayout, format: DataFormat) {
  if (layout.channels < 1 || layout.spatial.some(size => size < 1)) {
    throw opError(
        op, `${name} shape [${layout.shape}]`,
        `must have positive channel and spatial sizes (${format}); only the batch may be 0`);
  }
}

function canonicalTensor(name: 'input' | 'outputDelta', layout: DataLayout, groups: number): CanonicalTensor {
  return Object.freeze({
    name,
    shape: Object.freeze([...layout.shape]),
    channels: layout.channels,
    channelsPerGroup: layout.channels / groups,
    batchStride: layout.batchStride,
    channelStride: layout.channelStride,
  });
}

interface FilterLayout {
  readonly shape: number[];
  readonly strides: {readonly diffDstChannel: number; readonly srcChannel: number; readonly spatial: number[]};
}

/** The axis letters of a filter format with X expanded per spatial axis: 'OIX' in 2-D → O I X X. */
function filterLetters(format: TransposedFilterFormat, spatialRank: number): string[] {
  return format.replace('X', 'X'.repeat(spatialRank)).split('');
}

/**
 * A filter format names its axes by letter: X for the spatial axes, and O and I for the two
 * channel axes. For the convolution O spans all diffDst (outputDelta) channels and I holds the
 * src (input) channels of one group; for the transposed op O holds the src (outputDelta)
 * channels of one group and I spans all diffDst (input) channels. Either way one channel axis
 * spans the groups and is indexed g·DC + dc, the other is per group.
 */
function describeFilter(
    format: TransposedFilterFormat, transposed: boolean, srcPerGroup: number, diffDstChannels: number,
    kernelSizes: readonly number[]): FilterLayout {
  const diffDstLetter = transposed ? 'I' : 'O';
  const letters = filterLetters(format, kernelSizes.length);
  let spatialIndex = 0;
  const shape = letters.map(
      letter => letter === 'X' ? kernelSizes[spatialIndex++] : letter === diffDstLetter ? diffDstChannels : srcPerGroup);
  const strides = rowMajorStrides(shape);
  return {
    shape,
    strides: {
      diffDstChannel: strides[letters.indexOf(diffDstLetter)],
      srcChannel: strides[letters.findIndex(letter => letter !== 'X' && letter !== diffDstLetter)],
      spatial: letters.flatMap((letter, axis) => letter === 'X' ? [strides[axis]] : []),
    },
  };
}

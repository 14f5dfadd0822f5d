/**
 * The multi-target passes on problems chosen for their edges. Dense loops (dense,
 * kernels/webgl/passes/loops/dense_tiles.ts): ragged tiles, odd channel counts, groups, odd rows (a texel's
 * halves in two rows), strides and dilations (two src texels a step), pointwise problems whose
 * splits end at odd positions, 3-D, the transposed op. Depthwise loops (depthwise, passes/loops/depthwise_taps.ts):
 * odd widths, padding at both ends, strides, dilations, a tap block overhanging the kernel,
 * an odd channel count, 1-D and 3-D, and rows that run in segments (even widths whose rows
 * continue one another: splits starting mid-image, stride 2 along the row only, dilations,
 * NaN and ±Infinity at the ends of rows; or whose src rows are read anew at each row start:
 * stride 2, 'valid' padding). Packed inputs of odd width (tfjs packs each row of W
 * positions into ⌈W/2⌉ texel rows) are read in place, never unpacked. One-channel loops (one src channel, passes/loops/one_channel_taps.ts): a 5×5 kernel,
 * a ragged channel-pair block, odd diffDst channels, strides and asymmetric pads, dilations,
 * a tap block overhanging the kernel, 1-D, 3-D and the transposed op. All also with inputs in folded textures
 * (WEBGL_MAX_TEXTURE_SIZE 64). Each problem must run the multi-target draw (several draw
 * buffers) and match the float64 reference (test/reference.ts), with no texture or tensor left behind, and a packed
 * op must read its result; where given, which arrangement wrote it (channel texels: a packed
 * result for filters with the channels innermost, odd counts, the transposed layout, groups,
 * 1-D; the element-wise one for OIX and 3-D).
 */
import * as tf from '@tensorflow/tfjs-core';
import {MathBackendWebGL} from '@tensorflow/tfjs-backend-webgl';

import {multiTargetProgramCount} from '../../kernels/webgl/multi_target';
import {
  CONV_BACKPROP_FILTERS_WEBGL_DENSE_ROWS_MIN_FRAGMENT_READS, CONV_BACKPROP_FILTERS_WEBGL_DENSE_ROWS_WIDTH, DENSE_ROWS_MIN_FRAGMENT_READS,
  planDenseRows,
} from '../../kernels/webgl/passes/rows/dense';
import {CONV_BACKPROP_FILTERS_WEBGL_DEPTHWISE_ROWS_WIDTH, depthwiseRowsProgram, planDepthwiseRows} from '../../kernels/webgl/passes/rows/depthwise';
import {kernelRowsAlwaysInside, WRITTEN_ROWS_MAX_WIDTH} from '../../kernels/webgl/passes/rows/written_rows';
import {spatialAxesAs3d} from '../../src/geometry';
import {tuningFlag} from '../../src/tuning_flags';
import {CONV_BACKPROP_FILTERS_WEBGL_ONE_CHANNEL_ROWS_WIDTH, planOneChannelRows} from '../../kernels/webgl/passes/rows/one_channel';
import {planOneChannelLoops} from '../../kernels/webgl/passes/loops/one_channel_taps';
import {planDepthwiseLoops} from '../../kernels/webgl/passes/loops/depthwise_taps';
import {planDenseLoops} from '../../kernels/webgl/passes/loops/dense_tiles';
import {
  computeGeometry, ConvolutionBackpropFiltersAttrs, convolutionBackpropFilters, ConvTransposeBackpropFiltersAttrs,
  convTransposeBackpropFilters,
} from '../../kernels/index';
import {CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET} from '../../kernels/webgl/filter_gradient_kernel';
import {wholeRowSteps} from '../../kernels/webgl/passes/loops/tap_rows';
import {compareWithReference} from '../fuzz/runner';
import {expectClose, resourceCounts, seededValues} from '../helpers/util';
import {packing, useWebglBackend} from '../helpers/webgl_flags';
import {CallAttrs, referenceForCall} from '../reference';

interface Problem {
  name: string;
  op?: 'ConvTransposeBackpropFilters';
  input: number[];
  outputDelta: number[];
  attrs: ConvolutionBackpropFiltersAttrs | ConvTransposeBackpropFiltersAttrs;
  /**
   * Depthwise loops: how the rows run (tapSegmentsLoop: continuous or not; else one by one); checked
   * when given, and the problem then runs as depthwise loops even where depthwise rows would take it.
   */
  segments?: 'continuous' | 'row starts' | 'rows';
  /** Whether depthwise rows take the problem (planDepthwiseRows); checked when given ('packed': as denseRows). */
  depthwiseRows?: boolean | 'packed';
  /**
   * Whether dense rows take the problem (planDenseRows); checked when given. 'packed': where the
   * inputs are packed by an op (rows of odd width, read in tfjs's padded blocks), not otherwise.
   */
  denseRows?: boolean | 'packed';
  /** Whether one-channel rows take the problem (planOneChannelRows); checked when given ('packed': as denseRows). */
  oneChannelRows?: boolean | 'packed';
  /** Run with the row passes off, so one-channel loops take a problem one-channel rows would. */
  oneChannelLoops?: true;
  /**
   * Whether the rows are whole steps, every tap inside (wholeRowSteps: no tested ends in the
   * shader); checked when given, and the problem then runs as dense loops, depthwise loops or one-channel loops
   * even where dense or depthwise rows would take it.
   */
  wholeRows?: boolean;
  /**
   * Dense rows with their read minimum off (CONV_BACKPROP_FILTERS_WEBGL_DENSE_ROWS_MIN_FRAGMENT_READS
   * = 0), so a problem this small still splits its rows as TARGET_FRAGMENTS gives them; checked:
   * more than one split.
   */
  denseRowsSplits?: true;
  /**
   * Whether every kernel row meets a src row inside src from every diffDst row
   * (kernelRowsAlwaysInside: the row passes then add each row's products without a select);
   * checked when given.
   */
  kernelRowsInside?: boolean;
  /**
   * Which pass 2 writes the result: 'channel texels' (ArrangeChannelTexelsProgram: a packed
   * result, a target texel an output texel) or 'elements' (ArrangeTargetsProgram); checked when
   * given.
   */
  arrangement?: 'channel texels' | 'elements';
}

const PROBLEMS: Problem[] = [
  {name: '3×3 same, 8→8 (one full tile)', input: [2, 7, 9, 8], outputDelta: [2, 7, 9, 8], attrs: {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3]}},
  {name: 'ragged tiles 6→10', input: [1, 6, 5, 6], outputDelta: [1, 6, 5, 10], attrs: {strides: [1, 1], autoPad: 'same_lower', filterShape: [3, 3]}},
  {name: 'odd channels 3→5, stride 2, asymmetric pads', input: [2, 11, 10, 3], outputDelta: [2, 5, 6, 5],
    attrs: {strides: [2, 2], padsBegin: [1, 2], padsEnd: [0, 1], filterShape: [3, 3]}},
  {name: 'groups 2 (4→6 each), dilation 2', input: [1, 9, 8, 8], outputDelta: [1, 5, 4, 12],
    attrs: {strides: [1, 1], dilations: [2, 2], groups: 2, filterShape: [3, 3]}},
  {name: 'pointwise, 225 positions (odd), several splits', input: [1, 15, 15, 16], outputDelta: [1, 15, 15, 16],
    attrs: {strides: [1, 1], filterShape: [1, 1]}},
  {name: 'pointwise 1-D, odd channels', input: [3, 7, 5], outputDelta: [3, 7, 7], attrs: {strides: [1], filterShape: [1]}},
  {name: 'pointwise, even width (the pointwise sweep on packed inputs)', input: [1, 9, 14, 16], outputDelta: [1, 9, 14, 12],
    attrs: {strides: [1, 1], filterShape: [1, 1]}},
  {name: 'width 1 (packed blocks of one row), 3×1, 4→8', input: [2, 6, 1, 4], outputDelta: [2, 4, 1, 8],
    attrs: {strides: [1, 1], filterShape: [3, 1]}},
  {name: '3-D 2×3×3, stride 2 in depth', input: [1, 5, 6, 7, 4], outputDelta: [1, 2, 4, 5, 8],
    attrs: {strides: [2, 1, 1], filterShape: [2, 3, 3]}},
  {name: 'transposed, stride 2', op: 'ConvTransposeBackpropFilters', input: [2, 5, 5, 8], outputDelta: [2, 10, 10, 6],
    attrs: {strides: [2, 2], filterShape: [2, 2]}},
  {name: 'depthwise 3×3 same, odd width', input: [2, 6, 7, 8], outputDelta: [2, 6, 7, 8],
    attrs: {strides: [1, 1], autoPad: 'same_upper', groups: 8, filterShape: [3, 3]}},
  {name: 'depthwise stride 2, asymmetric pads', input: [2, 9, 12, 6], outputDelta: [2, 4, 6, 6],
    attrs: {strides: [2, 2], padsBegin: [1, 1], padsEnd: [0, 0], groups: 6, filterShape: [3, 3]}},
  {name: 'depthwise dilation 2, 5 channels', input: [1, 9, 11, 5], outputDelta: [1, 5, 7, 5],
    attrs: {strides: [1, 1], dilations: [2, 2], groups: 5, filterShape: [3, 3]}},
  {name: 'depthwise 1×17 (a tap block overhangs the kernel)', input: [1, 3, 21, 4], outputDelta: [1, 3, 13, 4],
    attrs: {strides: [1, 1], padsBegin: [0, 4], padsEnd: [0, 4], groups: 4, filterShape: [1, 17]}},
  {name: 'depthwise 1-D, stride 3, kernel wider than the input', input: [3, 4, 4], outputDelta: [3, 2, 4],
    attrs: {strides: [3], padsBegin: [3], padsEnd: [3], groups: 4, filterShape: [5]}},
  {name: 'depthwise 3-D', input: [1, 4, 5, 6, 4], outputDelta: [1, 4, 5, 6, 4],
    attrs: {strides: [1, 1, 1], autoPad: 'same_lower', groups: 4, filterShape: [2, 3, 3]}, segments: 'continuous'},
  {name: 'depthwise segments: 3×3 same, even width, splits starting mid-image', input: [6, 4, 6, 6], outputDelta: [6, 4, 6, 6],
    attrs: {strides: [1, 1], autoPad: 'same_upper', groups: 6, filterShape: [3, 3]}, segments: 'continuous'},
  {name: 'depthwise segments: stride 2 along the row only', input: [2, 5, 8, 4], outputDelta: [2, 5, 4, 4],
    attrs: {strides: [1, 2], autoPad: 'same_upper', groups: 4, filterShape: [3, 3]}, segments: 'continuous'},
  {name: 'depthwise segments: dilation 2, 10 channels, 4 kernel rows', input: [2, 6, 8, 10], outputDelta: [2, 6, 8, 10],
    attrs: {strides: [1, 1], dilations: [2, 2], autoPad: 'same_lower', groups: 10, filterShape: [4, 3]}, segments: 'continuous'},
  {name: 'depthwise segments: stride 2, even widths (src read anew at each row start)', input: [2, 8, 8, 4], outputDelta: [2, 4, 4, 4],
    attrs: {strides: [2, 2], padsBegin: [0, 0], padsEnd: [1, 1], groups: 4, filterShape: [3, 3]}, segments: 'row starts'},
  {name: 'depthwise segments: 3×3 valid, 6 channels (src rows longer than diffDst rows)', input: [3, 7, 8, 6], outputDelta: [3, 5, 6, 6],
    attrs: {strides: [1, 1], groups: 6, filterShape: [3, 3]}, segments: 'row starts'},
  {name: 'depthwise 2×4 valid, odd src width (rows one by one)', input: [1, 6, 7, 4], outputDelta: [1, 5, 4, 4],
    attrs: {strides: [1, 1], groups: 4, filterShape: [2, 4]}, segments: 'rows'},
  {name: 'depthwise transposed, stride 2', op: 'ConvTransposeBackpropFilters', input: [2, 4, 5, 6], outputDelta: [2, 8, 10, 6],
    attrs: {strides: [2, 2], groups: 6, filterShape: [2, 3], padsBegin: [0, 1], padsEnd: [0, 0]}},
  {name: 'depthwise rows: 3×3 same, rows of 4, 7 channels (a half pair), splits starting mid-image', input: [5, 4, 4, 7], outputDelta: [5, 4, 4, 7],
    attrs: {strides: [1, 1], autoPad: 'same_upper', groups: 7, filterShape: [3, 3]}, depthwiseRows: true},
  {name: 'depthwise rows: stride 2, pads 0/1 (MobileNet\'s), 8 → 4', input: [2, 8, 8, 4], outputDelta: [2, 4, 4, 4],
    attrs: {strides: [2, 2], padsBegin: [0, 0], padsEnd: [1, 1], groups: 4, filterShape: [3, 3]}, depthwiseRows: true},
  {name: 'depthwise rows: stride 2, begin pads, dilation 2 along the row', input: [2, 10, 12, 6], outputDelta: [2, 5, 6, 6],
    attrs: {strides: [2, 2], dilations: [1, 2], padsBegin: [1, 2], padsEnd: [1, 1], groups: 6, filterShape: [3, 3]}, depthwiseRows: true},
  {name: 'depthwise rows: 2×3, kernel rows wholly in the pads (pads past the dilated height)', input: [1, 3, 6, 4], outputDelta: [1, 7, 6, 4],
    attrs: {strides: [1, 1], dilations: [2, 1], padsBegin: [3, 1], padsEnd: [3, 1], groups: 4, filterShape: [2, 3]}, depthwiseRows: true},
  {name: 'depthwise rows: 5×3 (8 targets), rows of 8', input: [2, 7, 8, 4], outputDelta: [2, 7, 8, 4],
    attrs: {strides: [1, 1], autoPad: 'same_lower', groups: 4, filterShape: [5, 3]}, depthwiseRows: true},
  {name: 'depthwise rows: 1-D, stride 2, kernel 4', input: [3, 10, 4], outputDelta: [3, 6, 4],
    attrs: {strides: [2], padsBegin: [2], padsEnd: [2], groups: 4, filterShape: [4]}, depthwiseRows: true},
  {name: 'depthwise rows: rows of 40', input: [1, 3, 40, 2], outputDelta: [1, 3, 40, 2],
    attrs: {strides: [1, 1], autoPad: 'same_upper', groups: 2, filterShape: [3, 3]}, depthwiseRows: true},
  {name: 'depthwise rows: transposed, stride 2', op: 'ConvTransposeBackpropFilters', input: [2, 4, 4, 6], outputDelta: [2, 8, 8, 6],
    attrs: {strides: [2, 2], padsBegin: [1, 1], padsEnd: [0, 0], groups: 6, filterShape: [3, 3]}, depthwiseRows: true},
  // Stride 4, dilation 3: the first diffDst texel's products read src texels 0, 1, 2 and 4; texel
  // 3, which the src cursor passes on its way to 4, is first read by the next one (each pass must
  // read it as it passes, not step back).
  {name: 'depthwise rows: 1-D, stride 4, dilation 3, a src texel passed before its first use', input: [1, 16, 4], outputDelta: [1, 4, 4],
    attrs: {strides: [4], dilations: [3], autoPad: 'same_lower', groups: 4, filterShape: [3]}, depthwiseRows: true},
  {name: 'dense rows: 1-D, stride 4, dilation 3, a src texel passed before its first use', input: [1, 16, 4], outputDelta: [1, 4, 4],
    attrs: {strides: [4], dilations: [3], autoPad: 'same_lower', filterShape: [3]}, denseRows: true},
  {name: 'depthwise rows, odd widths: 3×3 same, stride 2, 9 → 5', input: [1, 5, 9, 4], outputDelta: [1, 3, 5, 4],
    attrs: {strides: [2, 2], autoPad: 'same_upper', groups: 4, filterShape: [3, 3]}, depthwiseRows: 'packed'},
  {name: 'depthwise rows, odd widths: 3×3 same, 7 → 7 (MobileNet\'s last layers at 224), splits starting mid-image', input: [5, 3, 7, 6],
    outputDelta: [5, 3, 7, 6], attrs: {strides: [1, 1], autoPad: 'same_upper', groups: 6, filterShape: [3, 3]}, depthwiseRows: 'packed'},
  {name: 'depthwise 3-D: depthwise loops', input: [1, 3, 4, 6, 4], outputDelta: [1, 3, 4, 6, 4],
    attrs: {strides: [1, 1, 1], autoPad: 'same_upper', groups: 4, filterShape: [2, 3, 3]}, depthwiseRows: false},
  {name: 'dense rows: 3×3 same, 3→6 (a half src pair), splits starting mid-image', input: [7, 5, 6, 3], outputDelta: [7, 5, 6, 6],
    attrs: {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3]}, denseRows: true, denseRowsSplits: true},
  {name: 'dense rows: 5×5 valid, 8→16 (MNIST\'s second layer; one diffDst pair a fragment)', input: [2, 12, 12, 8], outputDelta: [2, 8, 8, 16],
    attrs: {strides: [1, 1], filterShape: [5, 5]}, denseRows: true},
  {name: 'dense rows: stride 2, begin pads, dilation 2 along the row, 4→5 (a half diffDst pair)', input: [2, 9, 12, 4], outputDelta: [2, 4, 6, 5],
    attrs: {strides: [2, 2], dilations: [1, 2], padsBegin: [1, 2], padsEnd: [0, 1], filterShape: [3, 3]}, denseRows: true},
  {name: 'dense rows: 1×3, 6→18 (blocks of 2 diffDst pairs, a ragged one)', input: [2, 4, 6, 6], outputDelta: [2, 4, 4, 18],
    attrs: {strides: [1, 1], filterShape: [1, 3]}, denseRows: true},
  {name: 'dense 1×1 even width: dense loops\' pointwise sweep', input: [2, 4, 4, 6], outputDelta: [2, 4, 4, 20],
    attrs: {strides: [1, 1], filterShape: [1, 1]}, denseRows: false},
  {name: 'dense rows: 7×7 stride 2, 3→4 (ResNet-50\'s first layer)', input: [1, 12, 12, 3], outputDelta: [1, 6, 6, 4],
    attrs: {strides: [2, 2], padsBegin: [3, 3], padsEnd: [2, 2], filterShape: [7, 7]}, denseRows: true},
  {name: 'dense rows: 2×3, kernel rows wholly in the pads, 4→6', input: [1, 3, 6, 4], outputDelta: [1, 7, 6, 6],
    attrs: {strides: [1, 1], dilations: [2, 1], padsBegin: [3, 1], padsEnd: [3, 1], filterShape: [2, 3]}, denseRows: true},
  {name: 'dense rows: 1-D, stride 2, kernel 4', input: [3, 10, 4], outputDelta: [3, 6, 6],
    attrs: {strides: [2], padsBegin: [2], padsEnd: [2], filterShape: [4]}, denseRows: true},
  {name: 'dense rows: transposed, stride 2', op: 'ConvTransposeBackpropFilters', input: [2, 4, 4, 6], outputDelta: [2, 8, 8, 4],
    attrs: {strides: [2, 2], padsBegin: [1, 1], padsEnd: [0, 0], filterShape: [3, 3]}, denseRows: true},
  {name: 'dense rows, odd widths: 3×3 valid, 4→6, 13 → 11 (MNIST-3×3\'s second layer)', input: [2, 6, 13, 4], outputDelta: [2, 4, 11, 6],
    attrs: {strides: [1, 1], filterShape: [3, 3]}, denseRows: 'packed'},
  {name: 'dense rows, odd widths: 3×3 same, 5 → 5, stride 1, 4→4, splits starting mid-image', input: [9, 3, 5, 4], outputDelta: [9, 3, 5, 4],
    attrs: {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3]}, denseRows: 'packed', denseRowsSplits: true},
  {name: 'dense rows, odd src width only: stride 2, 9 → 4', input: [2, 5, 9, 4], outputDelta: [2, 2, 4, 6],
    attrs: {strides: [2, 2], filterShape: [3, 3]}, denseRows: 'packed'},
  {name: 'dense rows, odd widths, 1-D: 7 → 5', input: [3, 7, 4], outputDelta: [3, 5, 6],
    attrs: {strides: [1], filterShape: [3]}, denseRows: 'packed'},
  {name: 'dense 3×3, groups 2: dense loops', input: [1, 6, 6, 8], outputDelta: [1, 6, 6, 8],
    attrs: {strides: [1, 1], autoPad: 'same_upper', groups: 2, filterShape: [3, 3]}, denseRows: false},
  {name: 'dense rows, kernel rows always inside: 3×3 valid, stride 2, the last src row unread', input: [2, 10, 10, 4],
    outputDelta: [2, 4, 4, 6], attrs: {strides: [2, 2], filterShape: [3, 3]}, denseRows: true, kernelRowsInside: true},
  {name: 'depthwise rows, kernel rows always inside: 3×3 valid, the last kernel row on the last src row', input: [2, 9, 10, 4],
    outputDelta: [2, 7, 8, 4], attrs: {strides: [1, 1], groups: 4, filterShape: [3, 3]}, depthwiseRows: true, kernelRowsInside: true},
  {name: 'one-channel rows, kernel rows always inside: 3×3 valid, dilation 2 down the height, 1→6', input: [2, 9, 12, 1],
    outputDelta: [2, 5, 10, 6], attrs: {strides: [1, 1], dilations: [2, 1], filterShape: [3, 3]}, oneChannelRows: true, kernelRowsInside: true},
  {name: 'one src channel 5×5, 1→8 (two blocks of 2 pairs)', input: [2, 12, 11, 1], outputDelta: [2, 8, 7, 8],
    attrs: {strides: [1, 1], filterShape: [5, 5]}},
  {name: 'one src channel 3×3 same, 1→6 (a ragged block of 4 pairs)', input: [1, 7, 9, 1], outputDelta: [1, 7, 9, 6],
    attrs: {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3]}, oneChannelRows: false},
  {name: 'one src channel, 1→3 (odd channels), stride 2, asymmetric pads', input: [2, 11, 10, 1], outputDelta: [2, 5, 6, 3],
    attrs: {strides: [2, 2], padsBegin: [1, 2], padsEnd: [0, 1], filterShape: [3, 3]}},
  {name: 'one src channel, dilation 2, stride 3 along the row', input: [1, 9, 17, 1], outputDelta: [1, 5, 5, 4],
    attrs: {strides: [1, 3], dilations: [2, 2], padsBegin: [0, 1], padsEnd: [0, 0], filterShape: [3, 3]}},
  {name: 'one src channel 2×11 (a tap block of 8 overhangs the kernel)', input: [2, 5, 20, 1], outputDelta: [2, 4, 15, 8],
    attrs: {strides: [1, 1], padsBegin: [0, 2], padsEnd: [0, 3], filterShape: [2, 11]}, oneChannelLoops: true},
  {name: 'one src channel 1-D, kernel wider than the input', input: [3, 4, 1], outputDelta: [3, 4, 4],
    attrs: {strides: [1], padsBegin: [3], padsEnd: [3], filterShape: [7]}, oneChannelLoops: true},
  {name: 'one src channel 3-D', input: [1, 4, 5, 6, 1], outputDelta: [1, 4, 5, 6, 4],
    attrs: {strides: [1, 1, 1], autoPad: 'same_lower', filterShape: [2, 3, 3]}},
  {name: 'one src channel 5×5 valid, even width (whole rows: no tested ends)', input: [2, 10, 12, 1], outputDelta: [2, 6, 8, 8],
   attrs: {strides: [1, 1], autoPad: 'valid', filterShape: [5, 5]}, wholeRows: true},
  {name: 'one src channel 5×5 valid, odd width (tested ends)', input: [2, 10, 11, 1], outputDelta: [2, 6, 7, 8],
   attrs: {strides: [1, 1], autoPad: 'valid', filterShape: [5, 5]}, wholeRows: false},
  {name: 'dense 3×3 valid, even width, 8→8 (whole rows: no half-texel steps)', input: [2, 7, 10, 8], outputDelta: [2, 5, 8, 8],
   attrs: {strides: [1, 1], autoPad: 'valid', filterShape: [3, 3]}, wholeRows: true},
  {name: 'dense 3×3 valid, stride 2, even width, the last src column unread', input: [1, 9, 10, 4], outputDelta: [1, 4, 4, 8],
   attrs: {strides: [2, 2], autoPad: 'valid', filterShape: [3, 3]}, wholeRows: true},
  {name: 'depthwise 3×3 valid, rows of 10 one by one (whole rows)', input: [2, 5, 12, 4], outputDelta: [2, 3, 10, 4],
   attrs: {strides: [1, 1], autoPad: 'valid', groups: 4, filterShape: [3, 3]}, segments: 'rows', wholeRows: true},
  {name: 'channel texels: dense rows, 3→5 (half pairs on both sides), split', input: [6, 4, 6, 3], outputDelta: [6, 4, 6, 5],
    attrs: {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3]}, denseRows: true, denseRowsSplits: true, arrangement: 'channel texels'},
  {name: 'channel texels transposed ([k, O, C], XOI): dense rows, 5→3', op: 'ConvTransposeBackpropFilters', input: [4, 4, 6, 3],
    outputDelta: [4, 4, 6, 5], attrs: {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3], filterFormat: 'XOI'},
    denseRows: true, arrangement: 'channel texels'},
  {name: 'channel texels: dense loops 1×1, 1-D, 6→7', input: [4, 9, 6], outputDelta: [4, 9, 7], attrs: {strides: [1], filterShape: [1]},
    arrangement: 'channel texels'},
  {name: 'channel texels: dense loops, groups 2 (4→6 each)', input: [2, 6, 6, 8], outputDelta: [2, 6, 6, 12],
    attrs: {strides: [1, 1], autoPad: 'same_upper', groups: 2, filterShape: [3, 3]}, arrangement: 'channel texels'},
  {name: 'elements: dense rows with the kernel innermost (OIX)', input: [2, 4, 6, 4], outputDelta: [2, 4, 6, 6],
    attrs: {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3], filterFormat: 'OIX'}, denseRows: true, arrangement: 'elements'},
  {name: 'elements: dense loops 3-D', input: [1, 3, 4, 6, 4], outputDelta: [1, 3, 4, 6, 6],
    attrs: {strides: [1, 1, 1], autoPad: 'same_upper', filterShape: [2, 3, 3]}, arrangement: 'elements'},
  {name: 'one-channel rows: 5×5 valid, 1→8 (MNIST\'s first layer: kernel rows in blocks of 2, 2 and 1)', input: [2, 12, 12, 1],
    outputDelta: [2, 8, 8, 8], attrs: {strides: [1, 1], filterShape: [5, 5]}, oneChannelRows: true},
  {name: 'one-channel rows: stride 2, odd diffDst width (packed blocks), 1→6', input: [2, 7, 12, 1], outputDelta: [2, 3, 5, 6],
    attrs: {strides: [2, 2], filterShape: [3, 3]}, oneChannelRows: 'packed'},
  {name: 'one-channel rows: dilation 2 along the row, pads, 1→5 (a half pair)', input: [1, 6, 16, 1], outputDelta: [1, 6, 16, 5],
    attrs: {strides: [1, 1], dilations: [1, 2], padsBegin: [1, 2], padsEnd: [1, 2], filterShape: [3, 3]}, oneChannelRows: true},
  {name: 'one-channel rows: kernel rows wholly in the pads', input: [1, 3, 8, 1], outputDelta: [1, 7, 8, 4],
    attrs: {strides: [1, 1], dilations: [2, 1], padsBegin: [3, 1], padsEnd: [3, 1], filterShape: [2, 3]}, oneChannelRows: true},
  {name: 'one-channel rows: 1-D, stride 2, kernel 4', input: [3, 16, 1], outputDelta: [3, 8, 4],
    attrs: {strides: [2], padsBegin: [1], padsEnd: [1], filterShape: [4]}, oneChannelRows: true},
  {name: 'one-channel rows: transposed, stride 2', op: 'ConvTransposeBackpropFilters', input: [2, 4, 4, 6], outputDelta: [2, 8, 8, 1],
    attrs: {strides: [2, 2], filterShape: [2, 2]}, oneChannelRows: true},
  {name: 'one-channel rows: dilation 8 along the row: src texel 1 passed by the first steps, first read by the third', input: [2, 3, 16, 1],
    outputDelta: [2, 2, 8, 4], attrs: {strides: [1, 1], dilations: [1, 8], filterShape: [2, 2]}, oneChannelRows: true},
  {name: 'one src channel transposed, stride 2', op: 'ConvTransposeBackpropFilters', input: [2, 4, 5, 6], outputDelta: [2, 8, 10, 1],
    attrs: {strides: [2, 2], filterShape: [2, 3], padsBegin: [0, 1], padsEnd: [0, 0]}},
];

const ENVIRONMENTS = [
  {name: 'webgl2 packed', flags: {WEBGL_VERSION: 2, ...packing(true)}},
  {name: 'webgl2 unpacked inputs', flags: {WEBGL_VERSION: 2, ...packing(false)}},
  // Inputs folded (views longer than 2 × 64 rows); the targets stay within the limit.
  {name: 'max texture size 64', flags: {WEBGL_VERSION: 2, ...packing(true), WEBGL_MAX_TEXTURE_SIZE: 64}},
];

const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1);

for (const environment of ENVIRONMENTS) {
  describe(`webgl multi-target passes, ${environment.name}:`, () => {
    const backendName = `webgl-wide-${environment.name.replace(/\W+/g, '-')}`;
    const place = (values: Float32Array, shape: number[]) => tf.tidy(() => tf.mul(tf.tensor(values, shape), 1));

    useWebglBackend(backendName, {...environment.flags, [CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET]: true});

    for (const problem of PROBLEMS) {
      it(problem.name, () => {
        const transposed = problem.op === 'ConvTransposeBackpropFilters';
        const [srcShape, diffDstShape] = transposed ? [problem.outputDelta, problem.input] : [problem.input, problem.outputDelta];
        const geometry = computeGeometry(
            transposed ? 'ConvTransposeBackpropFilters' : 'ConvolutionBackpropFilters',
            {input: {shape: problem.input, dtype: 'float32'}, outputDelta: {shape: problem.outputDelta, dtype: 'float32'}},
            problem.attrs);
        const maxTextureSize = tf.env().getNumber('WEBGL_MAX_TEXTURE_SIZE');
        expect(planDenseLoops(geometry, 8, maxTextureSize) ?? planDepthwiseLoops(geometry, 8, maxTextureSize, false) ??
               planOneChannelLoops(geometry, 8, maxTextureSize)).not.toBeNull();
        if (problem.wholeRows !== undefined) {
          expect(wholeRowSteps(geometry, {blockRows: 0})).withContext('whole rows').toBe(problem.wholeRows);
        }
        if (problem.segments !== undefined) {
          const segments = planDepthwiseLoops(geometry, 8, maxTextureSize, false)?.segments;
          expect(segments == null ? 'rows' : segments.continuous ? 'continuous' : 'row starts').withContext('rows in segments')
              .toBe(problem.segments);
        }
        // An op's packed output of odd width W is packed in blocks of W rows (oddBlockRows in filter_gradient_kernel.ts).
        const packed = tf.env().getBool('WEBGL_PACK');
        const blockRowsOf = (shape: number[]) => {
          const width = shape[shape.length - 2];
          return packed && width % 2 === 1 ? width : 0;
        };
        const blockRows = {src: blockRowsOf(srcShape), diffDst: blockRowsOf(diffDstShape)};
        if (problem.depthwiseRows !== undefined) {
          expect(planDepthwiseRows(geometry, 8, maxTextureSize, blockRows) !== null).withContext('depthwise rows')
              .toBe(problem.depthwiseRows === true || (problem.depthwiseRows === 'packed' && packed));
        }
        if (problem.oneChannelRows !== undefined) {
          expect(planOneChannelRows(geometry, 8, maxTextureSize, blockRows.diffDst) !== null)
              .withContext('one-channel rows').toBe(problem.oneChannelRows === true || (problem.oneChannelRows === 'packed' && packed));
        }
        if (problem.kernelRowsInside !== undefined) {
          expect(kernelRowsAlwaysInside(spatialAxesAs3d(geometry.axes)[1])).withContext('kernel rows always inside')
              .toBe(problem.kernelRowsInside);
        }
        const minReads = tuningFlag(CONV_BACKPROP_FILTERS_WEBGL_DENSE_ROWS_MIN_FRAGMENT_READS, DENSE_ROWS_MIN_FRAGMENT_READS);
        if (problem.denseRowsSplits) tf.env().set(CONV_BACKPROP_FILTERS_WEBGL_DENSE_ROWS_MIN_FRAGMENT_READS, 0);
        if (problem.denseRows !== undefined) {
          const dense = planDenseRows(geometry, 8, maxTextureSize, blockRows);
          expect(dense !== null).withContext('dense rows').toBe(problem.denseRows === true || (problem.denseRows === 'packed' && packed));
          if (dense !== null && problem.denseRowsSplits) expect(dense.plan.splits).withContext('dense rows\' splits').toBeGreaterThan(1);
        }
        const inputValues = seededValues(size(problem.input), 7);
        const outputDeltaValues = seededValues(size(problem.outputDelta), 8);
        expect(srcShape.length).toBe(diffDstShape.length);
        const expected = referenceForCall(
            transposed, {shape: problem.input, values: inputValues}, {shape: problem.outputDelta, values: outputDeltaValues},
            problem.attrs as CallAttrs).values;
        const input = place(inputValues, problem.input);
        const outputDelta = place(outputDeltaValues, problem.outputDelta);
        const gl = (tf.backend() as MathBackendWebGL).gpgpu.gl as WebGL2RenderingContext;
        const drawBuffers = spyOn(gl, 'drawBuffers').and.callThrough();
        const unpack = spyOn(tf.backend() as MathBackendWebGL, 'unpackTensor').and.callThrough();
        const programs = spyOn(tf.backend() as MathBackendWebGL, 'runWebGLProgram').and.callThrough();
        const before = resourceCounts();
        // The step loops of dense loops, depthwise loops and one-channel loops run here even where a row pass would take the problem.
        const rowPasses = [CONV_BACKPROP_FILTERS_WEBGL_DEPTHWISE_ROWS_WIDTH, CONV_BACKPROP_FILTERS_WEBGL_DENSE_ROWS_WIDTH,
                           CONV_BACKPROP_FILTERS_WEBGL_ONE_CHANNEL_ROWS_WIDTH];
        const widest = rowPasses.map(flag => tuningFlag(flag, WRITTEN_ROWS_MAX_WIDTH));
        if (problem.segments !== undefined || problem.wholeRows !== undefined || problem.oneChannelLoops) {
          for (const flag of rowPasses) tf.env().set(flag, 0);
        }
        let result: tf.Tensor;
        try {
          result = transposed ? convTransposeBackpropFilters(input, outputDelta, problem.attrs) :
                                convolutionBackpropFilters(input, outputDelta, problem.attrs as ConvolutionBackpropFiltersAttrs);
        } finally {
          rowPasses.forEach((flag, i) => tf.env().set(flag, widest[i]));
          tf.env().set(CONV_BACKPROP_FILTERS_WEBGL_DENSE_ROWS_MIN_FRAGMENT_READS, minReads);
        }
        expect(drawBuffers.calls.allArgs().some(([buffers]) => Array.from(buffers).length > 1))
            .withContext('the multi-target draw ran').toBe(true);
        // Packed inputs (outputs of a packed op) are read in place, odd widths included.
        if (tf.env().getBool('WEBGL_PACK')) expect(unpack).withContext('inputs unpacked').not.toHaveBeenCalled();
        expectClose(result.dataSync(), expected, problem.name, 1e-4, 1e-4);
        if (problem.arrangement !== undefined) {
          const names = programs.calls.allArgs().map(([program]) => program.constructor.name);
          expect(names).toContain(problem.arrangement === 'channel texels' ? 'ArrangeChannelTexelsProgram' : 'ArrangeTargetsProgram');
        }
        // A packed op reading the result's texels whole, the lanes past an odd channel count included.
        const doubled = tf.mul(result, 2);
        expectClose(doubled.dataSync(), expected.map(value => 2 * value), `${problem.name}, doubled`, 2e-4, 1e-4);
        tf.dispose([result, doubled]);
        expect(resourceCounts()).toEqual(before);
        tf.dispose([input, outputDelta]);
      });
    }

    if (environment === ENVIRONMENTS[0]) {
      it('writes 0 into the lanes of the packed result past an odd channel count (channel texels)', () => {
        // src made by tf.add(…, 1): its packed texture's lanes past the third channel hold 1, so
        // the targets' lanes past it hold products; the result's must still be 0.
        const attrs = {strides: [1, 1], autoPad: 'same_upper' as const, filterShape: [3, 3]};
        const inputShape = [2, 4, 6, 3];
        const outputDeltaShape = [2, 4, 6, 5];
        const inputValues = seededValues(size(inputShape), 21);
        const outputDeltaValues = seededValues(size(outputDeltaShape), 22);
        const input = tf.add(tf.tensor(inputValues, inputShape), 1);
        const outputDelta = place(outputDeltaValues, outputDeltaShape);
        const expected = referenceForCall(
            false, {shape: inputShape, values: inputValues.map(value => value + 1)}, {shape: outputDeltaShape, values: outputDeltaValues},
            attrs).values;
        const backend = tf.backend() as MathBackendWebGL;
        const result = convolutionBackpropFilters(input, outputDelta, attrs);
        const data = backend.texData.get(result.dataId);
        expect(data.isPacked).toBe(true);
        // [3 · 3 batches of 2 × 3 texels] ([C, O] = [3, 5] matrices, one below the other).
        const [texelRows, texelColumns] = [9 * 2, 3];
        expect(data.texShape).toEqual([2 * texelRows, 2 * texelColumns]);
        const lanes = backend.gpgpu.downloadMatrixFromPackedTexture(data.texture!.texture, texelRows, texelColumns);
        let past = 0;
        for (let row = 0; row < texelRows; row++) {
          for (let column = 0; column < texelColumns; column++) {
            for (let lane = 0; lane < 4; lane++) {
              const c = 2 * (row % 2) + (lane >> 1);
              const o = 2 * column + (lane & 1);
              if (c >= 3 || o >= 5) {
                past++;
                expect(lanes[(row * texelColumns + column) * 4 + lane]).withContext(`texel (${row}, ${column}) lane ${lane}`).toBe(0);
              }
            }
          }
        }
        expect(past).toBe(9 * (4 * 6 - 3 * 5));
        expectClose(result.dataSync(), expected, 'odd channels', 1e-4, 1e-4);
        tf.dispose([input, outputDelta, result]);
      });

      // As runWebGLProgram does for tfjs's programs.
      const problem = PROBLEMS[0];
      const multiTargetDraws = (drawBuffers: jasmine.Spy) =>
          drawBuffers.calls.allArgs().filter(([buffers]) => Array.from(buffers as number[]).length > 1).length;

      it('keeps NaN and ±Infinity exact in depthwise loops whose rows run in segments (taps past a row\'s end are skipped)', () => {
        // Non-finite src values at both ends of rows: a step at a row's end reads the texels of
        // the next row (or image), which must add nothing, not 0 · Infinity.
        const attrs = {strides: [1, 1], autoPad: 'same_upper' as const, groups: 4, filterShape: [3, 3]};
        const inputShape = [2, 4, 6, 4];
        const geometry = computeGeometry('ConvolutionBackpropFilters',
            {input: {shape: inputShape, dtype: 'float32'}, outputDelta: {shape: inputShape, dtype: 'float32'}}, attrs);
        expect(planDepthwiseLoops(geometry, 8, tf.env().getNumber('WEBGL_MAX_TEXTURE_SIZE'), false)?.segments?.continuous).toBe(true);
        const inputValues = seededValues(size(inputShape), 11);
        inputValues[(0 * 6 + 0) * 4 + 1] = Infinity;      // image 0, row 0, column 0, channel 1
        inputValues[(1 * 6 + 5) * 4 + 2] = -Infinity;     // image 0, row 1, column 5, channel 2
        inputValues[((4 + 2) * 6 + 0) * 4 + 3] = NaN;     // image 1, row 2, column 0, channel 3
        inputValues[((4 + 3) * 6 + 5) * 4 + 0] = Infinity;  // image 1, row 3, column 5, channel 0
        const outputDeltaValues = seededValues(size(inputShape), 12);
        const expected = referenceForCall(
            false, {shape: inputShape, values: inputValues}, {shape: inputShape, values: outputDeltaValues}, attrs).values;
        const input = place(inputValues, inputShape);
        const outputDelta = place(outputDeltaValues, inputShape);
        const result = convolutionBackpropFilters(input, outputDelta, attrs);
        const actual = result.dataSync();
        let finite = 0;
        for (let i = 0; i < expected.length; i++) {
          if (Number.isFinite(expected[i])) {
            finite++;
            expect(Math.abs(actual[i] - expected[i])).withContext(`element ${i}`).toBeLessThanOrEqual(1e-4 + 1e-4 * Math.abs(expected[i]));
          } else {
            expect(actual[i]).withContext(`element ${i}`).toEqual(expected[i]);
          }
        }
        // The taps that never read a non-finite value inside the image come out finite: of each
        // channel's 9, 5 for a value at a corner (channels 0, 1), 3 at the middle of an edge.
        expect(finite).toBe(16);
        tf.dispose([input, outputDelta, result]);
      });

      // Non-finite diffDst values where some taps meet a pad (3 × 3, same padding, 4 × 4 images):
      // row 0 (kernel row 0 above the image, its src row read clamped), row 3 (kernel row 2
      // below), column 0 (tap 0 left of it). Of diffDst channels 1-3's 9 taps each (with each src
      // channel), the 3 that meet their special only in a pad stay finite.
      const rowPassSpecials = [
        {pass: 'depthwise rows', srcChannels: 4, groups: 4, plan: planDepthwiseRows, seed: 15},
        {pass: 'dense rows', srcChannels: 2, groups: 1, plan: planDenseRows, seed: 17},
        {pass: 'one-channel rows', srcChannels: 1, groups: 1, seed: 19,
          plan: (geometry: ReturnType<typeof computeGeometry>, maxTargets: number, maxTextureSize: number,
                 blockRows: {src: number; diffDst: number}) => planOneChannelRows(geometry, maxTargets, maxTextureSize, blockRows.diffDst)},
      ];
      for (const {pass, srcChannels, groups, plan, seed} of rowPassSpecials) {
        it(`keeps NaN and ±Infinity exact in ${pass} (kernel rows in the pads and taps past a row's ends add nothing)`, () => {
          const attrs = {strides: [1, 1], autoPad: 'same_upper' as const, groups, filterShape: [3, 3]};
          const inputShape = [2, 4, 4, srcChannels];
          const outputDeltaShape = [2, 4, 4, 4];
          const geometry = computeGeometry('ConvolutionBackpropFilters',
              {input: {shape: inputShape, dtype: 'float32'}, outputDelta: {shape: outputDeltaShape, dtype: 'float32'}}, attrs);
          expect(plan(geometry, 8, tf.env().getNumber('WEBGL_MAX_TEXTURE_SIZE'), {src: 0, diffDst: 0})).not.toBeNull();
          const inputValues = seededValues(size(inputShape), seed);
          const outputDeltaValues = seededValues(size(outputDeltaShape), seed + 1);
          outputDeltaValues[(0 * 4 + 1) * 4 + 1] = Infinity;           // image 0, row 0, column 1, channel 1
          outputDeltaValues[((4 + 3) * 4 + 2) * 4 + 2] = -Infinity;    // image 1, row 3, column 2, channel 2
          outputDeltaValues[(2 * 4 + 0) * 4 + 3] = NaN;                // image 0, row 2, column 0, channel 3
          const expected = referenceForCall(
              false, {shape: inputShape, values: inputValues}, {shape: outputDeltaShape, values: outputDeltaValues}, attrs).values;
          const input = place(inputValues, inputShape);
          const outputDelta = place(outputDeltaValues, outputDeltaShape);
          const result = convolutionBackpropFilters(input, outputDelta, attrs);
          expect(compareWithReference(result.dataSync(), expected, 1e-4, 1e-4)).toBeUndefined();
          const srcChannelsPerGroup = srcChannels / groups;
          expect(Array.from(expected).filter(Number.isFinite).length).toBe(srcChannelsPerGroup * (9 + 3 * 3));
          tf.dispose([input, outputDelta, result]);
        });
      }

      it('makes a row pass\'s text once per key: the same string at another batch size, another text at another width', () => {
        const textOf = (batch: number, width: number) => {
          const attrs = {strides: [1, 1], autoPad: 'same_upper' as const, groups: 4, filterShape: [3, 3]};
          const shape = [batch, 6, width, 4];
          const geometry = computeGeometry('ConvolutionBackpropFilters',
              {input: {shape, dtype: 'float32'}, outputDelta: {shape, dtype: 'float32'}}, attrs);
          const rows = planDepthwiseRows(geometry, 8, 4096, {src: 0, diffDst: 0})!;
          const texture = {texShape: [batch * 6 * width, 4], columns: 4, folded: false, blockRows: 0};
          const program = depthwiseRowsProgram(geometry, rows, {src: texture, diffDst: texture});
          return {source: program.source, uniforms: JSON.stringify(program.uniforms)};
        };
        const [first, otherBatch, otherWidth] = [textOf(2, 8), textOf(3, 8), textOf(2, 10)];
        expect(otherBatch.source).toBe(first.source);
        expect(otherBatch.uniforms).not.toBe(first.uniforms);
        expect(otherWidth.source).not.toBe(first.source);
      });

      it('keeps a NaN in src out of the taps that do not read it where diffDst rows are one position, packed in blocks of one row', () => {
        // The transposed op's diffDst (its input, made by a packed op) has rows of width 1, which
        // tfjs packs in blocks of one row, each padded to two; a row sweep that counted the row's
        // one position as two view rows multiplied the pad row by src's next position (fuzz seed
        // 61, problem 236).
        const attrs = {strides: [1], autoPad: 'valid' as const, filterShape: [2]};
        const inputShape = [2, 1, 5];
        const outputDeltaShape = [2, 2, 3];
        const geometry = computeGeometry('ConvTransposeBackpropFilters',
            {input: {shape: inputShape, dtype: 'float32'}, outputDelta: {shape: outputDeltaShape, dtype: 'float32'}}, attrs);
        expect(planDenseLoops(geometry, 8, tf.env().getNumber('WEBGL_MAX_TEXTURE_SIZE'))).not.toBeNull();
        const inputValues = seededValues(size(inputShape), 13);
        const outputDeltaValues = seededValues(size(outputDeltaShape), 14);
        outputDeltaValues[3] = NaN;        // image 0, position 1, channel 0: only tap 1 reads it
        outputDeltaValues[6 + 5] = -Infinity;  // image 1, position 1, channel 2
        const expected = referenceForCall(
            true, {shape: inputShape, values: inputValues}, {shape: outputDeltaShape, values: outputDeltaValues}, attrs).values;
        const input = place(inputValues, inputShape);
        const outputDelta = place(outputDeltaValues, outputDeltaShape);
        const result = convTransposeBackpropFilters(input, outputDelta, attrs);
        expect(compareWithReference(result.dataSync(), expected, 1e-4, 1e-4)).toBeUndefined();
        tf.dispose([input, outputDelta, result]);
      });

      it('times the multi-target draw under tf.time / tf.profile, by program name', async () => {
        const backend = tf.backend() as MathBackendWebGL;
        const input = place(seededValues(size(problem.input), 7), problem.input);
        const outputDelta = place(seededValues(size(problem.outputDelta), 8), problem.outputDelta);
        let timed: string[] = [];
        await backend.time(() => {
          tf.dispose(convolutionBackpropFilters(input, outputDelta, problem.attrs as ConvolutionBackpropFiltersAttrs));
          const timers = (backend as unknown as {activeTimers: Array<{name: string}>}).activeTimers;
          timed = timers.map(timer => timer.name);
        });
        expect(timed).toContain('DenseRowsProgram');
        expect(timed).toContain('ArrangeChannelTexelsProgram');
        tf.dispose([input, outputDelta]);
      });

      it('compiles but does not draw under ENGINE_COMPILE_ONLY', () => {
        const gl = (tf.backend() as MathBackendWebGL).gpgpu.gl as WebGL2RenderingContext;
        // A tile shape no other spec here compiles (1 × 4 channel pairs).
        const attrs = {strides: [1, 1], filterShape: [3, 3]};
        const input = place(seededValues(4 * 4 * 2, 3), [1, 4, 4, 2]);
        const outputDelta = place(seededValues(2 * 2 * 8, 4), [1, 2, 2, 8]);
        const drawBuffers = spyOn(gl, 'drawBuffers').and.callThrough();
        const compiled = multiTargetProgramCount((tf.backend() as MathBackendWebGL).gpgpu);
        tf.env().set('ENGINE_COMPILE_ONLY', true);
        try {
          tf.dispose(convolutionBackpropFilters(input, outputDelta, attrs));
        } finally {
          tf.env().set('ENGINE_COMPILE_ONLY', false);
        }
        // tfjs's protocol after a compile-only pass, for its own programs (here the arrangement).
        (tf.backend() as MathBackendWebGL).checkCompileCompletion();
        (tf.backend() as MathBackendWebGL).getUniformLocations();
        expect(multiTargetProgramCount((tf.backend() as MathBackendWebGL).gpgpu)).toBe(compiled + 1);
        expect(multiTargetDraws(drawBuffers)).toBe(0);
        // The compiled program then draws, and is not compiled again.
        const expected = referenceForCall(
            false, {shape: [1, 4, 4, 2], values: input.dataSync()}, {shape: [1, 2, 2, 8], values: outputDelta.dataSync()}, attrs).values;
        const result = convolutionBackpropFilters(input, outputDelta, attrs);
        expect(multiTargetDraws(drawBuffers)).toBe(1);
        expect(multiTargetProgramCount((tf.backend() as MathBackendWebGL).gpgpu)).toBe(compiled + 1);
        expectClose(result.dataSync(), expected, 'after compile-only', 1e-4, 1e-4);
        tf.dispose([input, outputDelta, result]);
      });
    }

    if (environment === ENVIRONMENTS[2]) {
      // A target row holds every kernel offset (block) of every tile: past 64 texels the passes
      // cannot run, and the single-target program must take over, as exact. (Every tensor here
      // stays within the 64 × 64 texels an unpacked texture may have.)
      const tooWide: Problem[] = [
        {name: 'dense 16→2, 9×9: 81 offsets a tile row, 8 src pairs × 9 kernel rows', input: [1, 9, 7, 16], outputDelta: [1, 9, 7, 2],
          attrs: {strides: [1, 1], autoPad: 'same_upper', filterShape: [9, 9]}},
        {name: 'depthwise 160 channels, 3×3: 20 blocks of 4 pairs × 3 rows, 80 pairs down a split', input: [1, 3, 4, 160],
          outputDelta: [1, 3, 4, 160], attrs: {strides: [1, 1], autoPad: 'same_upper', groups: 160, filterShape: [3, 3]}},
      ];
      for (const problem of tooWide) {
        it(`falls back to the single-target program when the targets would pass 64 texels a side: ${problem.name}`, () => {
          const geometry = computeGeometry('ConvolutionBackpropFilters',
              {input: {shape: problem.input, dtype: 'float32'}, outputDelta: {shape: problem.outputDelta, dtype: 'float32'}}, problem.attrs);
          expect(planDenseLoops(geometry, 8, 64)).toBeNull();
          expect(planDepthwiseLoops(geometry, 8, 64, false)).toBeNull();
          expect(planDenseRows(geometry, 8, 64, {src: 7, diffDst: 7})).toBeNull();
          expect(planDepthwiseRows(geometry, 8, 64, {src: 7, diffDst: 7})).toBeNull();
          const inputValues = seededValues(size(problem.input), 5);
          const outputDeltaValues = seededValues(size(problem.outputDelta), 6);
          const expected = referenceForCall(
              false, {shape: problem.input, values: inputValues}, {shape: problem.outputDelta, values: outputDeltaValues},
              problem.attrs as CallAttrs).values;
          const input = place(inputValues, problem.input);
          const outputDelta = place(outputDeltaValues, problem.outputDelta);
          const gl = (tf.backend() as MathBackendWebGL).gpgpu.gl as WebGL2RenderingContext;
          const drawBuffers = spyOn(gl, 'drawBuffers').and.callThrough();
          const result = convolutionBackpropFilters(input, outputDelta, problem.attrs as ConvolutionBackpropFiltersAttrs);
          expect(drawBuffers.calls.allArgs().some(([buffers]) => Array.from(buffers).length > 1))
              .withContext('the multi-target draw ran').toBe(false);
          expectClose(result.dataSync(), expected, problem.name, 1e-4, 1e-4);
          tf.dispose([input, outputDelta, result]);
        });
      }
    }
  });
}

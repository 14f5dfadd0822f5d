/**
 * Random valid problems for the differential fuzzer: both ops, rank 1–3, every attribute and
 * format, the filter shape given every way, every entry point. A problem is a plain FuzzSpec
 * (small integers and strings), so it can be shrunk, printed and regenerated from its seed.
 *
 * Distributions (per problem, independently unless said):
 * - op: ConvolutionBackpropFilters or ConvTransposeBackpropFilters, 1:1.
 * - spatial rank 1 / 2 / 3: 30 / 45 / 25 %; kernel 1–5 / 1–4 / 1–3 per axis.
 * - size class small / medium: 75 / 25 %. Spatial size of `input` per axis, small: 1–12 / 1–7 /
 *   1–5 for the convolution, 1–8 / 1–5 / 1–4 for the transposed op (its outputDelta is
 *   ~stride× larger); medium: 1–40 / 1–14 / 1–8 and 1–20 / 1–8 / 1–5. M = 5 (small) or 8 (medium).
 * - batch 1 / 2 / 3 / 0: 50 / 30 / 18 / 2 %.
 * - channels: plain (groups 1, 1–M channels each side) 45 %; grouped (groups 2–3, 1–(M−2)
 *   channels per group each side) 25 %; depthwise (groups = input channels = 1–(M+1), channel
 *   multiplier 1–3 on the outputDelta side) 30 %.
 * - strides 1 / 2 / 3 / 4 / 5: 40 / 30 / 20 / 7 / 3 % per axis (stride > kernel is common);
 *   dilations 1 / 2 / 3: 60 / 25 / 15 %; each pad (begin and end drawn apart) 0 / 1–2 / 3–6:
 *   40 / 40 / 20 % (pads larger than the kernel are common); outputPadding 0 / 1–3: 60 / 40 %.
 * - autoPad: omitted 35 %, 'none' 15 %, same_upper / same_lower / valid 50 % together, spelt
 *   lower case, upper case or in random mixed case (1/3 each); explicit pads still given
 *   alongside half the time (they must be ignored).
 * - dataFormat omitted (NXC) / NXC / NCX: 25 / 25 / 50 %; filterFormat omitted (XIO; XOI under
 *   ConvTransposeBackwardWeights) 20 %, else
 *   uniform over the op's formats (XIO, OIX; and IOX, XOI for the transposed op).
 * - filterShape: spatial or full, as the attribute or as the input (a number array or an int32
 *   tensor through the op, an int32 tensor through runKernel), or as the input while the
 *   attribute gives a different shape that must lose: 1/5 each.
 * - entry point: op function with tensors 40 %, with nested-array tensor-likes 10 %,
 *   runKernel under the spec name 25 %, under oneDNN's current name 25 %.
 * - defaults (dilations 1, pads 0, groups 1) are omitted or spelt out, 1:1.
 * - special values, when asked for (GenerateOptions): a share of the problems (20 % by default)
 *   get 1–3 values drawn from NaN, ±Infinity and 0, at random positions of src or of either
 *   tensor.
 * - shape 'strided-tiles' (GenerateOptions, `--shape`): each drawn problem reshaped so src tiles
 *   exactly into strides of diffDst along its two innermost axes (toStridedTiles); shape
 *   'wide-channels': M = 40.
 * Problems whose output would be empty are redrawn, and so are problems over the size caps
 * (MAX_TERMS products in the reference, MAX_ELEMENTS per tensor): the float64 reference is an
 * element-by-element loop.
 */
import {computeGeometry, FilterGradientGeometry} from '../../src/geometry';
import {ConvolutionBackpropFilters, ConvolutionBackwardWeights, ConvTransposeBackpropFilters, ConvTransposeBackwardWeights, OpName} from '../../src/names';
import {fullFilterShape} from '../cases';
import {seededValues} from '../helpers/util';
import {ReferenceAttrs, referenceOutputDeltaShape} from '../reference';
import {Random} from './random';

export type FilterShapeSource =
    'attribute-spatial' | 'attribute-full' | 'input-spatial' | 'input-full' | 'input-over-attribute';
export type EntryPoint = 'op' | 'op-tensor-likes' | 'runKernel' | 'runKernel-alias';
/**
 * Where special values (NaN, ±Infinity, exact zeros) may go: nowhere, only into the tensor read
 * through the sliding window (src: `input` of the convolution, `outputDelta` of the transposed
 * op), or into either tensor.
 */
export type SpecialPlacement = 'none' | 'src' | 'any';

export interface Special {
  tensor: 'input' | 'outputDelta';
  /** Flat index, taken modulo the tensor's size (so a shrunk tensor keeps its specials). */
  index: number;
  value: number;
}

/** Everything that defines one problem; shrinking edits this and materializes it again. */
export interface FuzzSpec {
  transposed: boolean;
  batch: number;
  groups: number;
  /** Omit the groups attribute (only when groups is 1). */
  omitGroups: boolean;
  inputChannelsPerGroup: number;
  outputDeltaChannelsPerGroup: number;
  /** Spatial sizes of `input` (for the transposed op the small side). */
  inputSpatial: number[];
  kernel: number[];
  strides: number[];
  /** Undefined: the attribute is omitted. */
  dilations?: number[];
  padsBegin?: number[];
  padsEnd?: number[];
  outputPadding?: number[];
  autoPad?: string;
  dataFormat?: 'NXC' | 'NCX';
  filterFormat?: string;
  filterShapeSource: FilterShapeSource;
  /** Through the op function: give the filterShape input as an int32 tensor (else a number array). */
  filterShapeAsTensor: boolean;
  entry: EntryPoint;
  specials: Special[];
  /** Seeds of the data: input from dataSeed, outputDelta from dataSeed + 1 (mod 2^32). */
  dataSeed: number;
}

export interface FuzzProblem {
  /** The problem's seed (regenerates it), or undefined for a shrunk problem. */
  seed?: number;
  spec: FuzzSpec;
  op: OpName;
  /** The name runKernel is called with (op or its alias), for runKernel entries. */
  kernelName: string;
  inputShape: number[];
  outputDeltaShape: number[];
  /** The result's shape. */
  filterShape: number[];
  attrs: Record<string, unknown>;
  /** The op's filterShape argument / runKernel's filterShape input. */
  filterShapeInput?: number[];
  referenceAttrs: ReferenceAttrs;
  /** Products the reference sums, a cost measure. */
  terms: number;
}

export interface GenerateOptions {
  specials?: SpecialPlacement;
  /** Share of problems that get special values (when placement is not 'none'). */
  specialRate?: number;
  /** The special values drawn from (default NaN, ±Infinity and 0). */
  specialValues?: readonly number[];
  /**
   * 'strided-tiles': every problem drawn as usual, then reshaped so that its two innermost axes
   * tile src exactly into strides of diffDst (toStridedTiles): the layers the webgpu kernel runs
   * in units of src rows, which random problems hit about twice in 10,000. 'wide-channels':
   * up to 40 channels a side (groups up to 41 when depthwise) instead of 5 or 8: the SIMD
   * kernel's 16-lane depthwise passes and 8-channel tiles, split between tasks at the unit
   * boundaries of 2 or more threads.
   */
  shape?: 'strided-tiles' | 'wide-channels';
}

const MAX_TERMS = 60000;
/** The most channels a side under shape 'wide-channels'. */
const WIDE_CHANNELS = 40;
const MAX_ELEMENTS = 8000;
const CONV_FILTER_FORMATS = ['XIO', 'OIX'];
const TRANSPOSED_FILTER_FORMATS = ['XIO', 'OIX', 'IOX', 'XOI'];
const SPECIAL_VALUES = [NaN, Infinity, -Infinity, 0];

export function size(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

function mixedCase(random: Random, text: string): string {
  const style = random.int(0, 2);
  if (style === 0) return text;
  if (style === 1) return text.toUpperCase();
  return text.split('').map(ch => random.chance(0.5) ? ch.toUpperCase() : ch).join('');
}

function draw(random: Random, options: GenerateOptions): FuzzSpec {
  const transposed = random.chance(0.5);
  const rank = random.weighted([[30, 1], [45, 2], [25, 3]] as const);
  const medium = random.chance(0.25);
  const maxSize = medium ? (transposed ? [20, 8, 5] : [40, 14, 8])[rank - 1] : (transposed ? [8, 5, 4] : [12, 7, 5])[rank - 1];
  const maxKernel = [5, 4, 3][rank - 1];
  const maxChannels = options.shape === 'wide-channels' ? WIDE_CHANNELS : medium ? 8 : 5;
  const axes = (f: () => number) => Array.from({length: rank}, f);
  const channelMode = random.weighted([[45, 'plain'], [25, 'grouped'], [30, 'depthwise']] as const);
  let groups = 1;
  let inputChannelsPerGroup: number;
  let outputDeltaChannelsPerGroup: number;
  if (channelMode === 'plain') {
    inputChannelsPerGroup = random.int(1, maxChannels);
    outputDeltaChannelsPerGroup = random.int(1, maxChannels);
  } else if (channelMode === 'grouped') {
    groups = random.int(2, 3);
    inputChannelsPerGroup = random.int(1, maxChannels - 2);
    outputDeltaChannelsPerGroup = random.int(1, maxChannels - 2);
  } else {
    groups = random.int(1, maxChannels + 1);
    inputChannelsPerGroup = 1;
    outputDeltaChannelsPerGroup = random.int(1, 3);
  }
  const pad = () => random.weighted([[40, 0], [40, random.int(1, 2)], [20, random.int(3, 6)]]);
  const autoPadKind = random.weighted(
      [[35, undefined], [15, 'none'], [17, 'same_upper'], [17, 'same_lower'], [16, 'valid']] as const);
  const autoPad = autoPadKind === undefined ? undefined : mixedCase(random, autoPadKind);
  const explicitPads = autoPadKind === undefined || autoPadKind === 'none' || random.chance(0.5);
  const dilations = axes(() => random.weighted([[60, 1], [25, 2], [15, 3]]));
  const padsBegin = axes(pad);
  const padsEnd = axes(pad);
  const outputPadding = axes(() => random.chance(0.6) ? 0 : random.int(1, 3));
  const formats = transposed ? TRANSPOSED_FILTER_FORMATS : CONV_FILTER_FORMATS;
  const specials: Special[] = [];
  const placement = options.specials ?? 'none';
  if (placement !== 'none' && random.chance(options.specialRate ?? 0.2)) {
    const count = random.int(1, 3);
    const src = transposed ? 'outputDelta' : 'input';
    for (let i = 0; i < count; i++) {
      specials.push({
        tensor: placement === 'src' ? src : random.pick(['input', 'outputDelta'] as const),
        index: random.int(0, 2 ** 31 - 1),
        value: random.pick(options.specialValues ?? SPECIAL_VALUES),
      });
    }
  }
  const batch = random.weighted([[50, 1], [30, 2], [18, 3], [2, 0]] as const);
  return {
    transposed,
    batch,
    groups,
    omitGroups: groups === 1 && random.chance(0.5),
    inputChannelsPerGroup,
    outputDeltaChannelsPerGroup,
    inputSpatial: axes(() => random.int(1, maxSize)),
    kernel: axes(() => random.int(1, maxKernel)),
    strides: axes(() => random.weighted([[40, 1], [30, 2], [20, 3], [7, 4], [3, 5]])),
    dilations: dilations.every(d => d === 1) && random.chance(0.5) ? undefined : dilations,
    padsBegin: explicitPads && !(padsBegin.every(p => p === 0) && random.chance(0.5)) ? padsBegin : undefined,
    padsEnd: explicitPads && !(padsEnd.every(p => p === 0) && random.chance(0.5)) ? padsEnd : undefined,
    outputPadding: transposed && !(outputPadding.every(p => p === 0) && random.chance(0.5)) ? outputPadding : undefined,
    autoPad,
    dataFormat: random.weighted([[25, undefined], [25, 'NXC'], [50, 'NCX']] as const),
    filterFormat: random.chance(0.2) ? undefined : random.pick(formats),
    filterShapeSource: random.pick(
        ['attribute-spatial', 'attribute-full', 'input-spatial', 'input-full', 'input-over-attribute'] as const),
    filterShapeAsTensor: random.chance(0.5),
    entry: batch === 0 ? random.pick(['op', 'runKernel'] as const) :
                         random.weighted([[40, 'op'], [10, 'op-tensor-likes'], [25, 'runKernel'], [25, 'runKernel-alias']] as const),
    specials,
    dataSeed: random.seed(),
  };
}

/**
 * A drawn spec reshaped so that along its two innermost axes (a rank-1 problem gains an outer
 * axis) src tiles exactly into strides of diffDst — stride s of 1, 2 or 3, no dilation, a begin
 * pad b of 0 (half the axes) or 1 … max(1, s − 1), a kernel k in (b, 2s + 1], src = s × diffDst
 * (diffDst 1–8 along an axis, 9–16 for a quarter of the 2-D heights; the end pad and the transposed op's
 * outputPadding to match) — with 1 to 3 channels a group on either side, so
 * diffDst's take one invocation each on webgpu. Everything else (op, outer axis, batch, groups,
 * layouts, entry point, specials, data) stays as drawn; pads are explicit, autoPad left out.
 */
function toStridedTiles(spec: FuzzSpec, random: Random): FuzzSpec {
  const drawnRank = spec.inputSpatial.length;
  const rank = Math.max(2, drawnRank);
  const drawn = <T>(list: T[] | undefined, axis: number, fallback: T) => {
    const i = axis - (rank - drawnRank);
    return list !== undefined && i >= 0 ? list[i] : fallback;
  };
  const inputSpatial: number[] = [], kernel: number[] = [], strides: number[] = [], dilations: number[] = [];
  const padsBegin: number[] = [], padsEnd: number[] = [], outputPadding: number[] = [];
  for (let axis = 0; axis < rank; axis++) {
    if (axis < rank - 2) {
      inputSpatial.push(drawn(spec.inputSpatial, axis, 1));
      kernel.push(drawn(spec.kernel, axis, 1));
      strides.push(drawn(spec.strides, axis, 1));
      dilations.push(drawn(spec.dilations, axis, 1));
      padsBegin.push(drawn(spec.padsBegin, axis, 0));
      padsEnd.push(drawn(spec.padsEnd, axis, 0));
      outputPadding.push(0);
      continue;
    }
    const stride = random.weighted([[25, 1], [45, 2], [30, 3]] as const);
    // Heights above 8 (a quarter of 2-D problems) give units that start mid-image.
    const size = rank === 2 && axis === 0 && random.chance(0.25) ? random.int(9, 16) : random.int(1, rank === 3 ? 4 : 8);
    const padBegin = random.chance(0.5) ? 0 : random.int(1, Math.max(1, stride - 1));
    const k = random.int(padBegin + 1, 2 * stride + 1);
    const extra = spec.transposed ? random.int(Math.max(0, stride + padBegin - k), stride - 1) : 0;
    inputSpatial.push(spec.transposed ? size : stride * size);
    kernel.push(k);
    strides.push(stride);
    dilations.push(1);
    padsBegin.push(padBegin);
    padsEnd.push(spec.transposed ? k - stride - padBegin + extra : random.int(Math.max(0, k - stride - padBegin), k - 1 - padBegin));
    outputPadding.push(extra);
  }
  const channels = () => random.int(1, 3);
  return {
    ...spec, inputSpatial, kernel, strides, dilations, padsBegin, padsEnd, autoPad: undefined,
    outputPadding: spec.transposed ? outputPadding : undefined,
    inputChannelsPerGroup: channels(), outputDeltaChannelsPerGroup: channels(), omitGroups: false,
  };
}

/** The problem a spec describes, or undefined when its output would be empty. */
export function materialize(spec: FuzzSpec, seed?: number): FuzzProblem | undefined {
  const {transposed, groups, kernel} = spec;
  const rank = spec.inputSpatial.length;
  if ([kernel, spec.strides, spec.dilations, spec.padsBegin, spec.padsEnd, spec.outputPadding].some(
          list => list !== undefined && list.length !== rank)) {
    return undefined;
  }
  const inputChannels = groups * spec.inputChannelsPerGroup;
  const outputDeltaChannels = groups * spec.outputDeltaChannelsPerGroup;
  const dataFormat = spec.dataFormat ?? 'NXC';
  const inputShape = dataFormat === 'NXC' ? [spec.batch, ...spec.inputSpatial, inputChannels] :
                                            [spec.batch, inputChannels, ...spec.inputSpatial];
  // An omitted filterFormat is XIO, but XOI under oneDNN v3's ConvTransposeBackwardWeights (src/names.ts).
  const format = spec.filterFormat ?? (transposed && spec.entry === 'runKernel-alias' ? 'XOI' : 'XIO');
  const referenceAttrs: ReferenceAttrs = {
    strides: spec.strides,
    kernel,
    groups,
    dataFormat,
    filterFormat: format as ReferenceAttrs['filterFormat'],
    ...(spec.dilations ? {dilations: spec.dilations} : {}),
    ...(spec.padsBegin ? {padsBegin: spec.padsBegin} : {}),
    ...(spec.padsEnd ? {padsEnd: spec.padsEnd} : {}),
    ...(spec.outputPadding ? {outputPadding: spec.outputPadding} : {}),
    ...(spec.autoPad !== undefined ? {autoPad: spec.autoPad} : {}),
  };
  const outputDeltaShape = referenceOutputDeltaShape(transposed, inputShape, outputDeltaChannels, referenceAttrs);
  const deltaSpatial = dataFormat === 'NXC' ? outputDeltaShape.slice(1, -1) : outputDeltaShape.slice(2);
  if (deltaSpatial.some(s => !(s >= 1))) return undefined;
  const full = fullFilterShape(transposed, format, inputChannels, outputDeltaChannels, groups, kernel);
  const attrs: Record<string, unknown> = {strides: [...spec.strides]};
  if (spec.padsBegin) attrs.padsBegin = [...spec.padsBegin];
  if (spec.padsEnd) attrs.padsEnd = [...spec.padsEnd];
  if (spec.dilations) attrs.dilations = [...spec.dilations];
  if (spec.autoPad !== undefined) attrs.autoPad = spec.autoPad;
  if (!spec.omitGroups || groups !== 1) attrs.groups = groups;
  if (spec.dataFormat) attrs.dataFormat = spec.dataFormat;
  if (spec.filterFormat) attrs.filterFormat = spec.filterFormat;
  if (spec.outputPadding && transposed) attrs.outputPadding = [...spec.outputPadding];
  let filterShapeInput: number[] | undefined;
  switch (spec.filterShapeSource) {
    case 'attribute-spatial': attrs.filterShape = [...kernel]; break;
    case 'attribute-full': attrs.filterShape = full; break;
    case 'input-spatial': filterShapeInput = [...kernel]; break;
    case 'input-full': filterShapeInput = full; break;
    case 'input-over-attribute':
      attrs.filterShape = kernel.map(k => k + 1);
      filterShapeInput = spec.dataSeed % 2 === 0 ? full : [...kernel];
      break;
  }
  const op = transposed ? ConvTransposeBackpropFilters : ConvolutionBackpropFilters;
  const positions = size(transposed ? spec.inputSpatial : deltaSpatial);
  return {
    seed,
    spec,
    op,
    kernelName: spec.entry === 'runKernel-alias' ? (transposed ? ConvTransposeBackwardWeights : ConvolutionBackwardWeights) : op,
    inputShape,
    outputDeltaShape,
    filterShape: full,
    attrs,
    filterShapeInput,
    referenceAttrs,
    terms: spec.batch * groups * spec.inputChannelsPerGroup * spec.outputDeltaChannelsPerGroup * size(kernel) * positions,
  };
}

function withinCaps(problem: FuzzProblem): boolean {
  return problem.terms <= MAX_TERMS && size(problem.inputShape) <= MAX_ELEMENTS &&
      size(problem.outputDeltaShape) <= MAX_ELEMENTS;
}

/** The problem of `seed`: drawn until it is valid and within the size caps. */
export function generateProblem(seed: number, options: GenerateOptions = {}): FuzzProblem {
  const random = new Random(seed);
  for (;;) {
    const drawn = draw(random, options);
    const problem = materialize(options.shape === 'strided-tiles' ? toStridedTiles(drawn, random) : drawn, seed);
    if (problem !== undefined && withinCaps(problem)) return problem;
  }
}

/** The geometry of a problem's call (its filter shape given by its kernel, in its filter format). */
export function problemGeometry(problem: FuzzProblem): FilterGradientGeometry {
  return computeGeometry(problem.op, {
    input: {shape: problem.inputShape, dtype: 'float32'}, outputDelta: {shape: problem.outputDeltaShape, dtype: 'float32'},
  }, {...problem.attrs, filterFormat: problem.referenceAttrs.filterFormat, filterShape: problem.referenceAttrs.kernel});
}

/** The data of a problem, specials written in. */
export function problemData(problem: FuzzProblem): {input: Float32Array; outputDelta: Float32Array} {
  const input = seededValues(size(problem.inputShape), problem.spec.dataSeed);
  const outputDelta = seededValues(size(problem.outputDeltaShape), (problem.spec.dataSeed + 1) >>> 0);
  for (const special of problem.spec.specials) {
    const values = special.tensor === 'input' ? input : outputDelta;
    if (values.length > 0) values[special.index % values.length] = special.value;
  }
  return {input, outputDelta};
}

/**
 * Specs one step simpler than `spec` (smaller sizes, fewer axes, defaults, plainer entry
 * points), in the order a shrinker should try them. Some may be invalid: materialize says so.
 */
export function simplerSpecs(spec: FuzzSpec): FuzzSpec[] {
  const out: FuzzSpec[] = [];
  const rank = spec.inputSpatial.length;
  const push = (change: Partial<FuzzSpec>) => out.push({...spec, ...change});
  const perAxis = (key: 'inputSpatial' | 'kernel' | 'strides' | 'dilations' | 'padsBegin' | 'padsEnd' | 'outputPadding',
                   floor: number) => {
    const list = spec[key];
    if (list === undefined) return;
    list.forEach((value, axis) => {
      if (value <= floor) return;
      for (const smaller of new Set([floor, value - 1])) {
        const copy = [...list];
        copy[axis] = smaller;
        push({[key]: copy});
      }
    });
  };
  if (rank > 1) {
    for (let axis = 0; axis < rank; axis++) {
      const drop = <T>(list: T[] | undefined) => list && list.filter((_, i) => i !== axis);
      push({
        inputSpatial: drop(spec.inputSpatial)!, kernel: drop(spec.kernel)!, strides: drop(spec.strides)!,
        dilations: drop(spec.dilations), padsBegin: drop(spec.padsBegin), padsEnd: drop(spec.padsEnd),
        outputPadding: drop(spec.outputPadding),
      });
    }
  }
  if (spec.batch > 1) push({batch: 1});
  if (spec.batch > 2) push({batch: spec.batch - 1});
  if (spec.groups > 1) {
    push({groups: 1});
    push({groups: spec.groups - 1});
  }
  if (spec.inputChannelsPerGroup > 1) {
    push({inputChannelsPerGroup: 1});
    push({inputChannelsPerGroup: spec.inputChannelsPerGroup - 1});
  }
  if (spec.outputDeltaChannelsPerGroup > 1) {
    push({outputDeltaChannelsPerGroup: 1});
    push({outputDeltaChannelsPerGroup: spec.outputDeltaChannelsPerGroup - 1});
  }
  if (spec.specials.length > 1) spec.specials.forEach((_, i) => push({specials: spec.specials.filter((__, j) => j !== i)}));
  if (spec.specials.length > 0) push({specials: []});
  perAxis('inputSpatial', 1);
  perAxis('kernel', 1);
  perAxis('strides', 1);
  perAxis('dilations', 1);
  perAxis('padsBegin', 0);
  perAxis('padsEnd', 0);
  perAxis('outputPadding', 0);
  if (spec.autoPad !== undefined) {
    push({autoPad: undefined});
    if (spec.autoPad !== spec.autoPad.toLowerCase()) push({autoPad: spec.autoPad.toLowerCase()});
  }
  if (spec.dilations !== undefined && spec.dilations.every(d => d === 1)) push({dilations: undefined});
  if (spec.padsBegin !== undefined && spec.padsBegin.every(p => p === 0)) push({padsBegin: undefined});
  if (spec.padsEnd !== undefined && spec.padsEnd.every(p => p === 0)) push({padsEnd: undefined});
  if (spec.outputPadding !== undefined && spec.outputPadding.every(p => p === 0)) push({outputPadding: undefined});
  if (spec.dataFormat === 'NCX') push({dataFormat: 'NXC'});
  if (spec.dataFormat !== undefined) push({dataFormat: undefined});
  if (spec.filterFormat !== undefined && spec.filterFormat !== 'XIO') push({filterFormat: 'XIO'});
  if (spec.filterFormat !== undefined) push({filterFormat: undefined});
  if (spec.filterShapeSource !== 'attribute-spatial') push({filterShapeSource: 'attribute-spatial'});
  if (spec.entry !== 'op') push({entry: 'op'});
  if (!spec.omitGroups && spec.groups === 1) push({omitGroups: true});
  return out;
}

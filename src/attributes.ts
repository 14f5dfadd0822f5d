import type {NamedAttrMap} from '@tensorflow/tfjs-core';

import {opError, show} from './errors';
import {ConvTransposeBackpropFilters, KERNEL_ALIASES, OpName, withKernelNameDefaults} from './names';

/**
 * How pads are chosen: 'none' uses `padsBegin`/`padsEnd`; 'valid' pads nothing;
 * 'same_upper' / 'same_lower' pad so that the output size is ceil(in / stride) (transposed
 * convolution: in · stride), the total pad clamped at 0 and split in half, its odd element at the
 * end (upper) or the beginning (lower). Any letter case is accepted (oneDNN writes 'SAME_UPPER').
 */
export type AutoPad = 'none' | 'same_upper' | 'same_lower' | 'valid';
/**
 * Layout of `input` and `outputDelta`: 'NXC' = [N, X…, C] (channels last, tfjs's NHWC) or
 * 'NCX' = [N, C, X…] (channels first); X stands for the spatial axes (W, HW or DHW).
 */
export type DataFormat = 'NXC' | 'NCX';
/**
 * Filter layouts of the spec; X stands for the spatial axes (K… = W, HW or DHW sizes).
 * ConvolutionBackpropFilters: OIX = (O, C/G, K…), XIO = (K…, C/G, O) (tfjs's conv2d filter is
 * XIO). ConvTransposeBackpropFilters: OIX = (O/G, C, K…), XIO = (K…, C, O/G). C = channels of
 * `input`, O = channels of `outputDelta`, G = groups.
 */
export type FilterFormat = 'XIO' | 'OIX';
/**
 * Filter layouts of the transposed op: the spec's XIO and OIX, and oneDNN v3's IOX = (C, O/G, K…)
 * and XOI = (K…, O/G, C) (XOI is tfjs's conv2dTranspose filter layout for groups = 1).
 */
export type TransposedFilterFormat = FilterFormat | 'IOX' | 'XOI';

interface CommonAttrs {
  /** Positive, one per spatial axis. Required. */
  strides: number[];
  /** Non-negative, one per spatial axis; zeros by default; ignored unless autoPad is 'none'. */
  padsBegin?: number[];
  /** Non-negative, one per spatial axis; zeros by default; ignored unless autoPad is 'none'. */
  padsEnd?: number[];
  /** Positive, one per spatial axis; ones by default. */
  dilations?: number[];
  /** Any letter case ('SAME_UPPER' as oneDNN writes it works); 'none' by default. */
  autoPad?: AutoPad | Uppercase<AutoPad>;
  /** Divides both channel counts; 1 by default. */
  groups?: number;
  /** Layout of `input` and `outputDelta`; 'NXC' by default. */
  dataFormat?: DataFormat;
  /**
   * The filter's full shape in `filterFormat`, or its spatial sizes alone (the channels then
   * follow from the tensors and `groups`). The op's `filterShape` argument or the kernel's
   * filterShape input wins over it; without either it is required (the kernel size cannot be
   * inferred).
   */
  filterShape?: number[];
}

/**
 * Attributes of ConvolutionBackpropFilters (and ConvolutionBackwardWeights), camelCase as tfjs
 * kernels spell theirs; `fromSpecAttrs` makes them from the spec's snake_case dictionary.
 * Every list holds one entry per spatial axis.
 */
export interface ConvolutionBackpropFiltersAttrs extends CommonAttrs {
  /** Layout of the result; 'XIO' by default. */
  filterFormat?: FilterFormat;
}

/**
 * Attributes of ConvTransposeBackpropFilters (and ConvTransposeBackwardWeights): those of the
 * convolution's, the oneDNN v3 filter layouts, and `outputPadding`.
 */
export interface ConvTransposeBackpropFiltersAttrs extends CommonAttrs {
  /**
   * Layout of the result; 'XIO' by default under ConvTransposeBackpropFilters (and through
   * `convTransposeBackpropFilters`), 'XOI' under oneDNN v3's ConvTransposeBackwardWeights.
   */
  filterFormat?: TransposedFilterFormat;
  /**
   * Extra elements at the end of each spatial axis of the transposed convolution's output
   * (non-negative, zeros by default): it changes only the output size the shapes are checked
   * against.
   */
  outputPadding?: number[];
}

/** The attributes of either op. */
export type FilterGradientAttrs = ConvolutionBackpropFiltersAttrs | ConvTransposeBackpropFiltersAttrs;

/** Attributes with defaults filled in and every value checked; pads are not yet resolved. */
export interface ParsedAttributes {
  readonly strides: readonly number[];
  readonly padsBegin: readonly number[];
  readonly padsEnd: readonly number[];
  readonly dilations: readonly number[];
  readonly outputPadding: readonly number[];
  readonly autoPad: AutoPad;
  readonly groups: number;
  readonly dataFormat: DataFormat;
  readonly filterFormat: TransposedFilterFormat;
  readonly filterShape: readonly number[] | undefined;
}

/** The largest value any size or index attribute may take: tfjs sizes and indices are int32. */
const MAX_INT32 = 2 ** 31 - 1;

const AUTO_PADS: readonly AutoPad[] = ['none', 'same_upper', 'same_lower', 'valid'];
const DATA_FORMATS: readonly DataFormat[] = ['NXC', 'NCX'];
const CONV_FILTER_FORMATS: readonly FilterFormat[] = ['XIO', 'OIX'];
const TRANSPOSED_FILTER_FORMATS: readonly TransposedFilterFormat[] = ['XIO', 'OIX', 'IOX', 'XOI'];

const CONV_ATTRIBUTE_NAMES = [
  'strides', 'padsBegin', 'padsEnd', 'dilations', 'autoPad', 'groups', 'dataFormat', 'filterFormat',
  'filterShape',
];
const TRANSPOSED_ATTRIBUTE_NAMES = [...CONV_ATTRIBUTE_NAMES, 'outputPadding'];

function isListLike(value: unknown): value is ArrayLike<unknown> {
  return Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView));
}

/**
 * Reads a list attribute of `count` integers each at least `minimum`; `fallback` when absent.
 * `rankNote` explains where the count comes from, e.g. "for a 4-D input".
 */
function readIntegerList(
    op: OpName, name: string, value: unknown, count: number, minimum: 0 | 1, rankNote: string,
    fallback?: number): number[] {
  const kind = minimum === 1 ? 'positive' : 'non-negative';
  if (value === undefined || value === null) {
    if (fallback === undefined) {
      throw opError(op, `attribute '${name}'`, `is required: ${count} ${kind} integers ${rankNote}`);
    }
    return new Array<number>(count).fill(fallback);
  }
  const list = isListLike(value) ? Array.from(value) : undefined;
  const valid = list !== undefined && list.length === count &&
      list.every(v => typeof v === 'number' && Number.isSafeInteger(v) && v >= minimum);
  if (!valid) {
    throw opError(op, `attribute '${name}'`, `must hold ${count} ${kind} integers ${rankNote}`, value);
  }
  if ((list as number[]).some(v => v > MAX_INT32)) {
    // Safe integers, but past what tfjs sizes and indices (int32; int uniforms on webgl) hold:
    // kernels would wrap them or size intermediates by them.
    throw opError(op, `attribute '${name}'`, `must hold values of at most ${MAX_INT32} (tfjs sizes are int32)`, value);
  }
  return list as number[];
}

function readEnum<T extends string>(
    op: OpName, name: string, value: unknown, allowed: readonly T[], fallback: T,
    normalize: (s: string) => string = s => s): T {
  if (value === undefined || value === null) return fallback;
  const normalized = typeof value === 'string' ? normalize(value) : undefined;
  const match = allowed.find(a => a === normalized);
  if (match === undefined) {
    throw opError(op, `attribute '${name}'`, `must be one of ${allowed.map(a => `'${a}'`).join(', ')}`, value);
  }
  return match;
}

/**
 * Checks every attribute against the spatial rank and fills in the defaults of DESIGN.md §1.
 * Unknown attribute names are rejected: a misspelt 'stride' must not silently mean "default".
 */
export function parseAttributes(op: OpName, attrs: NamedAttrMap | undefined, spatialRank: number): ParsedAttributes {
  const a = (attrs ?? {}) as Record<string, unknown>;
  const transposed = op === ConvTransposeBackpropFilters;
  const known = transposed ? TRANSPOSED_ATTRIBUTE_NAMES : CONV_ATTRIBUTE_NAMES;
  for (const name of Object.keys(a)) {
    if (!known.includes(name) && a[name] !== undefined) {
      throw opError(op, `attribute '${name}'`, `is not an attribute of ${op} (known: ${known.join(', ')})`);
    }
  }
  const rankNote = `for a ${spatialRank + 2}-D input`;
  const groups = a.groups ?? 1;
  if (typeof groups !== 'number' || !Number.isSafeInteger(groups) || groups < 1) {
    throw opError(op, `attribute 'groups'`, 'must be a positive integer', groups);
  }
  const filterShapeValue = a.filterShape;
  let filterShape: number[] | undefined;
  if (filterShapeValue !== undefined && filterShapeValue !== null) {
    filterShape = readFilterShape(op, `attribute 'filterShape'`, filterShapeValue, spatialRank);
  }
  return Object.freeze({
    strides: Object.freeze(readIntegerList(op, 'strides', a.strides, spatialRank, 1, rankNote)),
    padsBegin: Object.freeze(readIntegerList(op, 'padsBegin', a.padsBegin, spatialRank, 0, rankNote, 0)),
    padsEnd: Object.freeze(readIntegerList(op, 'padsEnd', a.padsEnd, spatialRank, 0, rankNote, 0)),
    dilations: Object.freeze(readIntegerList(op, 'dilations', a.dilations, spatialRank, 1, rankNote, 1)),
    outputPadding: Object.freeze(readIntegerList(op, 'outputPadding', a.outputPadding, spatialRank, 0, rankNote, 0)),
    autoPad: readEnum(op, 'autoPad', a.autoPad, AUTO_PADS, 'none', s => s.toLowerCase()),
    groups,
    dataFormat: readEnum(op, 'dataFormat', a.dataFormat, DATA_FORMATS, 'NXC'),
    filterFormat: readEnum<TransposedFilterFormat>(
        op, 'filterFormat', a.filterFormat, transposed ? TRANSPOSED_FILTER_FORMATS : CONV_FILTER_FORMATS, 'XIO'),
    filterShape: filterShape && Object.freeze(filterShape),
  });
}

/**
 * A filter shape is either the full shape (rank + 2 entries) or the spatial sizes alone (rank
 * entries), all positive integers. `subject` names where it came from, for the error.
 */
export function readFilterShape(op: OpName, subject: string, value: unknown, spatialRank: number): number[] {
  const list = isListLike(value) ? Array.from(value) : undefined;
  const valid = list !== undefined && (list.length === spatialRank || list.length === spatialRank + 2) &&
      list.every(v => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1);
  if (!valid) {
    throw opError(
        op, subject,
        `must hold ${spatialRank + 2} positive integers (the full filter shape) or ${spatialRank} ` +
            `(its spatial sizes) for a ${spatialRank + 2}-D input`,
        value);
  }
  return list as number[];
}

/**
 * A spec attribute dictionary, snake_case as the oneDNN Graph texts write it, for
 * `fromSpecAttrs`. Each key maps to the camelCase attribute of the same meaning
 * (ConvTransposeBackpropFiltersAttrs); values are checked by the op, not here.
 */
export interface SpecAttrs {
  /** → `strides`. */
  strides?: number[];
  /** → `padsBegin`. */
  pads_begin?: number[];
  /** → `padsEnd`. */
  pads_end?: number[];
  /** → `dilations`. */
  dilations?: number[];
  /** → `autoPad` ('NONE', 'SAME_UPPER', 'SAME_LOWER', 'VALID', any letter case). */
  auto_pad?: string;
  /** → `groups`. */
  groups?: number;
  /** → `dataFormat` ('NXC' or 'NCX'). */
  data_format?: string;
  /** → `filterFormat`. */
  filter_format?: string;
  /** oneDNN's newer name for filter_format. */
  weights_format?: string;
  /** → `filterShape`. */
  filter_shape?: number[];
  /** oneDNN's newer name for filter_shape. */
  weights_shape?: number[];
  /** → `outputPadding` (transposed op only). */
  output_padding?: number[];
}

const SPEC_TO_TFJS: Readonly<Record<keyof SpecAttrs, string>> = {
  strides: 'strides',
  pads_begin: 'padsBegin',
  pads_end: 'padsEnd',
  dilations: 'dilations',
  auto_pad: 'autoPad',
  groups: 'groups',
  data_format: 'dataFormat',
  filter_format: 'filterFormat',
  weights_format: 'filterFormat',
  filter_shape: 'filterShape',
  weights_shape: 'filterShape',
  output_padding: 'outputPadding',
};

/**
 * Turns a spec attribute dictionary (snake_case, as the oneDNN Graph texts write it; oneDNN v3's
 * `weights_format` and `weights_shape` are accepted for `filter_format` and `filter_shape`) into
 * the camelCase attributes the op functions and kernels take. Values are passed through
 * unchanged: the op checks them.
 *
 * Defaults depend on the kernel name, as in oneDNN: under the spec names and under
 * `ConvolutionBackwardWeights` an omitted filter format is 'XIO'; under oneDNN v3's
 * `ConvTransposeBackwardWeights` it is 'XOI' (oneDNN's op schema). The kernels registered under
 * each name apply its defaults themselves, so `runKernel(name, inputs, fromSpecAttrs(spec))`
 * needs no `kernelName`; give it when the attributes go to an op function (which uses the spec
 * names' defaults), and the name's defaults are written into the result.
 *
 * @param spec - the spec dictionary, e.g. `{strides: [1, 1], auto_pad: 'SAME_UPPER', weights_shape: [3, 3]}`.
 * @param kernelName - optional: one of the four kernel names; its defaults are filled in.
 * @returns the attributes, e.g. `{strides: [1, 1], autoPad: 'SAME_UPPER', filterShape: [3, 3]}`.
 * @throws Error on a key that is not a spec attribute, on one attribute given under both of its
 *   names (`filter_format` and `weights_format`), or on an unknown kernel name.
 *
 * @example
 * ```ts
 * // A oneDNN v3 graph's ConvTransposeBackwardWeights node that leaves weights_format out:
 * const attrs = fromSpecAttrs({strides: [2, 2], weights_shape: [3, 3]}, 'ConvTransposeBackwardWeights');
 * attrs.filterFormat;  // 'XOI'
 * const dW = convTransposeBackpropFilters(x, dy, attrs);  // (K_h, K_w, O/G, C)
 * ```
 */
export function fromSpecAttrs(spec: SpecAttrs, kernelName?: string): ConvTransposeBackpropFiltersAttrs {
  if (kernelName !== undefined && !Object.values(KERNEL_ALIASES).some(names => names.includes(kernelName))) {
    throw new Error(`fromSpecAttrs: kernel name ${show(kernelName)} is not one of ${
        Object.values(KERNEL_ALIASES).flat().map(show).join(', ')}`);
  }
  const result: Record<string, unknown> = {};
  const source: Record<string, string> = {};
  for (const [key, value] of Object.entries(spec)) {
    if (!Object.prototype.hasOwnProperty.call(SPEC_TO_TFJS, key)) {
      throw new Error(
          `fromSpecAttrs: '${key}' is not a spec attribute (known: ${Object.keys(SPEC_TO_TFJS).join(', ')})`);
    }
    if (value === undefined) continue;
    const name = SPEC_TO_TFJS[key as keyof SpecAttrs];
    if (name in result) {
      throw new Error(`fromSpecAttrs: '${key}' and '${source[name]}' both give ${name}, got ${
          show(value)} and ${show(result[name])}`);
    }
    result[name] = Array.isArray(value) ? [...value] : value;
    source[name] = key;
  }
  const attrs = kernelName === undefined ? result : withKernelNameDefaults(kernelName, result)!;
  return attrs as unknown as ConvTransposeBackpropFiltersAttrs;
}

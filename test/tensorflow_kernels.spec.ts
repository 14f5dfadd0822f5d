import * as tf from '@tensorflow/tfjs-core';
import * as fs from 'node:fs';
import * as path from 'node:path';

import {CONV_BACKPROP_FILTERS_NATIVE_PADDED, ConvolutionBackpropFilters, convolutionBackpropFilters, ConvTransposeBackpropFilters, convTransposeBackpropFilters} from '../kernels/index';
import {computeGeometry} from '../src/geometry';
import {describePlan, NATIVE_KERNELS, NativeKernelName, planNative} from '../src/native/native_plan';
import {TENSORFLOW_BACKEND} from './backends';
import {CASES, FilterGradientCase, fullFilterShape, geometryOfCase} from './cases';
import {runCaseEverywhere} from './helpers/run_case';
import {seededValues} from './helpers/util';
import {ReferenceAttrs, referenceFilterGradient, referenceOutputDeltaShape} from './reference';

/**
 * The `tensorflow` kernels (kernels/node): tfjs's own Conv2DBackpropFilter,
 * DepthwiseConv2dNativeBackpropFilter and Conv3DBackpropFilterV2 where they compute the case
 * exactly, the composite elsewhere, as src/native/native_plan.ts plans it. Run on tfjs-node when
 * it loads, else on the test backend of that name (test/helpers/tensorflow_test_backend.ts).
 * Spies on the backend's kernels show which path each case took; the table of
 * docs/what-runs-where.md says which path each case takes, and the two must agree.
 */
const TENSORFLOW = 'tensorflow';
const ATOL = 1e-4;
const RTOL = 1e-4;

/** Problems the case table lacks: the native depthwise kernel by default, the 3-D one with padding. */
interface ExtraProblem {
  id: string;
  transposed?: boolean;
  /** NXC shape of `input`. */
  input: number[];
  outputDeltaChannels: number;
  kernel: number[];
  attrs: Omit<ReferenceAttrs, 'dataFormat' | 'filterFormat' | 'kernel'>;
}

const EXTRA_PROBLEMS: ExtraProblem[] = [
  {
    id: 'depthwise2d_multiplier2_valid', input: [2, 7, 7, 3], outputDeltaChannels: 6, kernel: [3, 3],
    attrs: {strides: [2, 2], groups: 3},
  },
  {
    id: 'depthwise1d_stride2_valid', input: [2, 11, 4], outputDeltaChannels: 4, kernel: [3],
    attrs: {strides: [2], groups: 4},
  },
  {
    id: 'deconv2d_depthwise_valid', transposed: true, input: [2, 3, 3, 2], outputDeltaChannels: 2, kernel: [2, 2],
    attrs: {strides: [2, 2], groups: 2},
  },
  {
    id: 'conv3d_same_upper_stride2', input: [1, 4, 5, 4, 2], outputDeltaChannels: 3, kernel: [3, 3, 3],
    attrs: {strides: [2, 2, 2], autoPad: 'same_upper'},
  },
];

/** Each extra problem in both data formats, with two filter formats. */
function extraCases(): FilterGradientCase[] {
  return EXTRA_PROBLEMS.flatMap((p, index) => (['NXC', 'NCX'] as const).map((dataFormat, j): FilterGradientCase => {
    const transposed = p.transposed === true;
    const inputShape = dataFormat === 'NXC' ? p.input : [p.input[0], p.input[p.input.length - 1], ...p.input.slice(1, -1)];
    const filterFormat = transposed ? (j === 0 ? 'XOI' : 'IOX') : (j === 0 ? 'XIO' : 'OIX');
    const outputDeltaShape =
        referenceOutputDeltaShape(transposed, inputShape, p.outputDeltaChannels, {...p.attrs, dataFormat, kernel: p.kernel});
    const full = fullFilterShape(
        transposed, filterFormat, p.input[p.input.length - 1], p.outputDeltaChannels, p.attrs.groups ?? 1, p.kernel);
    return {
      id: `${p.id}/${dataFormat}/${filterFormat}`,
      op: transposed ? ConvTransposeBackpropFilters : ConvolutionBackpropFilters,
      inputShape,
      outputDeltaShape,
      kernel: p.kernel,
      attrs: {...p.attrs, dataFormat, filterFormat, filterShape: j === 0 ? p.kernel : full},
      seed: 5000 + 2 * index + j,
    };
  }));
}

const ALL_CASES: readonly FilterGradientCase[] = [...CASES, ...extraCases()];

function size(shape: number[]) {
  return shape.reduce((a, b) => a * b, 1);
}


function dataOf(c: FilterGradientCase) {
  const input = {shape: c.inputShape, values: seededValues(size(c.inputShape), c.seed)};
  const outputDelta = {shape: c.outputDeltaShape, values: seededValues(size(c.outputDeltaShape), c.seed + 1000)};
  const expected = referenceFilterGradient(
      c.op === ConvTransposeBackpropFilters, input, outputDelta,
      {...(c.attrs as Omit<ReferenceAttrs, 'kernel'>), kernel: c.kernel});
  return {input, outputDelta, expected};
}

/** The table of docs/what-runs-where.md: per problem id, the path without and with the flag. */
function documentedPaths(): Map<string, {path: string; padded: string}> {
  const text = fs.readFileSync(path.join(__dirname, '..', 'docs', 'what-runs-where.md'), 'utf8');
  const rows = new Map<string, {path: string; padded: string}>();
  const section = text.split('### Every case of the test table')[1]?.split('\n#')[0] ?? '';
  for (const line of section.split('\n')) {
    const match = /^\| `([A-Za-z0-9_]+)` \|[^|]*\| ([^|]+?) \| ([^|]+?) \|$/.exec(line.trim());
    if (match !== null) rows.set(match[1], {path: match[2].replace(/`/g, ''), padded: match[3].replace(/`/g, '')});
  }
  return rows;
}

/** Spies on the backend's native filter-gradient kernels and on BatchMatMul (which the composite runs, the native path never). */
function spyOnKernels(): {native: Map<NativeKernelName, jasmine.Spy>; matMul: jasmine.Spy} {
  const native = new Map<NativeKernelName, jasmine.Spy>();
  for (const name of NATIVE_KERNELS) {
    const config = tf.getKernel(name, TENSORFLOW);
    expect(config).withContext(`${name} on ${TENSORFLOW}`).toBeDefined();
    native.set(name, spyOn(config!, 'kernelFunc').and.callThrough());
  }
  return {native, matMul: spyOn(tf.getKernel('BatchMatMul', TENSORFLOW)!, 'kernelFunc').and.callThrough()};
}

/** What the spies saw: `native <kernel>` when only that native kernel ran, `composite` when only BatchMatMul did. */
function observedPath(spies: ReturnType<typeof spyOnKernels>): string {
  const ran = [...spies.native].filter(([, spy]) => spy.calls.count() > 0).map(([name]) => name);
  const matMuls = spies.matMul.calls.count();
  if (ran.length === 1 && matMuls === 0) return `native ${ran[0]}`;
  if (ran.length === 0 && matMuls > 0) return 'composite';
  return `mixed: native ${ran.join('+')}, ${matMuls} matMul`;
}

/** The documented path as the spies see it: `composite (reason)` → `composite`. */
const observable = (documented: string) => documented.replace(/^composite \(.*\)$/, 'composite');

describe(`the tensorflow kernels (${TENSORFLOW_BACKEND.loaded ? 'tfjs-node' : 'test backend of tfjs-cpu kernels'}):`, () => {
  beforeAll(async () => {
    expect(await tf.setBackend(TENSORFLOW)).toBe(true);
  });
  afterAll(async () => {
    tf.env().set(CONV_BACKPROP_FILTERS_NATIVE_PADDED, false);
    await tf.setBackend('cpu');
  });

  const documented = documentedPaths();

  it('docs/what-runs-where.md lists every problem of the case table and the extra native ones, with the planned paths', () => {
    const ids = new Set(ALL_CASES.map(c => c.id.split('/')[0]));
    expect([...documented.keys()].sort()).toEqual([...ids].sort());
    for (const c of ALL_CASES) {
      const geometry = geometryOfCase(c);
      const row = documented.get(c.id.split('/')[0])!;
      const all = {hasKernel: () => true};
      expect(describePlan(planNative(geometry, {...all, padded: false}))).withContext(c.id).toBe(row.path);
      expect(describePlan(planNative(geometry, {...all, padded: true}))).withContext(`${c.id}, padded`).toBe(row.padded);
    }
  });

  describe('every case through every entry point, the spies showing the documented path:', () => {
    for (const c of ALL_CASES) {
      it(c.id, () => {
        const row = documented.get(c.id.split('/')[0]);
        expect(row).withContext('documented').toBeDefined();
        const spies = spyOnKernels();
        runCaseEverywhere({...c, ...dataOf(c)}, {atol: ATOL, rtol: RTOL});
        expect(observedPath(spies)).toBe(observable(row!.path));
      });
    }
  });

  describe(`with ${CONV_BACKPROP_FILTERS_NATIVE_PADDED} on, the op function on every case:`, () => {
    beforeAll(() => tf.env().set(CONV_BACKPROP_FILTERS_NATIVE_PADDED, true));
    afterAll(() => tf.env().set(CONV_BACKPROP_FILTERS_NATIVE_PADDED, false));
    for (const c of ALL_CASES) {
      it(c.id, () => {
        const row = documented.get(c.id.split('/')[0]);
        expect(row).withContext('documented').toBeDefined();
        const spies = spyOnKernels();
        runCaseEverywhere({...c, ...dataOf(c)}, {atol: ATOL, rtol: RTOL, opOnly: true});
        expect(observedPath(spies)).toBe(observable(row!.padded));
      });
    }
  });

  describe('exactness where an infinite or NaN outputDelta meets padding (DESIGN.md §2):', () => {
    // conv2d 3×3, pad 1 ('same'): outputDelta's corner (0, 0) reads input (k − 1) for kernel
    // offset k, so offsets of row 0 and column 0 meet the padding there; the special value in
    // that corner, ones elsewhere.
    const input = () => tf.ones([1, 4, 4, 1]);
    const attrs = {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]};
    const outputDelta = (special: number) => {
      const values = new Float32Array(16).fill(1);
      values[0] = special;
      return tf.tensor(values, [1, 4, 4, 1]);
    };
    /** The spec's sums: offsets whose windows read the corner get the special value, the others finite sums of ones. */
    const expected = (special: number) => {
      const x = {shape: [1, 4, 4, 1], values: new Float32Array(16).fill(1)};
      const dy = {shape: [1, 4, 4, 1], values: Float32Array.from(outputDelta(special).dataSync())};
      return referenceFilterGradient(false, x, dy, {...attrs, kernel: [3, 3]}).values;
    };

    for (const special of [Infinity, -Infinity, NaN]) {
      it(`${special}: the spec's exact values by default (the composite takes the padded problem)`, () => {
        const spies = spyOnKernels();
        const dW = tf.tidy(() => convolutionBackpropFilters(input(), outputDelta(special), attrs));
        const values = Array.from(dW.dataSync());
        dW.dispose();
        expect(observedPath(spies)).toBe('composite');
        const want = Array.from(expected(special));
        // The offsets of row 0 and column 0 read padding where the special value is: no term, a finite sum.
        expect([0, 1, 2, 3, 6].map(i => Number.isFinite(want[i]))).toEqual([true, true, true, true, true]);
        for (let i = 0; i < want.length; i++) {
          if (Number.isNaN(want[i])) expect(values[i]).withContext(`dW[${i}]`).toBeNaN();
          else expect(values[i]).withContext(`dW[${i}]`).toBe(want[i]);
        }
      });
    }

    it('Infinity meeting padding: exact by default, NaN from the native kernel with the flag, as TensorFlow computes', () => {
      const x = tf.ones([1, 4, 4, 1]);
      const dy = outputDelta(Infinity);
      const want = Array.from(expected(Infinity));
      const exact = convolutionBackpropFilters(x, dy, attrs);
      expect(Array.from(exact.dataSync())).withContext('default: the composite').toEqual(want);
      expect(want[8]).withContext('offset (2, 2) reads the Infinity inside the input').toBe(Infinity);
      tf.env().set(CONV_BACKPROP_FILTERS_NATIVE_PADDED, true);
      try {
        const spies = spyOnKernels();
        const native = convolutionBackpropFilters(x, dy, attrs);
        expect(observedPath(spies)).toBe('native Conv2DBackpropFilter');
        const values = Array.from(native.dataSync());
        // Offsets (0, ·) and (·, 0) multiply a padding zero with Infinity: NaN, as TensorFlow computes.
        [0, 1, 2, 3, 6].forEach(i => expect(values[i]).withContext(`dW[${i}] (reads padding with the Infinity)`).toBeNaN());
        [4, 5, 7, 8].forEach(i => expect(values[i]).withContext(`dW[${i}]`).toBe(want[i]));
        tf.dispose(native);
      } finally {
        tf.env().set(CONV_BACKPROP_FILTERS_NATIVE_PADDED, false);
      }
      tf.dispose([x, dy, exact]);
    });
  });

  it('the transposed op runs the same native kernel with input and outputDelta swapped', () => {
    const spies = spyOnKernels();
    const input = tf.tensor(seededValues(2 * 3 * 3 * 2, 1), [2, 3, 3, 2]);
    const outputDelta = tf.tensor(seededValues(2 * 7 * 7 * 4, 2), [2, 7, 7, 4]);
    const dW = convTransposeBackpropFilters(input, outputDelta, {strides: [2, 2], filterShape: [3, 3]});
    const call = spies.native.get('Conv2DBackpropFilter')!.calls.mostRecent();
    const {inputs, attrs} = call.args[0] as {inputs: {x: tf.TensorInfo; dy: tf.TensorInfo}; attrs: Record<string, unknown>};
    expect([inputs.x.shape, inputs.dy.shape]).toEqual([[2, 7, 7, 4], [2, 3, 3, 2]]);
    expect(attrs).toEqual({strides: [2, 2], pad: 'valid', dataFormat: 'NHWC', filterShape: [3, 3, 4, 2]});
    expect(dW.shape).toEqual([3, 3, 2, 4]);  // XIO of the transposed op: (K, C, O/G)
    tf.dispose([input, outputDelta, dW]);
  });
});

describe('planNative', () => {
  const all = {hasKernel: () => true, padded: false};
  const plan = (op: typeof ConvolutionBackpropFilters | typeof ConvTransposeBackpropFilters, input: number[],
                outputDelta: number[], attrs: Record<string, unknown>, options = all) =>
      planNative(computeGeometry(op, {input: {shape: input, dtype: 'float32'}, outputDelta: {shape: outputDelta, dtype: 'float32'}}, attrs), options);

  it('a 2-D NCX convolution: Conv2DBackpropFilter on NHWC shapes, pad valid, the filter [K, C, O]', () => {
    expect(plan(ConvolutionBackpropFilters, [2, 3, 9, 8], [2, 4, 4, 3], {strides: [2, 3], dataFormat: 'NCX', filterFormat: 'OIX', filterShape: [3, 2]}))
        .toEqual({
          path: 'native', kernel: 'Conv2DBackpropFilter', pad: 'valid', srcSpatial: [9, 8], xShape: [2, 9, 8, 3], dyShape: [2, 4, 3, 4],
          attrs: {strides: [2, 3], pad: 'valid', dataFormat: 'NHWC', filterShape: [3, 2, 3, 4]},
        });
  });

  it('a 1-D depthwise convolution: height 1 with the width\'s stride (equal strides), the filter [1, K, C, M]', () => {
    expect(plan(ConvolutionBackpropFilters, [2, 11, 4], [2, 5, 8], {strides: [2], groups: 4, filterShape: [3]})).toEqual({
      path: 'native', kernel: 'DepthwiseConv2dNativeBackpropFilter', pad: 'valid', srcSpatial: [11], xShape: [2, 1, 11, 4], dyShape: [2, 1, 5, 8],
      attrs: {strides: [2, 2], dilations: [1, 1], pad: 'valid', filterShape: [1, 3, 4, 2]},
    });
  });

  it('the transposed op: x is outputDelta, dy is input; 3-D takes Conv3DBackpropFilterV2', () => {
    expect(plan(ConvTransposeBackpropFilters, [1, 2, 2, 2, 3], [1, 4, 4, 4, 5], {strides: [2, 2, 2], filterShape: [2, 2, 2]}))
        .toEqual({
          path: 'native', kernel: 'Conv3DBackpropFilterV2', pad: 'valid', srcSpatial: [4, 4, 4], xShape: [1, 4, 4, 4, 5], dyShape: [1, 2, 2, 2, 3],
          attrs: {strides: [2, 2, 2], pad: 'valid', filterShape: [2, 2, 2, 5, 3]},
        });
  });

  it('same_upper padding: composite (reads-padding) by default, native \'same\' with the flag; explicit pads equal to it too', () => {
    const same = {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3]};
    const explicit = {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]};
    for (const attrs of [same, explicit]) {
      expect(plan(ConvolutionBackpropFilters, [1, 5, 5, 2], [1, 5, 5, 3], attrs)).toEqual({path: 'composite', reason: 'reads-padding'});
      const padded = plan(ConvolutionBackpropFilters, [1, 5, 5, 2], [1, 5, 5, 3], attrs, {...all, padded: true});
      expect(padded.path === 'native' && padded.pad).toBe('same');
    }
  });

  it('gives each reason', () => {
    const conv = (input: number[], outputDelta: number[], attrs: Record<string, unknown>, options = all) =>
        describePlan(plan(ConvolutionBackpropFilters, input, outputDelta, {filterShape: [3, 3], ...attrs}, options));
    expect(conv([0, 5, 5, 2], [0, 3, 3, 2], {strides: [1, 1]})).toBe('composite (empty-batch)');
    expect(conv([1, 7, 7, 2], [1, 3, 5, 2], {strides: [1, 1], dilations: [2, 1]})).toBe('composite (dilated)');
    expect(conv([1, 5, 5, 4], [1, 3, 3, 4], {strides: [1, 1], groups: 2})).toBe('composite (grouped)');
    expect(conv([1, 7, 5, 2], [1, 3, 3, 2], {strides: [2, 1], groups: 2})).toBe('composite (depthwise-strides)');
    expect(describePlan(plan(ConvolutionBackpropFilters, [1, 3, 3, 3, 2], [1, 1, 1, 1, 2], {strides: [1, 1, 1], groups: 2, filterShape: [3, 3, 3]})))
        .toBe('composite (depthwise-3d)');
    expect(conv([1, 5, 5, 2], [1, 3, 3, 2], {strides: [1, 1]}, {hasKernel: () => false, padded: false})).toBe('composite (no-native-kernel)');
    expect(conv([1, 5, 5, 2], [1, 4, 4, 2], {strides: [1, 1], padsBegin: [1, 1], padsEnd: [0, 0]})).toBe('composite (pads)');
    expect(conv([1, 6, 6, 2], [1, 3, 3, 2], {strides: [2, 2], autoPad: 'same_lower'})).toBe('composite (pads)');
    expect(conv([1, 5, 5, 2], [1, 5, 5, 2], {strides: [1, 1], autoPad: 'same_upper'})).toBe('composite (reads-padding)');
  });

  it('crops src rows past the last window (a transposed op\'s output padding) so that \'valid\' gives dy\'s size', async () => {
    // outputDelta (src) has (3 − 1)·1 + 3 + 1 = 6 positions; the windows of the 3 input positions read 0..4 only.
    const attrs = {strides: [1], outputPadding: [1], filterShape: [3]};
    const input = tf.tensor(seededValues(12, 3), [2, 3, 2]);
    const outputDelta = tf.tensor(seededValues(36, 4), [2, 6, 3]);
    const planned = planNative(computeGeometry(ConvTransposeBackpropFilters, {input, outputDelta}, attrs), all);
    expect(planned.path === 'native' && [planned.srcSpatial, planned.xShape]).toEqual([[5], [2, 1, 5, 3]]);
    expect(await tf.setBackend(TENSORFLOW)).toBe(true);
    try {
      const spies = spyOnKernels();
      const dW = convTransposeBackpropFilters(input, outputDelta, attrs);
      expect(observedPath(spies)).toBe('native Conv2DBackpropFilter');
      const expected = referenceFilterGradient(
          true, {shape: [2, 3, 2], values: input.dataSync()}, {shape: [2, 6, 3], values: outputDelta.dataSync()},
          {strides: [1], outputPadding: [1], kernel: [3]});
      expect(dW.shape).toEqual(expected.shape);
      dW.dataSync().forEach((v, i) => expect(Math.abs(v - expected.values[i])).withContext(`dW[${i}]`).toBeLessThan(1e-5));
      dW.dispose();
    } finally {
      await tf.setBackend('cpu');
    }
    tf.dispose([input, outputDelta]);
  });

  it('takes pads no tap reaches as valid: an end pad past the last read', () => {
    // in 7, kernel 3, stride 2, end pad 1: the output stays 3, whose last window ends at (3 − 1)·2 + 2 = 6, inside the input.
    expect(describePlan(plan(ConvolutionBackpropFilters, [1, 7, 7, 1], [1, 3, 3, 1], {strides: [2, 2], padsEnd: [1, 1], filterShape: [3, 3]})))
        .toBe('native Conv2DBackpropFilter');
  });
});

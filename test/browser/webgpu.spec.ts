/**
 * The case table and the PyTorch golden cases on tfjs's webgpu backend (WGSL compute shaders;
 * SwiftShader's Vulkan in headless Chromium, see karma.conf.js), inputs uploaded or made by an
 * op, every call leak-checked (tensors, the backend's data ids and GPU buffers in use).
 * Results are read with `await data()`: tfjs-webgpu's dataSync reads zeros there.
 */
import * as tf from '@tensorflow/tfjs-core';

import {computeGeometry, convolutionBackpropFilters, convTransposeBackpropFilters, OpName} from '../../kernels/index';
import {BLOCK_COLUMNS, CONV_BACKPROP_FILTERS_WEBGPU_UNMASKED_FIRST, CONV_BACKPROP_FILTERS_WEBGPU_VEC4_READS, planWebgpuReduction} from '../../kernels/webgpu/reduction_plan';
import {CASES} from '../cases';
import {compareWithReference} from '../fuzz/runner';
import golden from '../golden/golden.json';
import {runCaseEverywhereAsync} from '../helpers/run_case';
import {expectClose, resourceCounts, seededValues} from '../helpers/util';
import {useWebgpuBackend, webgpuExposed} from '../helpers/webgpu_backend';
import {CallAttrs, ReferenceAttrs, referenceFilterGradient, referenceForCall} from '../reference';

function size(shape: number[]) {
  return shape.reduce((a, b) => a * b, 1);
}

describe('webgpu: the backend', () => {
  // Fails the suite, never skips, when Chromium gives no WebGPU: every other webgpu spec would
  // otherwise pass on whatever backend was left selected, or not run at all.
  it('starts (navigator.gpu, an adapter, a device, tfjs\'s backend)', async () => {
    expect(webgpuExposed).withContext('navigator.gpu (Chromium needs --enable-unsafe-webgpu)').toBe(true);
    const adapter = await (navigator as unknown as {gpu: {requestAdapter(): Promise<unknown>}}).gpu.requestAdapter();
    expect(adapter).withContext('an adapter (headless Chromium needs --use-webgpu-adapter=swiftshader)').not.toBeNull();
    expect(await tf.setBackend('webgpu')).toBe(true);
    expect(tf.getBackend()).toBe('webgpu');
  });
});

/** An input as an earlier op leaves it: already in a GPU buffer. */
export function madeByOp(values: Float32Array, shape: number[]) {
  return tf.tidy(() => tf.mul(tf.tensor(values, shape), 1));
}

/** An input uploaded as it is (the upload happens here, not inside the leak-checked call). */
export function uploaded(values: Float32Array, shape: number[]) {
  const t = tf.tensor(values, shape);
  (tf.backend() as unknown as {uploadToGPU(dataId: object): void}).uploadToGPU(t.dataId);
  return t;
}

describe('webgpu:', () => {
  useWebgpuBackend();
  const options = {atol: 1e-4, rtol: 1e-4};

  // Every entry point on the first layout variant of each problem (the others run the op
  // function alone: the entry points share everything after it); inputs made by an op and
  // uploaded in turn.
  const seen = new Set<string>();
  CASES.forEach((c, i) => {
    const problem = c.id.split('/')[0];
    const opOnly = seen.has(problem);
    seen.add(problem);
    it(c.id, async () => {
      const input = {shape: c.inputShape, values: seededValues(size(c.inputShape), c.seed)};
      const outputDelta = {shape: c.outputDeltaShape, values: seededValues(size(c.outputDeltaShape), c.seed + 1000)};
      const expected = referenceFilterGradient(
          c.op === 'ConvTransposeBackpropFilters', input, outputDelta,
          {...(c.attrs as Omit<ReferenceAttrs, 'kernel'>), kernel: c.kernel});
      await runCaseEverywhereAsync(
          {...c, input, outputDelta, expected}, {...options, opOnly, place: i % 2 === 0 ? madeByOp : uploaded});
    });
  });

  golden.cases.forEach((c, i) => {
    it(`golden ${c.id}`, async () => {
      await runCaseEverywhereAsync({...c, op: c.op as OpName}, {...options, opOnly: true, place: i % 2 === 0 ? madeByOp : uploaded});
    });
  });

  /** Runs one problem against the float64 reference, leak-checked; returns the plan it ran. */
  async function checkAgainstReference(
      inputShape: number[], outputDeltaShape: number[], attrs: Record<string, unknown>, transposed = false) {
    const op = transposed ? 'ConvTransposeBackpropFilters' : 'ConvolutionBackpropFilters';
    const geometry = computeGeometry(
        op, {input: {shape: inputShape, dtype: 'float32'}, outputDelta: {shape: outputDeltaShape, dtype: 'float32'}}, attrs);
    const inputValues = seededValues(size(inputShape), 5);
    const outputDeltaValues = seededValues(size(outputDeltaShape), 6);
    const expected = referenceForCall(
        transposed, {shape: inputShape, values: inputValues}, {shape: outputDeltaShape, values: outputDeltaValues}, attrs as unknown as CallAttrs).values;
    const input = madeByOp(inputValues, inputShape);
    const outputDelta = madeByOp(outputDeltaValues, outputDeltaShape);
    const before = resourceCounts();
    const result = (transposed ? convTransposeBackpropFilters : convolutionBackpropFilters)(input, outputDelta, attrs as never);
    expectClose(await result.data(), expected, JSON.stringify(attrs), 1e-3, 1e-4);
    result.dispose();
    expect(resourceCounts()).toEqual(before);
    tf.dispose([input, outputDelta]);
    return planWebgpuReduction(geometry);
  }

  it('splits long reductions over blocks (dense 3×3, small filter, batch × positions long) and sums exactly', async () => {
    // 10 diffDst channels: not a multiple of 4, so blocks rather than taps over 4 channels.
    const plan = await checkAgainstReference([4, 24, 24, 8], [4, 24, 24, 10], {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3]});
    expect(plan.mode).toBe('blocks');
    expect(plan.splits).toBeGreaterThan(1);
  });

  it('splits long reductions over taps (depthwise) and sums exactly', async () => {
    const plan = await checkAgainstReference([2, 30, 30, 4], [2, 30, 30, 4], {strides: [1, 1], autoPad: 'same_upper', groups: 4, filterShape: [3, 3]});
    expect(plan.mode).toBe('taps');
    expect(plan.taps).toBe(3);
    expect(plan.splits).toBeGreaterThan(1);
  });

  /** The filter gradient on webgpu with the unmasked-first flag at `unmaskedFirst`, its plan, and the float64 reference's result. */
  async function runWithSpecials(inputShape: number[], outputDeltaShape: number[], attrs: Record<string, unknown>,
                                 specials: {input?: Array<[number, number]>; outputDelta?: Array<[number, number]>}, unmaskedFirst: number) {
    const op = 'ConvolutionBackpropFilters';
    const geometry = computeGeometry(
        op, {input: {shape: inputShape, dtype: 'float32'}, outputDelta: {shape: outputDeltaShape, dtype: 'float32'}}, attrs);
    const inputValues = seededValues(size(inputShape), 7);
    const outputDeltaValues = seededValues(size(outputDeltaShape), 8);
    for (const [i, v] of specials.input ?? []) inputValues[i] = v;
    for (const [i, v] of specials.outputDelta ?? []) outputDeltaValues[i] = v;
    const expected = referenceForCall(
        false, {shape: inputShape, values: inputValues}, {shape: outputDeltaShape, values: outputDeltaValues}, attrs as unknown as CallAttrs).values;
    const input = madeByOp(inputValues, inputShape);
    const outputDelta = madeByOp(outputDeltaValues, outputDeltaShape);
    tf.env().set(CONV_BACKPROP_FILTERS_WEBGPU_UNMASKED_FIRST, unmaskedFirst);
    try {
      const result = convolutionBackpropFilters(input, outputDelta, attrs as never);
      const actual = await result.data() as Float32Array;
      result.dispose();
      return {actual, expected, plan: planWebgpuReduction(geometry)};
    } finally {
      tf.env().set(CONV_BACKPROP_FILTERS_WEBGPU_UNMASKED_FIRST, 1);
      tf.dispose([input, outputDelta]);
    }
  }

  it('runs products unmasked first, and again masked where a sum is not finite: ±Inf and NaN beside the pads, past the last rows, overflow', async () => {
    // Depthwise 3×3 (one channel an invocation, window sliding one tap) over 9 rows: units of 4
    // rows, the last reaching 3 rows past the image; dense 3×3 with 8 diffDst channels (4 an
    // invocation). Specials where the unmasked pass would multiply them by a pad's 0: diffDst at
    // a corner and at the last position, src in the last row (read for the rows past the image),
    // and finite values whose sum overflows.
    const depthwise = {shapes: [[2, 9, 7, 4], [2, 9, 7, 4]], attrs: {strides: [1, 1], autoPad: 'same_upper', groups: 4, filterShape: [3, 3]}};
    const dense = {shapes: [[2, 6, 6, 3], [2, 6, 6, 8]], attrs: {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3]}};
    const cases = [
      {name: 'depthwise, Inf and NaN in diffDst', ...depthwise, specials: {outputDelta: [[0, Infinity], [9 * 7 * 4 * 2 - 3, NaN]] as Array<[number, number]>}},
      {name: 'depthwise, -Inf in src\'s last row', ...depthwise, specials: {input: [[(8 * 7 + 3) * 4 + 2, -Infinity]] as Array<[number, number]>}},
      {name: 'depthwise, an overflowing sum', ...depthwise, specials: {outputDelta: [[4 * 7 * 4 + 8, 3e38], [4 * 7 * 4 + 12, 3e38]] as Array<[number, number]>,
                                                                       input: [[4 * 7 * 4 + 8, 1e10], [4 * 7 * 4 + 12, 1e10]] as Array<[number, number]>}},
      {name: 'dense, -Inf in diffDst at a corner', ...dense, specials: {outputDelta: [[5 * 8, -Infinity]] as Array<[number, number]>}},
    ];
    for (const c of cases) {
      const first = await runWithSpecials(c.shapes[0], c.shapes[1], c.attrs, c.specials, 1);
      expect(first.plan.unmaskedFirst).withContext(c.name).toBe(true);
      expect(compareWithReference(first.actual, first.expected, 1e-3, 1e-4)).withContext(`${c.name}, unmasked first`).toBeUndefined();
      const masked = await runWithSpecials(c.shapes[0], c.shapes[1], c.attrs, c.specials, 0);
      expect(masked.plan.unmaskedFirst).withContext(c.name).toBe(false);
      expect(compareWithReference(masked.actual, masked.expected, 1e-3, 1e-4)).withContext(`${c.name}, masked`).toBeUndefined();
    }
    // Without specials the unmasked pass adds only ±0 for pads: bit for bit the masked result.
    for (const c of [depthwise, dense]) {
      const first = await runWithSpecials(c.shapes[0], c.shapes[1], c.attrs, {}, 1);
      const masked = await runWithSpecials(c.shapes[0], c.shapes[1], c.attrs, {}, 0);
      expect(Array.from(first.actual)).toEqual(Array.from(masked.actual));
    }
    // Stride 2 with one channel keeps the masked pass.
    expect(planWebgpuReduction(computeGeometry('ConvolutionBackpropFilters', {input: {shape: [1, 8, 8, 4], dtype: 'float32'},
        outputDelta: {shape: [1, 4, 4, 4], dtype: 'float32'}}, {strides: [2, 2], autoPad: 'same_upper', groups: 4, filterShape: [3, 3]})).unmaskedFirst).toBe(false);
  });

  it('runs layers whose src tiles into strides of diffDst in units of src rows: stride 2 with TF\'s and PyTorch\'s pads, units starting mid-image, stride 3, strides 2 × 3, kernels within the stride, neighbours on both sides, stride 1 in small images, 3-D, transposed, NCX; and where it does not', async () => {
    const unitsOf = (plan: Awaited<ReturnType<typeof checkAgainstReference>>) =>
        [plan.mode, plan.tapLanes, plan.srcRowUnits, plan.outputRows, plan.unitNeighbourRows, plan.neighbourPositions];
    // MobileNet's stride-2 depthwise layer in tfjs: 'same_upper' pads only the end, src is twice
    // diffDst; the unit takes the image's 4 rows, a position's last tap the next position's first column.
    const tfSame = await checkAgainstReference([2, 8, 8, 4], [2, 4, 4, 4], {strides: [2, 2], autoPad: 'same_upper', groups: 4, filterShape: [3, 3]});
    expect(unitsOf(tfSame)).toEqual(['taps', 1, true, 4, 'none', 'before']);
    // PyTorch's padding 1 (begin pad 1, the end pad unused): a position's first tap is the
    // position before's last column, and a unit's last src row the next row's first kernel row.
    const torchPad = await checkAgainstReference([2, 10, 10, 2], [2, 5, 5, 2], {strides: [2, 2], padsBegin: [1, 1], padsEnd: [0, 0], groups: 2, filterShape: [3, 3]});
    expect(unitsOf(torchPad)).toEqual(['taps', 1, true, 5, 'none', 'after']);
    const torchMidImage = await checkAgainstReference([2, 24, 10, 3], [2, 12, 5, 3], {strides: [2, 2], padsBegin: [1, 1], padsEnd: [1, 1], groups: 3,
                                                                                filterShape: [3, 3]});
    expect(unitsOf(torchMidImage)).toEqual(['taps', 1, true, 4, 'after', 'after']);
    // Height 12 in units of 4 (the second and third take the row before them), channel multiplier 2, NCX;
    // height 10 in units of 5.
    const midImage = await checkAgainstReference([2, 3, 24, 10], [2, 6, 12, 5], {strides: [2, 2], padsBegin: [0, 0], padsEnd: [1, 2], groups: 3,
                                                                           filterShape: [3, 3], dataFormat: 'NCX'});
    expect(unitsOf(midImage)).toEqual(['taps', 1, true, 4, 'before', 'before']);
    const unitsOf5 = await checkAgainstReference([1, 20, 6, 2], [1, 10, 3, 2], {strides: [2, 2], autoPad: 'same_upper', groups: 2, filterShape: [3, 3]});
    expect(unitsOf(unitsOf5)).toEqual(['taps', 1, true, 5, 'before', 'before']);
    // Stride 3 with a 4 × 4 kernel, 2 src channels a group; strides 2 × 3 over 16 rows in units of 4.
    const stride3 = await checkAgainstReference([2, 9, 12, 4], [2, 3, 4, 2], {strides: [3, 3], padsBegin: [0, 0], padsEnd: [2, 3], groups: 2,
                                                                        filterShape: [4, 4]});
    expect(unitsOf(stride3)).toEqual(['taps', 1, true, 3, 'none', 'before']);
    const mixed = await checkAgainstReference([1, 32, 9, 3], [1, 16, 3, 3], {strides: [2, 3], padsBegin: [0, 0], padsEnd: [2, 1], groups: 3,
                                                                       filterShape: [4, 4]});
    expect(unitsOf(mixed)).toEqual(['taps', 1, true, 4, 'before', 'before']);
    // A kernel within the stride (2 × 2 at stride 2, 2 × 1 at stride 3): no neighbours; a src column past the kernel is never read.
    const withinStride = await checkAgainstReference([2, 16, 12, 2], [2, 8, 4, 2], {strides: [2, 3], groups: 2, filterShape: [2, 2]});
    expect(unitsOf(withinStride)).toEqual(['taps', 1, true, 8, 'none', 'none']);
    const threeD = await checkAgainstReference([2, 3, 8, 6, 2], [2, 3, 4, 3, 2], {strides: [1, 2, 2], padsBegin: [1, 0, 0], padsEnd: [1, 1, 1],
                                                                            groups: 2, filterShape: [3, 3, 3]});
    expect(unitsOf(threeD)).toEqual(['taps', 1, true, 4, 'none', 'before']);
    // The transposed op: its outputDelta is src, its input diffDst.
    const transposed = await checkAgainstReference([2, 4, 3, 3], [2, 8, 6, 3], {strides: [2, 2], padsBegin: [0, 0], padsEnd: [1, 1], groups: 3,
                                                                          filterShape: [3, 3]}, true);
    expect(unitsOf(transposed)).toEqual(['taps', 1, true, 4, 'none', 'before']);
    // A 4 × 4 kernel at stride 2 with a begin pad of 1: taps of the neighbours on both sides, rows and positions.
    const bothSides = await checkAgainstReference([2, 24, 8, 2], [2, 12, 4, 2], {strides: [2, 2], padsBegin: [1, 1], padsEnd: [2, 1], groups: 2,
                                                                           filterShape: [4, 4]});
    expect(unitsOf(bothSides)).toEqual(['taps', 1, true, 4, 'both', 'both']);
    // Stride 1 ('same', pads of 1) in images up to 8 high, one unit an image: MobileNet's
    // conv6/dw (4 × 4) and conv5_x/dw (8 × 8) shapes, and a row one position wide (no neighbours).
    const stride1Small = await checkAgainstReference([2, 4, 4, 4], [2, 4, 4, 4], {strides: [1, 1], autoPad: 'same_upper', groups: 4, filterShape: [3, 3]});
    expect(unitsOf(stride1Small)).toEqual(['taps', 1, true, 4, 'none', 'both']);
    const stride1Eight = await checkAgainstReference([2, 8, 8, 4], [2, 8, 8, 4], {strides: [1, 1], autoPad: 'same_upper', groups: 4, filterShape: [3, 3]});
    expect(unitsOf(stride1Eight)).toEqual(['taps', 1, true, 8, 'none', 'both']);
    const oneWide = await checkAgainstReference([3, 5, 1, 2], [3, 5, 1, 2], {strides: [1, 1], autoPad: 'same_upper', groups: 2, filterShape: [3, 3]});
    expect(unitsOf(oneWide)).toEqual(['taps', 1, true, 5, 'none', 'none']);
    // Not taken: taps reaching two positions further (4 × 4 at stride 1 with no begin pad), stride 1
    // in an image taller than 8, a prime height above 8, a dilation, 4 diffDst channels a group
    // (taps over 4 channels).
    const twoFurther = await checkAgainstReference([1, 6, 6, 2], [1, 6, 6, 2], {strides: [1, 1], padsBegin: [0, 0], padsEnd: [3, 3], groups: 2, filterShape: [4, 4]});
    const tallStride1 = await checkAgainstReference([1, 12, 6, 2], [1, 12, 6, 2], {strides: [1, 1], autoPad: 'same_upper', groups: 2, filterShape: [3, 3]});
    const primeHeight = await checkAgainstReference([1, 22, 6, 2], [1, 11, 3, 2], {strides: [2, 2], autoPad: 'same_upper', groups: 2, filterShape: [3, 3]});
    const dilated = await checkAgainstReference([1, 8, 8, 2], [1, 3, 3, 2], {strides: [2, 2], dilations: [2, 2], padsBegin: [0, 0], padsEnd: [1, 1],
                                                                       groups: 2, filterShape: [3, 3]});
    const fourChannels = await checkAgainstReference([1, 8, 8, 2], [1, 4, 4, 8], {strides: [2, 2], autoPad: 'same_upper', groups: 2, filterShape: [3, 3]});
    expect([twoFurther, tallStride1, primeHeight, dilated, fourChannels].map(plan => plan.srcRowUnits)).toEqual([false, false, false, false, false]);
  });

  it('keeps NaN and ±Inf exact in units of src rows: in src\'s first and last rows and columns (met by no neighbouring position or row), at units\' edges, in diffDst\'s first and last columns, at stride 2 and 1', async () => {
    // src 24 × 10 into diffDst 12 × 5, one channel a group of 2, units of 4 rows; begin pads 0 (the
    // row and position before are neighbours) and 1 (the row and position after).
    const shapes = [[1, 24, 10, 2], [1, 12, 5, 2]];
    const srcAt = (y: number, x: number, c: number) => (y * 10 + x) * 2 + c;
    const diffDstAt = (y: number, x: number, c: number) => (y * 5 + x) * 2 + c;
    const before = {strides: [2, 2], padsBegin: [0, 0], padsEnd: [1, 1], groups: 2, filterShape: [3, 3]};
    const after = {...before, padsBegin: [1, 1], padsEnd: [0, 0]};
    const stride1 = {strides: [1, 1], autoPad: 'same_upper', groups: 2, filterShape: [3, 3]};
    const cases: Array<{name: string; shapes?: number[][]; attrs: Record<string, unknown>; neighbours: string[]; specials: {input?: Array<[number, number]>; outputDelta?: Array<[number, number]>}}> = [
      {name: 'Inf in src at the first row and column', attrs: before, neighbours: ['before', 'before'], specials: {input: [[srcAt(0, 0, 0), Infinity]]}},
      {name: 'NaN in src at a mid-image unit\'s first row, first column', attrs: before, neighbours: ['before', 'before'], specials: {input: [[srcAt(8, 0, 1), NaN]]}},
      {name: '-Inf in src\'s first row, mid-row', attrs: before, neighbours: ['before', 'before'], specials: {input: [[srcAt(0, 3, 1), -Infinity]]}},
      {name: '-Inf in diffDst\'s last column of a unit\'s last row', attrs: before, neighbours: ['before', 'before'], specials: {outputDelta: [[diffDstAt(7, 4, 0), -Infinity]]}},
      {name: 'Inf in src at the last row and column', attrs: after, neighbours: ['after', 'after'], specials: {input: [[srcAt(23, 9, 0), Infinity]]}},
      {name: 'NaN in src at a unit\'s last row, last column', attrs: after, neighbours: ['after', 'after'], specials: {input: [[srcAt(15, 9, 1), NaN]]}},
      {name: '-Inf in diffDst\'s first column of a unit\'s first row', attrs: after, neighbours: ['after', 'after'], specials: {outputDelta: [[diffDstAt(4, 0, 1), -Infinity]]}},
      // Stride 1 over 8 × 8 with pads of 1, one unit an image: neighbours on both sides along the row.
      ...([[0, 0, Infinity], [7, 7, NaN], [0, 7, -Infinity], [7, 0, NaN]] as Array<[number, number, number]>).flatMap(([y, x, value]) => [
        {name: `${value} in src at (${y}, ${x}), stride 1`, shapes: [[1, 8, 8, 2], [1, 8, 8, 2]], attrs: stride1, neighbours: ['none', 'both'],
         specials: {input: [[(y * 8 + x) * 2 + 1, value]] as Array<[number, number]>}},
        {name: `${value} in diffDst at (${y}, ${x}), stride 1`, shapes: [[1, 8, 8, 2], [1, 8, 8, 2]], attrs: stride1, neighbours: ['none', 'both'],
         specials: {outputDelta: [[(y * 8 + x) * 2, value]] as Array<[number, number]>}},
      ]),
    ];
    for (const c of cases) {
      const run = await runWithSpecials((c.shapes ?? shapes)[0], (c.shapes ?? shapes)[1], c.attrs, c.specials, 1);
      expect<unknown[]>([run.plan.srcRowUnits, run.plan.unitNeighbourRows, run.plan.neighbourPositions]).withContext(c.name).toEqual([true, ...c.neighbours]);
      expect(compareWithReference(run.actual, run.expected, 1e-3, 1e-4)).withContext(c.name).toBeUndefined();
    }
  });

  it('packs splits into shared workgroups, splits straddling two, and spreads a small problem over two workgroups', async () => {
    // 12 filter planes × 4 splits = 48 invocations: 2 workgroups of 24, so the second split
    // (invocations 12-23) and the third (24-35) lie in different workgroups from their neighbours.
    const small = await checkAgainstReference([3, 20, 20, 12], [3, 20, 20, 12], {strides: [1, 1], autoPad: 'same_upper', groups: 12, filterShape: [3, 3]});
    expect([small.blocksPerSplit, small.splits, small.workgroups, small.invocationsPerWorkgroup]).toEqual([12, 4, 2, 24]);
    // 4 planes a split, 40 splits: 160 invocations in 3 workgroups of 56 (14 splits each).
    const packed = await checkAgainstReference([8, 40, 40, 4], [8, 40, 40, 4], {strides: [1, 1], autoPad: 'same_upper', groups: 4, filterShape: [3, 3]});
    expect([packed.blocksPerSplit, packed.splits, packed.workgroups, packed.invocationsPerWorkgroup]).toEqual([4, 40, 3, 56]);
    expect(packed.workgroups).toBeLessThan(packed.splits);
  });

  it('runs taps in blocks of 3 + 2 (width 5: a tap beyond the kernel), strided and dilated, channel multiplier 2, NCX', async () => {
    const plan = await checkAgainstReference([2, 3, 7, 12], [2, 6, 6, 3], {strides: [1, 3], dilations: [1, 2], padsBegin: [0, 2], padsEnd: [1, 1],
                                                                      groups: 3, filterShape: [3, 5], dataFormat: 'NCX'});
    expect(plan.mode).toBe('taps');
    expect(plan.taps).toBe(3);
  });

  it('runs taps of one (width 1) and of four (width 8, two blocks), transposed', async () => {
    const one = await checkAgainstReference([3, 6, 5, 4], [3, 6, 5, 4], {strides: [1, 1], groups: 4, filterShape: [1, 1]});
    expect([one.mode, one.taps]).toEqual(['taps', 1]);
    const four = await checkAgainstReference([2, 5, 8], [2, 11, 8], {strides: [2], padsBegin: [3], padsEnd: [2], groups: 8, filterShape: [8]}, true);
    expect([four.mode, four.taps]).toEqual(['taps', 4]);
  });

  it('runs several row and column blocks, channels not multiples of the block (8-row blocks)', async () => {
    const plan = await checkAgainstReference([2, 7, 7, 40], [2, 4, 4, 70], {strides: [2, 2], padsBegin: [1, 0], padsEnd: [1, 1], filterShape: [3, 2]});
    expect(plan.mode).toBe('blocks');
    expect(plan.blockRows).toBe(8);
    expect(Math.ceil(70 / plan.blockRows) * Math.ceil(40 * 6 / BLOCK_COLUMNS)).toBeGreaterThan(2);
  });

  it('runs 4-row blocks (5 diffDst channels per group, grouped, NCX, dilated)', async () => {
    const plan = await checkAgainstReference([2, 6, 9, 9], [2, 10, 8, 5], {strides: [1, 2], dilations: [2, 1], padsBegin: [1, 1], padsEnd: [0, 1],
                                                                       groups: 2, filterShape: [2, 3], dataFormat: 'NCX'});
    expect(plan.mode).toBe('blocks');
    expect(plan.blockRows).toBe(4);
  });

  it('sweeps rows of 12 or more positions in blocks (NXC 8-row, NCX 4-row, 1-D), walks shorter ones', async () => {
    // NXC with diffDst channels not a multiple of 4 (else taps over 4 channels).
    const nxc = await checkAgainstReference([2, 9, 19, 12], [2, 9, 19, 18], {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3]});
    expect([nxc.mode, nxc.blockRows, nxc.rowSweep]).toEqual(['blocks', 8, true]);
    const ncx = await checkAgainstReference([2, 6, 5, 21], [2, 5, 5, 19], {strides: [1, 1], dilations: [1, 2], padsBegin: [1, 2], padsEnd: [0, 0],
                                                                      filterShape: [2, 3], dataFormat: 'NCX'});
    expect([ncx.mode, ncx.blockRows, ncx.rowSweep]).toEqual(['blocks', 4, true]);
    const oneD = await checkAgainstReference([3, 40, 6], [3, 19, 10], {strides: [2], padsBegin: [0], padsEnd: [1], filterShape: [4]});
    expect([oneD.mode, oneD.rowSweep]).toEqual(['blocks', true]);
    const short = await checkAgainstReference([4, 12, 12, 8], [4, 8, 8, 18], {strides: [1, 1], filterShape: [5, 5]});
    expect([short.mode, short.rowSweep]).toEqual(['blocks', false]);
  });

  it('sweeps a 1×1 layer\'s positions as one row (pointwise axes merged)', async () => {
    const plan = await checkAgainstReference([3, 4, 5, 12], [3, 4, 5, 8], {strides: [1, 1], filterShape: [1, 1]});
    expect([plan.mode, plan.rowSweep, plan.reductionRows]).toEqual(['blocks', true, 3]);
    const strided = await checkAgainstReference([3, 7, 7, 8], [3, 4, 4, 8], {strides: [2, 2], filterShape: [1, 1]});
    expect([strided.mode, strided.reductionRows]).toEqual(['blocks', 3 * 4 * 4]);
  });

  it('runs taps in windows: 3 × 3 sliding 1 tap over units of 4 rows, 7 × 3 in row blocks of 4 + 3 sliding 2 taps (stride 2), 1-D', async () => {
    const slide1 = await checkAgainstReference([2, 10, 20, 6], [2, 10, 20, 6], {strides: [1, 1], autoPad: 'same_upper', groups: 6, filterShape: [3, 3]});
    expect([slide1.mode, slide1.tapRows, slide1.taps, slide1.tapShift, slide1.outputRows]).toEqual(['taps', 3, 3, 1, 4]);
    // Units of 4 output rows over a height of 7 (the last unit has 3 rows), dilated along the row, split.
    const partialUnit = await checkAgainstReference([3, 7, 9, 5], [3, 7, 5, 5], {strides: [1, 1], dilations: [1, 2], padsBegin: [1, 0], padsEnd: [1, 0],
                                                                         groups: 5, filterShape: [3, 3]});
    expect([partialUnit.mode, partialUnit.outputRows]).toEqual(['taps', 4]);
    // Units of 4 rows at stride 2 (9 window rows for 12 rows of products) and at dilation 2 along the rows.
    const rowStride2 = await checkAgainstReference([2, 9, 12, 8], [2, 5, 6, 8], {strides: [2, 2], padsBegin: [1, 1], padsEnd: [1, 1], groups: 8,
                                                                           filterShape: [3, 3]});
    expect([rowStride2.mode, rowStride2.outputRows, rowStride2.rowStride, rowStride2.rowDilation, rowStride2.tapShift]).toEqual(['taps', 4, 2, 1, 2]);
    const rowDilation2 = await checkAgainstReference([2, 11, 9, 4], [2, 7, 7, 4], {strides: [1, 1], dilations: [2, 1], groups: 4, filterShape: [3, 3]});
    expect([rowDilation2.mode, rowDilation2.outputRows, rowDilation2.rowStride, rowDilation2.rowDilation]).toEqual(['taps', 4, 1, 2]);
    const slide2 = await checkAgainstReference([2, 11, 23, 4], [2, 4, 11, 8], {strides: [2, 2], padsBegin: [2, 1], padsEnd: [0, 0], groups: 4,
                                                                         filterShape: [7, 3]});
    expect([slide2.mode, slide2.tapRows, slide2.taps, slide2.tapShift, slide2.outputRows]).toEqual(['taps', 4, 3, 2, 1]);
    const oneD = await checkAgainstReference([2, 5, 30], [2, 5, 30], {strides: [1], dilations: [2], padsBegin: [2], padsEnd: [0], groups: 5,
                                                                  filterShape: [2], dataFormat: 'NCX'});
    expect([oneD.mode, oneD.tapRows, oneD.taps, oneD.tapShift]).toEqual(['taps', 1, 2, 2]);
  });

  it('runs layers with a kernel window as taps over 4 diffDst channels at once: 3 × 3 in units of 2 rows, 5 × 5, 7 × 7 strided, grouped, transposed, dense 3-D', async () => {
    const lanesOf = (plan: Awaited<ReturnType<typeof checkAgainstReference>>) => {
      expect(plan.diffDstComponents as number).toBe(plan.tapLanes);
      return [plan.mode, plan.tapLanes, plan.tapRows, plan.taps, plan.tapShift, plan.outputRows];
    };
    const mnist = await checkAgainstReference([3, 9, 14, 1], [3, 9, 14, 8], {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3]});
    expect(lanesOf(mnist)).toEqual(['taps', 4, 3, 3, 1, 2]);
    // Two groups of 3 src and 4 diffDst channels, dilated along the row, over an odd height.
    const grouped = await checkAgainstReference([2, 9, 16, 6], [2, 5, 9, 8], {strides: [1, 1], dilations: [1, 2], padsBegin: [0, 1], padsEnd: [0, 0],
                                                                         groups: 2, filterShape: [5, 5]});
    expect(lanesOf(grouped)).toEqual(['taps', 4, 5, 3, 3, 2]);
    const strided = await checkAgainstReference([1, 20, 20, 3], [1, 10, 10, 12], {strides: [2, 2], padsBegin: [3, 3], padsEnd: [2, 2], filterShape: [7, 7]});
    expect(lanesOf(strided)).toEqual(['taps', 4, 4, 4, 2, 1]);
    // Transposed: src is the op's outputDelta (2 channels), diffDst its input (4 channels); stride 2 along the rows: one row a unit.
    const transposed = await checkAgainstReference([2, 6, 7, 4], [2, 12, 15, 2], {strides: [2, 2], padsBegin: [1, 0], padsEnd: [0, 0],
                                                                             filterShape: [3, 3]}, true);
    expect(lanesOf(transposed)).toEqual(['taps', 4, 3, 3, 2, 1]);
    const dense3d = await checkAgainstReference([2, 4, 6, 7, 12], [2, 4, 6, 7, 8], {strides: [1, 1, 1], autoPad: 'same_upper', filterShape: [3, 3, 3]});
    expect(lanesOf(dense3d)).toEqual(['taps', 4, 3, 3, 1, 2]);
    // diffDst channels not innermost (NCX) or not a multiple of 4, or a 1 × 1 kernel: blocks.
    const ncx = await checkAgainstReference([2, 3, 9, 9], [2, 8, 9, 9], {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3], dataFormat: 'NCX'});
    expect(ncx.mode).toBe('blocks');
    const six = await checkAgainstReference([2, 9, 9, 3], [2, 9, 9, 6], {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3]});
    expect(six.mode).toBe('blocks');
    const pointwise = await checkAgainstReference([2, 5, 5, 3], [2, 5, 5, 8], {strides: [1, 1], filterShape: [1, 1]});
    expect(pointwise.mode).toBe('blocks');
  });

  it('reads 4 diffDst channels as one vec4 where taps take 4 (grouped, transposed, 3-D), with the results of 4 f32 reads', async () => {
    const problems: Array<{shapes: number[][]; attrs: Record<string, unknown>; transposed?: boolean}> = [
      {shapes: [[2, 9, 10, 6], [2, 9, 10, 8]], attrs: {strides: [1, 1], autoPad: 'same_upper', groups: 2, filterShape: [3, 3]}},
      // Transposed: the op's input (12 channels) is diffDst.
      {shapes: [[2, 5, 6, 12], [2, 10, 13, 3]], attrs: {strides: [2, 2], padsBegin: [1, 0], padsEnd: [0, 0], filterShape: [3, 3]}, transposed: true},
      {shapes: [[1, 3, 5, 6, 4], [1, 3, 5, 6, 8]], attrs: {strides: [1, 1, 1], autoPad: 'same_upper', filterShape: [2, 3, 3]}},
    ];
    for (const p of problems) {
      const op = p.transposed ? 'ConvTransposeBackpropFilters' : 'ConvolutionBackpropFilters';
      const geometry = computeGeometry(op, {input: {shape: p.shapes[0], dtype: 'float32'}, outputDelta: {shape: p.shapes[1], dtype: 'float32'}}, p.attrs);
      const input = madeByOp(seededValues(size(p.shapes[0]), 11), p.shapes[0]);
      const outputDelta = madeByOp(seededValues(size(p.shapes[1]), 12), p.shapes[1]);
      const run = async (vec4Reads: number) => {
        tf.env().set(CONV_BACKPROP_FILTERS_WEBGPU_VEC4_READS, vec4Reads);
        try {
          expect(planWebgpuReduction(geometry).diffDstComponents).toBe(vec4Reads ? 4 : 1);
          const result = (p.transposed ? convTransposeBackpropFilters : convolutionBackpropFilters)(input, outputDelta, p.attrs as never);
          const values = Array.from(await result.data() as Float32Array);
          result.dispose();
          return values;
        } finally {
          tf.env().set(CONV_BACKPROP_FILTERS_WEBGPU_VEC4_READS, 1);
        }
      };
      expect(await run(1)).withContext(JSON.stringify(p.attrs)).toEqual(await run(0));
      tf.dispose([input, outputDelta]);
    }
    await checkAgainstReference(problems[1].shapes[0], problems[1].shapes[1], problems[1].attrs, true);
  });

  it('compiles no new shader for a new batch size or new spatial sizes', async () => {
    const cache = () => Object.keys((tf.backend() as unknown as {pipelineCache: Record<string, unknown>}).pipelineCache)
                            .filter(key => key.startsWith('ConvBackpropFilters')).length;
    const problems = [
      // blocks, channels inner; taps (depthwise); blocks, kernel inner (NCX); each with a split
      {input: [9, 9, 8], outputDelta: [9, 9, 8], attrs: {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3]}},
      {input: [9, 9, 4], outputDelta: [5, 5, 4], attrs: {strides: [2, 2], padsBegin: [1, 1], padsEnd: [1, 1], groups: 4, filterShape: [3, 3]}},
      {input: [8, 9, 9], outputDelta: [8, 9, 9], attrs: {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3], dataFormat: 'NCX'}},
    ];
    const compiledAt = async (batch: number) => {
      const before = cache();
      for (const p of problems) {
        const input = madeByOp(seededValues(batch * size(p.input), batch), [batch, ...p.input]);
        const outputDelta = madeByOp(seededValues(batch * size(p.outputDelta), batch + 1), [batch, ...p.outputDelta]);
        const result = convolutionBackpropFilters(input, outputDelta, p.attrs as never);
        await result.data();
        tf.dispose([result, input, outputDelta]);
      }
      return cache() - before;
    };
    await compiledAt(2);
    expect((await compiledAt(3)) + (await compiledAt(7))).toBe(0);
  });

  it('returns a zero gradient for a batch of 0', async () => {
    const input = tf.zeros([0, 4, 4, 2]);
    const outputDelta = tf.zeros([0, 2, 2, 3]);
    const result = convTransposeBackpropFilters(outputDelta, input, {strides: [2, 2], filterShape: [2, 2]});
    expect(result.shape).toEqual([2, 2, 3, 2]);
    expect(Array.from(await result.data())).toEqual(new Array(24).fill(0));
    tf.dispose([input, outputDelta, result]);
  });
});

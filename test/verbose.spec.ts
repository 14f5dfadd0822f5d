import * as tf from '@tensorflow/tfjs-core';

import {CONV_BACKPROP_FILTERS_THREADS, CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, CONV_BACKPROP_FILTERS_VERBOSE, CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD, CONV_BACKPROP_FILTERS_WASM_SIMD, convolutionBackpropFilters, convTransposeBackpropFilters, simdThreadsReady} from '../kernels/index';
import {DEFAULT_THREADS_MIN_MFLOP} from '../kernels/host/simd/simd_filter_gradient';
import {SUITE_THREADS} from './helpers/setup';
import {VERBOSE_PREFIX} from '../src/verbose';

/**
 * CONV_BACKPROP_FILTERS_VERBOSE: one line per kernel call naming the op, the backend, the path
 * the kernel took, the problem and the time (src/verbose.ts); nothing when the flag is off.
 */
describe('the verbose line', () => {
  let lines: string[];
  beforeEach(async () => {
    await simdThreadsReady();  // the suite's threads (test/helpers/setup.ts), whatever ran before
    lines = [];
    spyOn(console, 'log').and.callFake((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
  });
  afterEach(async () => {
    tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, false);
    tf.env().set(CONV_BACKPROP_FILTERS_WASM_SIMD, true);
    tf.env().set(CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD, false);
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS, SUITE_THREADS);
    tf.env().set(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, 0);
    expect(await tf.setBackend('cpu')).toBe(true);
  });

  const input = () => tf.ones([2, 5, 9, 3]);
  const outputDelta = () => tf.ones([2, 3, 3, 4]);
  const attrs = {strides: [2, 2], padsBegin: [1, 1], padsEnd: [1, 0], dilations: [1, 2], filterShape: [3, 3]};

  function verboseLines() {
    return lines.filter(line => line.startsWith(VERBOSE_PREFIX));
  }

  it('is silent when the flag is off (its default)', () => {
    expect(tf.env().getBool(CONV_BACKPROP_FILTERS_VERBOSE)).toBe(false);
    tf.tidy(() => convolutionBackpropFilters(input(), outputDelta(), attrs));
    expect(verboseLines()).toEqual([]);
  });

  // The suite runs the SIMD path on SUITE_THREADS threads with no threshold (test/helpers/setup.ts).
  const threaded = `simd threads=${SUITE_THREADS}`;
  const cases: Array<{backend: string; simd: boolean; path: string; flags?: Record<string, number>; note?: string}> = [
    {backend: 'cpu', simd: true, path: threaded},
    {backend: 'cpu', simd: true, path: 'simd threads=1', flags: {[CONV_BACKPROP_FILTERS_THREADS]: 1}, note: 'one thread'},
    {
      backend: 'cpu', simd: true, path: 'simd threads=1 (below threshold)',
      flags: {[CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP]: DEFAULT_THREADS_MIN_MFLOP}, note: 'the default threshold',
    },
    {backend: 'cpu', simd: false, path: 'loops'},
    {backend: 'cpu-loops', simd: true, path: 'loops'},
    {backend: 'wasm', simd: true, path: threaded},
    {
      backend: 'wasm', simd: true, path: 'simd threads=1 (below threshold)',
      flags: {[CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP]: DEFAULT_THREADS_MIN_MFLOP}, note: 'the default threshold',
    },
    {backend: 'wasm', simd: false, path: 'loops'},
    {backend: 'cpu-composite', simd: true, path: 'composite'},
  ];
  for (const {backend, simd, path, flags, note} of cases) {
    it(`names the path on ${backend}${simd ? '' : ' with SIMD off'}${note ? ` (${note})` : ''}: ${path}`, async () => {
      expect(await tf.setBackend(backend)).toBe(true);
      expect(tf.getBackend()).toBe(backend);
      tf.env().set(CONV_BACKPROP_FILTERS_WASM_SIMD, simd);
      for (const [flag, value] of Object.entries(flags ?? {})) tf.env().set(flag, value);
      tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, true);
      tf.tidy(() => convolutionBackpropFilters(input(), outputDelta(), attrs));
      const printed = verboseLines();
      expect(printed.length).toBe(1);
      const fields = printed[0].split(',');
      expect(fields.slice(0, 5)).toEqual([VERBOSE_PREFIX, 'exec', backend, 'ConvolutionBackpropFilters', path]);
      expect(fields[5]).toBe(
          'input:2x5x9x3 outputDelta:2x3x3x4 filter:3x3x3x4 NXC/XIO g1 s2x2 d1x2 pb1x1 pe1x0');
      expect(Number(fields[6])).toBeGreaterThanOrEqual(0);
      expect(fields.length).toBe(7);
    });
  }

  // The tensorflow kernel names TensorFlow's kernel it ran, or the composite with the reason
  // (tfjs-node when it loads, else the test backend of that name: test/backends.ts).
  const tensorflowCases = [
    {what: 'a valid problem', attrs: {strides: [2, 2], filterShape: [3, 3]}, input: [2, 7, 7, 3], outputDelta: [2, 3, 3, 4],
     path: 'native Conv2DBackpropFilter', problem: 'input:2x7x7x3 outputDelta:2x3x3x4 filter:3x3x3x4 NXC/XIO g1 s2x2 d1x1 pb0x0 pe0x0'},
    {what: 'a valid depthwise one', attrs: {strides: [1, 1], groups: 3, filterShape: [3, 3]}, input: [1, 5, 5, 3], outputDelta: [1, 3, 3, 3],
     path: 'native DepthwiseConv2dNativeBackpropFilter', problem: 'input:1x5x5x3 outputDelta:1x3x3x3 filter:3x3x1x3 NXC/XIO g3 s1x1 d1x1 pb0x0 pe0x0'},
    {what: 'a valid 3-D one', attrs: {strides: [1, 1, 1], filterShape: [2, 2, 2]}, input: [1, 3, 3, 3, 2], outputDelta: [1, 2, 2, 2, 2],
     path: 'native Conv3DBackpropFilterV2', problem: 'input:1x3x3x3x2 outputDelta:1x2x2x2x2 filter:2x2x2x2x2 NXC/XIO g1 s1x1x1 d1x1x1 pb0x0x0 pe0x0x0'},
    {what: 'a dilated one', attrs, input: [2, 5, 9, 3], outputDelta: [2, 3, 3, 4], path: 'composite (dilated)',
     problem: 'input:2x5x9x3 outputDelta:2x3x3x4 filter:3x3x3x4 NXC/XIO g1 s2x2 d1x2 pb1x1 pe1x0'},
    {what: 'a padded one', attrs: {strides: [1, 1], autoPad: 'same_upper', filterShape: [3, 3]}, input: [1, 4, 4, 2], outputDelta: [1, 4, 4, 2],
     path: 'composite (reads-padding)', problem: 'input:1x4x4x2 outputDelta:1x4x4x2 filter:3x3x2x2 NXC/XIO g1 s1x1 d1x1 pb1x1 pe1x1'},
  ];
  for (const c of tensorflowCases) {
    it(`names the path on tensorflow, ${c.what}: ${c.path}`, async () => {
      expect(await tf.setBackend('tensorflow')).toBe(true);
      tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, true);
      tf.tidy(() => convolutionBackpropFilters(tf.ones(c.input), tf.ones(c.outputDelta), c.attrs as never));
      const printed = verboseLines();
      expect(printed.length).toBe(1);
      const fields = printed[0].split(',');
      expect(fields.slice(0, 6)).toEqual([VERBOSE_PREFIX, 'exec', 'tensorflow', 'ConvolutionBackpropFilters', c.path, c.problem]);
      expect(Number(fields[6])).toBeGreaterThanOrEqual(0);
      expect(fields.length).toBe(7);
    });
  }

  it('says when the relaxed-SIMD build ran', async () => {
    const registry = (tf.env() as unknown as {flagRegistry: Record<string, {evaluationFn: () => boolean}>}).flagRegistry;
    if (!registry[CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD].evaluationFn()) {
      pending('this engine does not validate relaxed SIMD (Node 20 needs --experimental-wasm-relaxed-simd)');
      return;
    }
    tf.env().set(CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD, true);
    tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, true);
    tf.tidy(() => convolutionBackpropFilters(input(), outputDelta(), attrs));
    expect(verboseLines().map(line => line.split(',')[4])).toEqual([`simd relaxed threads=1 (workers starting)`]);
  });

  it('prints one line per call, under the name the kernel was called by, for the transposed op too', () => {
    tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, true);
    tf.tidy(() => {
      convTransposeBackpropFilters(tf.ones([1, 3, 3, 2]), tf.ones([1, 5, 5, 4]), {strides: [1, 1], filterShape: [3, 3]});
      tf.engine().runKernel(
          'ConvTransposeBackwardWeights', {input: tf.ones([1, 3, 3, 2]), outputDelta: tf.ones([1, 5, 5, 4])},
          {strides: [1, 1], filterShape: [3, 3]});
    });
    const printed = verboseLines().map(line => line.split(','));
    expect(printed.map(fields => fields[3])).toEqual(['ConvTransposeBackpropFilters', 'ConvTransposeBackwardWeights']);
    // The problem names the op's own input and outputDelta (not the canonical src and diffDst).
    expect(printed[0][5]).toBe('input:1x3x3x2 outputDelta:1x5x5x4 filter:3x3x2x4 NXC/XIO g1 s1x1 d1x1 pb0x0 pe0x0');
    expect(printed[1][5]).toContain('filter:3x3x4x2 NXC/XOI');
  });

  it('prints nothing for a call that throws', () => {
    tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, true);
    expect(() => tf.tidy(() => convolutionBackpropFilters(input(), outputDelta(), {...attrs, strides: [1, 1]})))
        .toThrowError(/outputDelta spatial shape/);
    expect(verboseLines()).toEqual([]);
  });
});

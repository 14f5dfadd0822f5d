/**
 * CONV_BACKPROP_FILTERS_VERBOSE on webgl and webgpu: one line per kernel call naming the op, the
 * backend, the pass the kernel's plan chose and its splits, the problem and the time, as
 * test/verbose.spec.ts checks on cpu, wasm and tensorflow; nothing when the flag is off.
 */
import '@tensorflow/tfjs-backend-webgl';

import * as tf from '@tensorflow/tfjs-core';

import {CONV_BACKPROP_FILTERS_VERBOSE, convolutionBackpropFilters, convTransposeBackpropFilters} from '../../kernels/index';
import {VERBOSE_PREFIX} from '../../src/verbose';
import {useWebgpuBackend, webgpuExposed} from '../helpers/webgpu_backend';

const PROBLEM = 'input:2x5x9x3 outputDelta:2x3x3x4 filter:3x3x3x4 NXC/XIO g1 s2x2 d1x2 pb1x1 pe1x0';
const ATTRS = {strides: [2, 2], padsBegin: [1, 1], padsEnd: [1, 0], dilations: [1, 2], filterShape: [3, 3]};

function captureVerboseLines(): () => string[] {
  const lines: string[] = [];
  spyOn(console, 'log').and.callFake((...args: unknown[]) => {
    lines.push(args.map(String).join(' '));
  });
  return () => lines.filter(line => line.startsWith(VERBOSE_PREFIX));
}

function checkLines(backend: string) {
  afterEach(() => tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, false));

  it('is silent when the flag is off', async () => {
    const verboseLines = captureVerboseLines();
    const dW = tf.tidy(() => convolutionBackpropFilters(tf.ones([2, 5, 9, 3]), tf.ones([2, 3, 3, 4]), ATTRS));
    await dW.data();
    dW.dispose();
    expect(verboseLines()).toEqual([]);
  });

  it('prints one line per call: op, backend, the pass and its splits, the problem, the time', async () => {
    expect(tf.getBackend()).toBe(backend);
    const verboseLines = captureVerboseLines();
    tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, true);
    const dW = tf.tidy(() => convolutionBackpropFilters(tf.ones([2, 5, 9, 3]), tf.ones([2, 3, 3, 4]), ATTRS));
    const dWt = tf.tidy(() => convTransposeBackpropFilters(tf.ones([1, 3, 3, 2]), tf.ones([1, 5, 5, 4]), {strides: [1, 1], filterShape: [3, 3]}));
    // Each value of the transposed one sums 3·3 products of ones (no tap reads padding): the lines come with real results.
    expect((await dWt.data()).every(v => v === 9)).withContext('transposed: 9 products of ones each').toBe(true);
    await dW.data();
    tf.dispose([dW, dWt]);
    const printed = verboseLines().map(line => line.split(','));
    expect(printed.length).toBe(2);
    for (const fields of printed) {
      expect(fields.length).toBe(7);
      expect(fields.slice(0, 3)).toEqual([VERBOSE_PREFIX, 'exec', backend]);
      expect(fields[4]).withContext('the path: the pass and its splits').toMatch(/^[A-Za-z][A-Za-z0-9 -]* splits=\d+$/);
      expect(Number(fields[6])).toBeGreaterThanOrEqual(0);
    }
    expect(printed.map(fields => fields[3])).toEqual(['ConvolutionBackpropFilters', 'ConvTransposeBackpropFilters']);
    expect(printed[0][5]).toBe(PROBLEM);
    expect(printed[1][5]).toBe('input:1x3x3x2 outputDelta:1x5x5x4 filter:3x3x2x4 NXC/XIO g1 s1x1 d1x1 pb0x0 pe0x0');
  });
}

describe('the verbose line on webgl:', () => {
  beforeAll(async () => {
    expect(await tf.setBackend('webgl')).toBe(true);
  });
  checkLines('webgl');
});

if (webgpuExposed) {
  describe('the verbose line on webgpu:', () => {
    useWebgpuBackend();
    afterAll(async () => {
      await tf.setBackend('webgl');
    });
    checkLines('webgpu');
  });
} else {
  describe('the verbose line on webgpu:', () => {
    it('is checked where Chromium exposes WebGPU', () =>
        pending('skipped: navigator.gpu is missing (Chromium needs --enable-unsafe-webgpu --use-webgpu-adapter=swiftshader)'));
  });
}

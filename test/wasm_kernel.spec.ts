import * as tf from '@tensorflow/tfjs-core';
import type {BackendWasm} from '@tensorflow/tfjs-backend-wasm';

import {CONV_BACKPROP_FILTERS_WASM_SIMD, ConvolutionBackpropFilters, convolutionBackpropFilters, convTransposeBackpropFilters} from '../kernels/index';
import {CPU_LOOPS} from './helpers/composite_backends';
import {SimdProblem, SIMD_PROBLEMS} from './helpers/simd_problems';
import {seededTensor, selectBackend} from './helpers/util';

/**
 * The wasm kernel (kernels/wasm): the cpu kernel's computation over views on tfjs-backend-wasm's
 * heap. Same code on the same data, so it must match the cpu kernel bit for bit on both of its
 * paths; and it must read the inputs without readSync, allocate nothing on the heap but the
 * result, survive the heap growing under it, and keep every memory flat over many calls. (The
 * case table, golden, error, hostile, fuzz and memory-load specs run it as the `wasm` backend.)
 */
interface WasmHeap {
  readonly wasm: {readonly HEAPU8: Uint8Array};
}

const wasmBackend = () => tf.engine().findBackend('wasm') as BackendWasm & WasmHeap;

/** The result's bits and shape on `backend` (every tensor disposed). */
async function gradientOn(backend: string, p: SimdProblem): Promise<{bits: Uint32Array; shape: number[]}> {
  await selectBackend(backend);
  const input = seededTensor(p.input, 1);
  const outputDelta = seededTensor(p.outputDelta, 2);
  const op = p.op === 'conv' ? convolutionBackpropFilters : convTransposeBackpropFilters;
  const result = op(input, outputDelta, p.attrs);
  const gradient = {bits: new Uint32Array(Float32Array.from(result.dataSync()).buffer), shape: result.shape};
  tf.dispose([input, outputDelta, result]);
  return gradient;
}

async function withSimd<T>(enabled: boolean, f: () => Promise<T>): Promise<T> {
  const saved = tf.env().getBool(CONV_BACKPROP_FILTERS_WASM_SIMD);
  tf.env().set(CONV_BACKPROP_FILTERS_WASM_SIMD, enabled);
  try {
    return await f();
  } finally {
    tf.env().set(CONV_BACKPROP_FILTERS_WASM_SIMD, saved);
  }
}

describe('wasm kernel (views on tfjs-backend-wasm\'s heap)', () => {
  beforeAll(async () => {
    expect(await tf.setBackend('wasm')).toBe(true);
  });
  afterAll(async () => {
    await tf.setBackend('cpu');
  });

  for (const p of SIMD_PROBLEMS) {
    it(`is bit-identical to the cpu kernel, SIMD and loops: ${p.name}`, async () => {
      const simd = await gradientOn('wasm', p);
      const cpu = await gradientOn('cpu', p);
      expect(simd.shape).toEqual(cpu.shape);
      expect(simd.bits).withContext('WebAssembly SIMD').toEqual(cpu.bits);
      const loops = await withSimd(false, () => gradientOn('wasm', p));
      expect(loops.bits).withContext(`${CONV_BACKPROP_FILTERS_WASM_SIMD} false`).toEqual((await gradientOn(CPU_LOOPS, p)).bits);
    });
  }

  it('reads its inputs from the heap (no readSync) and allocates only the result there', async () => {
    await selectBackend('wasm');
    const backend = wasmBackend();
    const input = seededTensor([2, 9, 9, 6], 3);
    const outputDelta = seededTensor([2, 9, 9, 4], 4);
    const attrs = {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]};
    const expected = convolutionBackpropFilters(input, outputDelta, attrs);
    const readSync = spyOn(backend, 'readSync').and.callThrough();
    const makeOutput = spyOn(backend, 'makeOutput').and.callThrough();
    const write = spyOn(backend, 'write').and.callThrough();
    const dataIdsBefore = backend.numDataIds();
    const result = tf.engine().runKernel(ConvolutionBackpropFilters, {input, outputDelta}, attrs) as tf.Tensor;
    expect(readSync).not.toHaveBeenCalled();
    expect(makeOutput).toHaveBeenCalledTimes(1);
    expect(write).toHaveBeenCalledTimes(1);  // makeOutput's own malloc
    expect(backend.numDataIds()).toBe(dataIdsBefore + 1);
    expect(result.dataSync()).toEqual(expected.dataSync());
    tf.dispose([input, outputDelta, expected, result]);
  });

  it('writes into the result and reads its inputs where they are when the heap grows in makeOutput', async () => {
    await selectBackend('wasm');
    const backend = wasmBackend();
    const p = SIMD_PROBLEMS[0];
    const expected = await gradientOn('cpu', p);
    await selectBackend('wasm');
    const input = seededTensor(p.input, 1);
    const outputDelta = seededTensor(p.outputDelta, 2);
    const makeOutput = backend.makeOutput.bind(backend);
    const fillers: tf.TensorInfo[] = [];
    // Allocates 16 MiB blocks until the heap's buffer is replaced (at most 2 GiB), then the output.
    spyOn(backend, 'makeOutput').and.callFake((...args: Parameters<BackendWasm['makeOutput']>) => {
      const buffer = backend.wasm.HEAPU8.buffer;
      while (backend.wasm.HEAPU8.buffer === buffer && fillers.length < 128) {
        fillers.push(makeOutput([4 * 2 ** 20], 'float32'));
      }
      return makeOutput(...args);
    });
    const bufferBefore = backend.wasm.HEAPU8.buffer;
    // The fillers are data ids the kernel call leaves behind: tfjs's IS_TEST leak check is off for it.
    const isTest = tf.env().getBool('IS_TEST');
    tf.env().set('IS_TEST', false);
    let result: tf.Tensor;
    try {
      result = convolutionBackpropFilters(input, outputDelta, p.attrs);
    } finally {
      tf.env().set('IS_TEST', isTest);
    }
    expect(backend.wasm.HEAPU8.buffer).withContext('the heap grew during the call').not.toBe(bufferBefore);
    for (const filler of fillers) backend.disposeData(filler.dataId);
    expect(new Uint32Array(Float32Array.from(result.dataSync()).buffer)).toEqual(expected.bits);
    tf.dispose([input, outputDelta, result]);
  });

  it('takes inputs held by the cpu backend without moving them', async () => {
    await selectBackend('cpu');
    const p = SIMD_PROBLEMS[2];
    const expected = await gradientOn('cpu', p);
    await selectBackend('cpu');
    const input = seededTensor(p.input, 1);
    const outputDelta = seededTensor(p.outputDelta, 2);
    const cpu = tf.backend();
    await selectBackend('wasm');
    const result = convolutionBackpropFilters(input, outputDelta, p.attrs);
    expect(new Uint32Array(Float32Array.from(result.dataSync()).buffer)).toEqual(expected.bits);
    expect([input, outputDelta].every(t => tf.engine().state.tensorInfo.get(t.dataId)?.backend === cpu)).toBe(true);
    tf.dispose([input, outputDelta, result]);
  });

  it('keeps the heap, the micro-kernels\' memory and tf.memory() flat over 300 calls of mixed shapes', async () => {
    await selectBackend('wasm');
    const backend = wasmBackend();
    const tensors = SIMD_PROBLEMS.map(p => [seededTensor(p.input, 1), seededTensor(p.outputDelta, 2)]);
    const callAll = () => SIMD_PROBLEMS.forEach((p, i) => {
      const op = p.op === 'conv' ? convolutionBackpropFilters : convTransposeBackpropFilters;
      op(tensors[i][0], tensors[i][1], p.attrs).dispose();
    });
    callAll();  // every shape once: memories reach their size
    const heap = backend.wasm.HEAPU8.length;
    const memory = tf.memory();
    const dataIds = backend.numDataIds();
    const grow = spyOn(WebAssembly.Memory.prototype, 'grow').and.callThrough();
    for (let round = 0; round < Math.ceil(300 / SIMD_PROBLEMS.length); round++) callAll();
    expect(grow).withContext('WebAssembly memory growth after the first pass').not.toHaveBeenCalled();
    expect(backend.wasm.HEAPU8.length).toBe(heap);
    expect(backend.numDataIds()).toBe(dataIds);
    expect(tf.memory().numTensors).toBe(memory.numTensors);
    expect(tf.memory().numBytes).toBe(memory.numBytes);
    tf.dispose(tensors.flat());
  });
});

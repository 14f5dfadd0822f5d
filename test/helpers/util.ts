import * as tf from '@tensorflow/tfjs-core';

/** Deterministic values in [-1, 1) (mulberry32), so every failure reproduces from its seed. */
export function seededValues(count: number, seed: number): Float32Array {
  let state = seed >>> 0;
  const values = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    values[i] = ((((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1);
  }
  return values;
}

export function seededTensor(shape: number[], seed: number): tf.Tensor {
  return tf.tensor(seededValues(shape.reduce((a, b) => a * b, 1), seed), shape, 'float32');
}

/** The parts of tfjs-webgpu's backend a leak check reads (duck-typed: no backend code here). */
interface WebgpuBackendCounts {
  bufferManager: {getNumUsedBuffers(): number};
  numDataIds(): number;
  ensureCommandEncoderReady(): void;
  endComputePassEncoder(): void;
  submitQueue(): void;
}

/**
 * The current backend when it is tfjs-webgpu's, after submitting its queued work: tfjs releases
 * what a disposed tensor held (its buffer, its data id) only when it submits, so counts taken
 * without this move with whatever happens to be queued. Undefined on other backends.
 */
export function settledWebgpuBackend(): WebgpuBackendCounts | undefined {
  const webgpu = tf.backend() as Partial<WebgpuBackendCounts>;
  if (webgpu.bufferManager === undefined || webgpu.submitQueue === undefined) return undefined;
  webgpu.ensureCommandEncoderReady!();
  webgpu.endComputePassEncoder!();
  webgpu.submitQueue();
  return webgpu as WebgpuBackendCounts;
}

/**
 * What a call could leak: engine tensors and, on webgl, textures in use by the backend; on
 * webgpu, its data ids and GPU buffers in use (settled, see settledWebgpuBackend).
 */
export function resourceCounts(): {tensors: number; textures?: number; dataIds?: number; buffers?: number} {
  const webgpu = settledWebgpuBackend();
  if (webgpu !== undefined) {
    return {tensors: tf.memory().numTensors, dataIds: webgpu.numDataIds(), buffers: webgpu.bufferManager.getNumUsedBuffers()};
  }
  const backend = tf.backend() as {getTextureManager?: () => {getNumUsedTextures(): number}};
  const textures = backend.getTextureManager?.().getNumUsedTextures();
  return textures === undefined ? {tensors: tf.memory().numTensors} : {tensors: tf.memory().numTensors, textures};
}

/**
 * Runs `f` and fails the spec if it leaves tensors behind (its result, disposed by the caller,
 * is the only tensor it may add). Returns what `f` returned.
 */
export function withoutLeaks<T>(f: () => T, allowed = 0): T {
  const before = tf.memory().numTensors;
  const result = f();
  const added = tf.memory().numTensors - before;
  expect(added).withContext('tensors left behind').toBe(allowed);
  return result;
}

/** Elementwise |a − b| ≤ atol + rtol·|b| with a readable message naming the first mismatch. */
export function expectClose(
    actual: ArrayLike<number>, expected: ArrayLike<number>, context: string, atol = 1e-5, rtol = 1e-5) {
  expect(actual.length).withContext(`${context}: length`).toBe(expected.length);
  let worst = -1;
  let worstExcess = 0;
  for (let i = 0; i < expected.length; i++) {
    const excess = Math.abs(actual[i] - expected[i]) - (atol + rtol * Math.abs(expected[i]));
    if (!(excess <= 0) && (worst < 0 || excess > worstExcess || Number.isNaN(excess))) {
      worst = i;
      worstExcess = excess;
    }
  }
  if (worst >= 0) {
    fail(`${context}: element ${worst} is ${actual[worst]}, expected ${expected[worst]} (atol ${atol}, rtol ${rtol})`);
  } else {
    expect(worst).toBe(-1);
  }
}

/**
 * Selects backend `name` and fails the spec unless tfjs switched to it: tf.setBackend resolves
 * false when the backend cannot start, and a comparison of two backends run without that check
 * may compare one backend with itself.
 */
export async function selectBackend(name: string): Promise<void> {
  expect(await tf.setBackend(name)).withContext(`tf.setBackend('${name}')`).toBe(true);
  expect(tf.getBackend()).withContext('tf.getBackend()').toBe(name);
}

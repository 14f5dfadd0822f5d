/**
 * The high-water mark of tfjs tensor memory during a call, counting each data buffer once.
 *
 * tf.memory().numBytes (and tf.profile's peakBytes, built on it) adds a tensor's bytes for every
 * tensor, so reshapes and other views of one buffer count again: a composite kernel holding many
 * views reads several times its real memory. This wraps the engine's trackTensor / removeDataId
 * (where a data buffer enters and leaves the engine's bookkeeping) and sums the bytes of the
 * distinct data buffers, keeping the maximum. Works on every backend; needs no Node module.
 */
import * as tf from '@tensorflow/tfjs-core';

interface EngineInternals {
  /** A WeakMap keyed by data id: it cannot be enumerated, so the count is relative to a call's start. */
  state: {tensorInfo: {has(dataId: object): boolean; get(dataId: object): {bytes: number} | undefined}};
  trackTensor(tensor: {dataId: object}, backend: unknown): void;
  removeDataId(dataId: object, backend: unknown): void;
}

let hooked = false;
let live = 0;
let highWater = 0;

function engine(): EngineInternals {
  return tf.engine() as unknown as EngineInternals;
}

function hook() {
  if (hooked) return;
  hooked = true;
  const e = engine();
  const track = e.trackTensor.bind(e);
  e.trackTensor = (tensor, backend) => {
    const known = e.state.tensorInfo.has(tensor.dataId);
    track(tensor, backend);
    if (!known) {
      live += e.state.tensorInfo.get(tensor.dataId)?.bytes ?? 0;
      highWater = Math.max(highWater, live);
    }
  };
  const remove = e.removeDataId.bind(e);
  e.removeDataId = (dataId, backend) => {
    const info = e.state.tensorInfo.get(dataId);
    remove(dataId, backend);
    if (info !== undefined && !e.state.tensorInfo.has(dataId)) live -= info.bytes;
  };
}

/**
 * Runs `call`, returning its result and the peak of distinct tensor bytes during it above the
 * bytes before it (the result's own buffers included while they are live).
 */
export async function peakTensorBytes<T>(call: () => Promise<T>| T): Promise<{result: T; peakBytes: number}> {
  hook();
  live = 0;  // bytes of buffers created minus buffers removed since the call began
  highWater = 0;
  const result = await call();
  return {result, peakBytes: highWater};
}

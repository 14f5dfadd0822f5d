import {env} from '@tensorflow/tfjs-core';

import {opError} from '../errors';
import {OpName} from '../names';
import {registerFlagOnce} from '../tuning_flags';

/**
 * The tfjs flag bounding the memory of one chunk of the composite (node/wasm) kernels, in bytes:
 * `tf.env().set('CONV_BACKPROP_FILTERS_CHUNK_BYTES', 256 * 2 ** 20)`. Default 64 MiB; `Infinity`
 * means one chunk whatever the size. Registered when the package is imported.
 */
export const CONV_BACKPROP_FILTERS_CHUNK_BYTES = 'CONV_BACKPROP_FILTERS_CHUNK_BYTES';
export const DEFAULT_CHUNK_BYTES = 64 * 2 ** 20;

/**
 * Registers the flag (idempotent: a second copy of the package registering it again changes
 * nothing, and a value already set is kept).
 */
export function registerChunkBytesFlag() {
  registerFlagOnce(CONV_BACKPROP_FILTERS_CHUNK_BYTES, () => DEFAULT_CHUNK_BYTES);
}

/** The budget in force for a call of `op`; a value that is not a positive number is an error. */
export function chunkBudgetBytes(op: OpName): number {
  registerChunkBytesFlag();
  const value = env().get(CONV_BACKPROP_FILTERS_CHUNK_BYTES) as unknown;
  if (typeof value !== 'number' || !(value > 0)) {
    throw opError(op, `tfjs flag '${CONV_BACKPROP_FILTERS_CHUNK_BYTES}'`, 'must be a positive number of bytes', value);
  }
  return value;
}

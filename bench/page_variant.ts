/**
 * The browser side of `--variant FLAG=VALUE` (bench/webgl_page.ts, bench/webgpu_page.ts): ours
 * timed again with a tfjs flag set.
 */
import * as tf from '@tensorflow/tfjs-core';

import type {TuningVariant} from './report';

/** `call`, made to run with the variant's tfjs flag set and the previous value put back after. */
export function withVariant<T>(variant: TuningVariant, call: () => T): () => T {
  return () => {
    const saved = tf.env().get(variant.flag);
    tf.env().set(variant.flag, variant.value);
    try {
      return call();
    } finally {
      tf.env().set(variant.flag, saved);
    }
  };
}

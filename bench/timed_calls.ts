import * as tf from '@tensorflow/tfjs-core';

/**
 * ms per call of `calls` back-to-back calls of `call`, with one read-back of the last result
 * (what a user waits for: the backend may run calls asynchronously until a read); the results
 * are disposed after. Shared by `npm run bench` (Node) and bench:browser-threads (the page).
 */
export function msPerCall(call: () => tf.Tensor, calls: number): number {
  const results: tf.Tensor[] = [];
  const start = performance.now();
  for (let i = 0; i < calls; i++) results.push(call());
  results[calls - 1].dataSync();
  const elapsed = performance.now() - start;
  tf.dispose(results);
  return elapsed / calls;
}

/**
 * Calls in a timed run of about `runMs` when one call takes `singleMs`: at least one, at most
 * `maxCalls` (DESIGN.md §7: small problems amortized). Shared by `npm run bench`,
 * bench:browser-threads and bench:webgl.
 */
export function callsPerRun(singleMs: number, runMs: number, maxCalls: number): number {
  return Math.max(1, Math.min(maxCalls, Math.round(runMs / Math.max(singleMs, 1e-3))));
}

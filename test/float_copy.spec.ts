import {copyFloats, SharedCopyMethod, sharedCopyMethod} from '../kernels/host/simd/float_copy';

/**
 * The copies into and out of the threads' shared memory (kernels/host/simd/float_copy.ts): every
 * way of copying, both directions, every alignment of the two ends mod 8 bytes, lengths across the
 * staging buffer's 16,384 floats; each copy must write exactly its range.
 */
describe('copies into and out of shared memory (float_copy.ts)', () => {
  const hasShared = typeof SharedArrayBuffer !== 'undefined';
  const nodeMajor = Number((globalThis as {process?: {versions?: {node?: string}}}).process?.versions?.node?.split('.')[0]);
  const isNode = !Number.isNaN(nodeMajor) && typeof (globalThis as {Deno?: unknown}).Deno === 'undefined' &&
      typeof (globalThis as {Bun?: unknown}).Bun === 'undefined';

  it('takes a memmove in Node ≥ 22 and stages V8\'s misaligned copies elsewhere', () => {
    const method = sharedCopyMethod();
    if (!isNode || !hasShared) {
      console.log(`float_copy.spec: outside Node (or without SharedArrayBuffer) the copies take: ${method}`);
      expect(method).not.toBe('memmove');
      return;
    }
    // Node 20 has no memmove; whether it stages is timed (V8's misaligned copies: 'staged set').
    if (nodeMajor >= 22) expect(method).toBe('memmove');
    else expect(method).not.toBe('memmove');
  });

  const methods: SharedCopyMethod[] = sharedCopyMethod() === 'memmove' ? ['memmove', 'staged set', 'set'] : ['staged set', 'set'];
  const lengths = [0, 1, 2, 7, 16384, 16385, 40001];
  for (const method of methods) {
    for (const direction of ['into shared', 'out of shared', 'unshared'] as const) {
      it(`copies ${direction} memory exactly with ${method}, at every alignment`, () => {
        if (!hasShared && direction !== 'unshared') {
          console.log(`float_copy.spec: ${direction} skipped: no SharedArrayBuffer here`);
          expect(hasShared).toBeFalse();
          return;
        }
        const bufferOf = (shared: boolean, floats: number) =>
            shared ? new SharedArrayBuffer(4 * floats) : new ArrayBuffer(4 * floats);
        for (const length of lengths) {
          for (const fromShift of [0, 1]) {
            for (const toShift of [0, 1]) {
              const space = length + 8;
              const from = new Float32Array(bufferOf(direction === 'out of shared', space), 4 * fromShift, length);
              for (let i = 0; i < length; i++) from[i] = i + 0.25;
              const whole = new Float32Array(bufferOf(direction === 'into shared', space)).fill(-1);
              const to = whole.subarray(toShift);
              const at = 2;
              copyFloats(from, to, at, method);
              const wrong = [...whole.keys()].find(i => {
                const index = i - toShift - at;
                return whole[i] !== (index >= 0 && index < length ? index + 0.25 : -1);
              });
              expect(wrong).withContext(`length ${length}, from at float ${fromShift}, to at float ${toShift}`)
                  .toBeUndefined();
            }
          }
        }
      });
    }
  }
});

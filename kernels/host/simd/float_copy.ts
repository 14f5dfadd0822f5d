/**
 * Copies of float arrays into and out of the threads' shared WebAssembly memory.
 *
 * Into or out of a SharedArrayBuffer, V8's `TypedArray.prototype.set` copies 8-byte words one at a
 * time (so that a racing thread never sees torn words): 20–29 GB/s on this machine in Node 20,
 * 13–15 in Node 24, against up to 47 into unshared memory, and byte by byte, at 3.4–4 GB/s, where
 * the source and the destination disagree mod 8 bytes (Node, Deno, Chromium). Bun's
 * JavaScriptCore copies either way at full speed. Node ≥ 22's `Buffer.prototype.copy` copies the
 * bytes of any two views with one `memmove` (up to 47 GB/s at any alignment; `npm run bench:copy`
 * gives each way's figures). The threads never read what the calling thread copies in until it
 * publishes the step (an atomic store), and it copies the filter out once they have finished, so
 * a plain copy is as safe as V8's word copy.
 */

/** Node's `Buffer.prototype.copy`, called with typed arrays of any element type. */
type ByteCopy = (this: ArrayBufferView, target: ArrayBufferView, targetStart: number, sourceStart: number,
                 sourceEnd: number) => number;

type NodeProcess = {getBuiltinModule?: (name: string) => unknown; versions?: {node?: string}};

/**
 * Node's `Buffer.prototype.copy` where it copies the bytes of a Float32Array into a view of a
 * SharedArrayBuffer correctly: Node 20 rejects a source that is not a Uint8Array (and copies like
 * `set` where it accepts one), a bundler's Buffer polyfill may count the offsets in elements. A
 * probe copy decides, once.
 */
function nodeByteCopy(): ByteCopy|undefined {
  const nodeProcess = (globalThis as {process?: NodeProcess}).process;
  if (nodeProcess?.versions?.node === undefined || typeof SharedArrayBuffer === 'undefined') return undefined;
  try {
    const buffer = nodeProcess.getBuiltinModule?.('node:buffer') as {Buffer?: {prototype: {copy: ByteCopy}}}|undefined;
    const copy = buffer?.Buffer?.prototype.copy;
    if (typeof copy !== 'function') return undefined;
    const target = new Float32Array(new SharedArrayBuffer(24), 4, 4);
    // Both views offset and misaligned with each other mod 8 bytes, as an odd sample's lines are.
    const written = copy.call(new Float32Array([0, 1.5, 2.5, 3.5]).subarray(1), target, 4, 0, 8);
    return written === 8 && target.join() === '0,1.5,2.5,0' ? copy : undefined;
  } catch {
    return undefined;
  }
}

const byteCopy = nodeByteCopy();

/**
 * How this engine copies into and out of shared memory: `memmove` where Node has one; else `set`
 * through a staging buffer (`staged set`) where `set` between ends that disagree mod 8 bytes is
 * more than twice as slow as between ends that agree (V8: Chromium, Node 20, Deno), else `set`
 * (Bun, whose misaligned copies run at full speed and would be halved by staging). Decided on
 * first use, in under a millisecond.
 */
export type SharedCopyMethod = 'memmove'|'staged set'|'set';
let chosenMethod: SharedCopyMethod|undefined;
export function sharedCopyMethod(): SharedCopyMethod {
  chosenMethod ??= byteCopy !== undefined ? 'memmove' : misalignedSetIsSlow() ? 'staged set' : 'set';
  return chosenMethod;
}

/**
 * Times `set` of 512 KiB into shared memory from an aligned and a misaligned source, the best of 3
 * each. Without a clock (a bare JavaScript context has no `performance`) it answers yes: staging
 * costs JavaScriptCore some speed, while V8 without it copies misaligned lines byte by byte.
 */
function misalignedSetIsSlow(): boolean {
  if (typeof SharedArrayBuffer === 'undefined') return false;
  if (typeof performance === 'undefined') return true;
  const floats = 131072;
  const target = new Float32Array(new SharedArrayBuffer(4 * floats));
  const source = new Float32Array(floats + 1);
  const fastest = (shift: number) => {
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const start = performance.now();
      target.set(source.subarray(shift, shift + floats));
      best = Math.min(best, performance.now() - start);
    }
    return best;
  };
  fastest(0);
  return fastest(1) > 2 * fastest(0);
}

/** Floats a staged copy passes through at a time (64 KiB: it stays in cache). */
const STAGING_FLOATS = 16384;
let staging: Float32Array|undefined;

const isShared = (array: Float32Array) =>
    typeof SharedArrayBuffer !== 'undefined' && array.buffer instanceof SharedArrayBuffer;

/**
 * Copies `from` into `to` at element `at`, either of them possibly in shared memory, the way
 * `method` says. A staged copy whose two ends disagree mod 8 bytes (as every other sample's do
 * when a sample has an odd number of floats) goes through a small unshared buffer placed to agree
 * with the shared end: a plain memcpy, then an aligned word copy.
 */
export function copyFloats(from: Float32Array, to: Float32Array, at: number, method?: SharedCopyMethod) {
  const toShared = isShared(to);
  if (!toShared && !isShared(from)) {
    to.set(from, at);
    return;
  }
  method ??= sharedCopyMethod();
  if (method === 'memmove' && byteCopy !== undefined) {
    byteCopy.call(from, to, 4 * at, 0, from.byteLength);
    return;
  }
  const toByte = to.byteOffset + 4 * at;
  if (method === 'set' || ((from.byteOffset - toByte) & 7) === 0) {
    to.set(from, at);
    return;
  }
  staging ??= new Float32Array(STAGING_FLOATS + 1);
  // The staging copy agrees mod 8 bytes with whichever end is shared.
  const shift = toShared ? (toByte & 7) >> 2 : (from.byteOffset & 7) >> 2;
  for (let done = 0; done < from.length; done += STAGING_FLOATS) {
    const count = Math.min(STAGING_FLOATS, from.length - done);
    staging.set(from.subarray(done, done + count), shift);
    to.set(staging.subarray(shift, shift + count), at + done);
  }
}

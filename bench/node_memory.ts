/**
 * Memory probes for the Node benchmark (bench/cpu.ts). Import this module before any module that
 * instantiates WebAssembly: it wraps WebAssembly.Instance / instantiate / Memory so that every
 * WebAssembly memory created afterwards (tfjs-backend-wasm's heap, this package's SIMD kernel)
 * is seen, whatever its loader.
 *
 * - peakRss: the process's resident-set high-water mark during a call, from Linux's
 *   /proc/self/status VmHWM after resetting it through /proc/self/clear_refs ("5"), minus the
 *   resident set just before the call: the extra memory the call touched at its peak (typed-array
 *   scratch buffers, WebAssembly memory growth, tfjs tensors). Unavailable elsewhere (null).
 * - wasmBytes: the summed size of every WebAssembly memory seen (a memory only grows).
 * - collectGarbage: a full V8 GC before a probe, so earlier garbage does not hide or add to it.
 */
import * as fs from 'fs';
import * as v8 from 'v8';
import * as vm from 'vm';

const memories = new Set<WebAssembly.Memory>();

function collect(instance: WebAssembly.Instance | undefined) {
  if (instance == null) return;
  for (const value of Object.values(instance.exports)) {
    if (value instanceof WebAssembly.Memory) memories.add(value);
  }
}

function collectImports(imports: unknown) {
  if (imports == null || typeof imports !== 'object') return;
  for (const module of Object.values(imports as Record<string, unknown>)) {
    if (module == null || typeof module !== 'object') continue;
    for (const value of Object.values(module as Record<string, unknown>)) {
      if (value instanceof WebAssembly.Memory) memories.add(value);
    }
  }
}

let hooked = false;

function hookWebAssembly() {
  if (hooked) return;
  hooked = true;
  const wasm = WebAssembly as unknown as Record<string, unknown>;
  const OriginalInstance = WebAssembly.Instance;
  wasm.Instance = new Proxy(OriginalInstance, {
    construct(target, args, newTarget) {
      collectImports(args[1]);
      const instance = Reflect.construct(target, args, newTarget) as WebAssembly.Instance;
      collect(instance);
      return instance;
    },
  });
  const OriginalMemory = WebAssembly.Memory;
  wasm.Memory = new Proxy(OriginalMemory, {
    construct(target, args, newTarget) {
      const memory = Reflect.construct(target, args, newTarget) as WebAssembly.Memory;
      memories.add(memory);
      return memory;
    },
  });
  type Result = WebAssembly.WebAssemblyInstantiatedSource | WebAssembly.Instance;
  const track = (result: Result) => {
    collect(result instanceof OriginalInstance ? result : (result as WebAssembly.WebAssemblyInstantiatedSource).instance);
    return result;
  };
  const instantiate = WebAssembly.instantiate as (...args: unknown[]) => Promise<Result>;
  wasm.instantiate = (...args: unknown[]) => {
    collectImports(args[1]);
    return instantiate.apply(WebAssembly, args).then(track);
  };
  if (typeof WebAssembly.instantiateStreaming === 'function') {
    const streaming = WebAssembly.instantiateStreaming as (...args: unknown[]) => Promise<Result>;
    wasm.instantiateStreaming = (...args: unknown[]) => {
      collectImports(args[1]);
      return streaming.apply(WebAssembly, args).then(track);
    };
  }
}
hookWebAssembly();

/** Bytes of the WebAssembly memories created since this module loaded (those `select` picks, or all). */
export function wasmBytes(select: (memory: WebAssembly.Memory) => boolean = () => true): number {
  let total = 0;
  for (const memory of memories) {
    if (select(memory)) total += memory.buffer.byteLength;
  }
  return total;
}

export function wasmMemoryCount(): number {
  return memories.size;
}

let gcFunction: (() => void) | undefined;

/** A full garbage collection (V8's gc, exposed at run time). */
export function collectGarbage() {
  if (gcFunction === undefined) {
    v8.setFlagsFromString('--expose-gc');
    gcFunction = vm.runInNewContext('gc') as () => void;
  }
  gcFunction();
}

function statusKiB(field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s*(\\d+)\\s*kB`, 'm').exec(fs.readFileSync('/proc/self/status', 'utf8'));
  if (!match) throw new Error(`no ${field} in /proc/self/status`);
  return Number(match[1]);
}

let rssProbeWorks: boolean | undefined;

/** Whether the peak resident set can be reset and read here (Linux ≥ 4.0 with /proc). */
export function peakRssAvailable(): boolean {
  if (rssProbeWorks === undefined) {
    try {
      fs.writeFileSync('/proc/self/clear_refs', '5');
      rssProbeWorks = statusKiB('VmHWM') > 0;
    } catch {
      rssProbeWorks = false;
    }
  }
  return rssProbeWorks;
}

export interface MemoryProbe<T> {
  readonly result: T;
  /** Peak resident bytes during the call above the resident bytes before it; null if unavailable. */
  readonly peakRssBytes: number | null;
  /** Growth of the selected WebAssembly memories during the call. */
  readonly wasmGrowthBytes: number;
  /** Their total after the call. */
  readonly wasmBytesAfter: number;
}

/**
 * Runs `call` once after a GC, measuring the peak resident set and the growth of the WebAssembly
 * memories `select` picks (all by default).
 */
export async function probeMemory<T>(call: () => Promise<T>| T, select?: (memory: WebAssembly.Memory) => boolean):
    Promise<MemoryProbe<T>> {
  collectGarbage();
  const rss = peakRssAvailable();
  const wasmBefore = wasmBytes(select);
  let before = 0;
  if (rss) {
    fs.writeFileSync('/proc/self/clear_refs', '5');
    before = statusKiB('VmRSS');
  }
  const result = await call();
  const peak = rss ? statusKiB('VmHWM') : 0;
  const wasmAfter = wasmBytes(select);
  return {
    result,
    peakRssBytes: rss ? Math.max(0, peak - before) * 1024 : null,
    wasmGrowthBytes: wasmAfter - wasmBefore,
    wasmBytesAfter: wasmAfter,
  };
}

/**
 * The script of a worker thread of the micro-kernels, bundled by scripts/build_wasm.mjs into a
 * string (thread_worker.generated.ts) that thread_pool.ts starts: with `worker_threads` and
 * `eval: true` in Node, from a Blob URL in browsers. It receives the compiled module, the shared
 * memory, where the control words are and its own index; instantiates the module on that
 * memory; sets its READY bit; then parks in Atomics.wait on its own wake word, and each time it
 * is woken (a step of a job published) claims and runs ready tasks like the calling thread
 * (thread_protocol.ts). It never spins.
 */
import {blockForProgress, claimAndRun, CONTROL_WORDS, READY, WAKE, WORKERS_WANTED} from './thread_protocol';

interface Start {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  controlAt: number;
  index: number;
}

function serve({module, memory, controlAt, index}: Start, report: (message: unknown) => void) {
  let runTask: (job: number, task: number) => void;
  try {
    runTask = (new WebAssembly.Instance(module, {env: {memory}}).exports as {runTask: typeof runTask}).runTask;
  } catch (e) {
    report({failed: String(e)});
    return;
  }
  const control = new Int32Array(memory.buffer, controlAt, CONTROL_WORDS);
  Atomics.or(control, READY, 1 << index);
  report({ready: index});
  for (;;) {
    const wake = Atomics.load(control, WAKE + index);
    if (index < Atomics.load(control, WORKERS_WANTED)) claimAndRun(memory, control, index + 1, runTask, blockForProgress);
    Atomics.wait(control, WAKE + index, wake);
  }
}

type NodeProcess = {getBuiltinModule?: (name: string) => unknown};
type WorkerThreads = {parentPort: {postMessage(message: unknown): void}; workerData: Start};
// Node ≥ 20.16 has getBuiltinModule; before, a script run with `eval: true` sees require as a global.
const scope = globalThis as {process?: NodeProcess; require?: (name: string) => unknown};
const workerThreads = (scope.process?.getBuiltinModule?.('node:worker_threads') ??
                       scope.require?.('node:worker_threads')) as WorkerThreads | undefined;
if (workerThreads?.parentPort) {
  serve(workerThreads.workerData, message => workerThreads.parentPort.postMessage(message));
} else {
  const web = globalThis as unknown as {onmessage: ((event: {data: Start}) => void) | null; postMessage(m: unknown): void};
  web.onmessage = event => {
    web.onmessage = null;
    serve(event.data, message => web.postMessage(message));
  };
}

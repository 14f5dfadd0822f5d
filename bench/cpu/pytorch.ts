import {spawn} from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as readline from 'readline';

import {COLORS} from '../report';

import {Impl} from './implementations';

/** PyTorch, as a child process answering one JSON line per command (bench/pytorch_server.py). */
export interface PyTorchHello {
  torch: string;
  threads: number;
  mkldnn: boolean;
  python: string;
}

export class PyTorch {
  private readonly pending: Array<(line: string) => void> = [];
  private exited = false;

  private constructor(private readonly child: ReturnType<typeof spawn>) {
    readline.createInterface({input: child.stdout!}).on('line', line => this.pending.shift()?.(line));
    child.on('exit', () => {
      this.exited = true;
      for (const resolve of this.pending.splice(0)) resolve(JSON.stringify({error: 'python exited'}));
    });
  }

  /**
   * Starts a server on `threads` threads, with `env` added to this process's environment; a
   * string says why PyTorch is skipped.
   */
  static async start(threads: number, env: Record<string, string> = {}): Promise<{torch: PyTorch; hello: PyTorchHello}|string> {
    const python = process.env.CONV_BENCH_PYTHON || '/usr/bin/python3';
    if (!fs.existsSync(python)) return `${python} not found (set CONV_BENCH_PYTHON)`;
    const child = spawn(
        python, [path.join(__dirname, '..', 'pytorch_server.py'), String(threads)],
        {stdio: ['pipe', 'pipe', 'pipe'], env: {...process.env, ...env}});
    let stderr = '';
    child.stderr!.on('data', chunk => stderr += String(chunk));
    const torch = new PyTorch(child);
    const hello = await torch.request<PyTorchHello>({op: 'hello'}).catch((e: Error) => e);
    if (hello instanceof Error) {
      torch.stop();
      const lastLine = stderr.trim().split('\n').pop() ?? '';
      return `${python} could not run PyTorch (${lastLine || hello.message})`;
    }
    return {torch, hello};
  }

  request<T>(command: object): Promise<T> {
    if (this.exited) return Promise.reject(new Error('python exited'));
    return new Promise<T>((resolve, reject) => {
      this.pending.push(line => {
        const answer = JSON.parse(line) as T & {error?: string};
        if (answer.error !== undefined) reject(new Error(`PyTorch: ${answer.error}`));
        else resolve(answer);
      });
      this.child.stdin!.write(`${JSON.stringify(command)}\n`);
    });
  }

  stop() {
    this.child.stdin!.end();
  }
}

/**
 * After a call on more than one thread, PyTorch's OpenMP workers (libgomp, OMP_WAIT_POLICY unset,
 * as a PyTorch user runs it) spin before they sleep: 7.6–8.0 ms of a core's time after a 2-thread
 * call of MobileNet-0.25 conv2_1/sep here (process CPU time over 10–500 ms of idle after the call;
 * 0.1 ms with OMP_WAIT_POLICY=PASSIVE). The next implementation's timed run would share a core
 * with them, so after each such call the bench waits this long, untimed.
 */
const OPENMP_SETTLE_MS = 20;

/** PyTorch on one server's threads: 'pytorch' on 1 thread, 'pytorchThreads' on N. */
export function pytorchImpl(torch: PyTorch, hello: PyTorchHello, key: 'pytorch'|'pytorchThreads'): Impl {
  return {
    key,
    label: `PyTorch ${hello.torch.replace(/a0$/, '')} (${hello.threads} thread${hello.threads === 1 ? '' : 's'})`,
    color: key === 'pytorch' ? COLORS.pytorch : '#ffbb78',
    threads: hello.threads,
    runs: options => options.runs,
    setUp: async (problem, batch) => {
      try {
        await torch.request({op: 'setup', problem: {...problem, batch}});  // includes one untimed call
      } catch (error) {
        // PyTorch failing on one workload leaves its column empty there; the run goes on.
        process.stderr.write(`  PyTorch skipped on ${problem.name}: ${(error as Error).message}\n`);
        return null;
      }
      return {
        async warmUp() {
          const {peakRssBytes} = await torch.request<{peakRssBytes: number | null}>({op: 'memory'});
          return {values: null, ms: NaN, memory: {peakRss: peakRssBytes, wasmGrowth: null, wasmTotal: null, tfPeak: null}};
        },
        // PyTorch times its call itself (no read-back to amortize): one call per run.
        call: async () => {
          const {ms} = await torch.request<{ms: number}>({op: 'call'});
          if (hello.threads > 1) await new Promise(resolve => setTimeout(resolve, OPENMP_SETTLE_MS));
          return ms;
        },
        dispose: async () => void await torch.request({op: 'free'}),
      };
    },
  };
}

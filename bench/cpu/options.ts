import * as path from 'path';
import {parseArgs} from 'util';

/** The options of `npm run bench` (see bench/cpu.ts). */
export interface Options {
  runs: number;
  keyRuns: number;
  only: string[] | null;
  pytorch: boolean;
  builtIn: boolean;
  trainingRuns: number;
  training: 'yes'|'no'|'only';
  /** The "all threads" columns: this many threads (null: CONV_BACKPROP_FILTERS_THREADS's default). */
  threads: number | null;
  /** CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP for the run (null: its default). */
  minMflop: number | null;
  /** Adds ours on cpu with the relaxed-SIMD build, the other cpu rows forced to the plain one. */
  relaxedAb: boolean;
  /** Skips the TypeScript loops (slow on the big layers). */
  loops: boolean;
  out: string | null;
}

export const USAGE = `npm run bench [-- options]
  --runs N            timed runs per implementation and workload (default 5)
  --key-runs N        timed runs on the key workloads (ResNet-50 res2/res3 3x3, the built-in's shape; default 15, at least --runs)
  --training-runs N   timed runs per implementation on each training layer (default 15)
  --threads N         the "all threads" columns on N threads (default: CONV_BACKPROP_FILTERS_THREADS's default, the
                      cores this machine reports, at most 8); PyTorch gets the same number
  --min-mflop X       CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP for the run: problems under X MFLOP stay on one
                      thread (default: the flag's, docs/threads.md); 0 threads every problem
  --only a,b          only the workloads whose name contains one of these
  --relaxed-ab        adds ours on cpu with the relaxed-SIMD build (1 and N threads), the other cpu rows forced to
                      the plain build (turns on V8's --experimental-wasm-relaxed-simd where needed)
  --no-pytorch        skip PyTorch;  --no-builtin  skip tfjs's built-in cpu kernel (its one run takes ~15 s)
  --no-loops          skip the TypeScript loops
  --no-training       skip the training layers;  --training-only  only them
  --out DIR           where to write the results (default bench/results; '-' writes nothing)`;

const positive = (name: string, text: string | undefined, fallback: number) => {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} needs a positive integer, got '${text}'\n${USAGE}`);
  return value;
};

export function parseOptions(argv: readonly string[]): Options {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        'runs': {type: 'string'},
        'key-runs': {type: 'string'},
        'training-runs': {type: 'string'},
        'threads': {type: 'string'},
        'min-mflop': {type: 'string'},
        'only': {type: 'string'},
        'relaxed-ab': {type: 'boolean'},
        'no-pytorch': {type: 'boolean'},
        'no-builtin': {type: 'boolean'},
        'no-loops': {type: 'boolean'},
        'no-training': {type: 'boolean'},
        'training-only': {type: 'boolean'},
        'out': {type: 'string'},
        'help': {type: 'boolean'},
      },
    }).values;
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${USAGE}`);
  }
  if (parsed.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (parsed['no-training'] && parsed['training-only']) throw new Error('--no-training and --training-only exclude each other');
  const out = parsed.out ?? path.resolve(__dirname, '..', 'results');
  const minMflop = parsed['min-mflop'] === undefined ? null : Number(parsed['min-mflop']);
  if (minMflop !== null && !(minMflop >= 0)) throw new Error(`--min-mflop needs a number ≥ 0, got '${parsed['min-mflop']}'\n${USAGE}`);
  return {
    runs: positive('runs', parsed.runs, 5),
    keyRuns: positive('key-runs', parsed['key-runs'], 15),
    trainingRuns: positive('training-runs', parsed['training-runs'], 15),
    threads: parsed.threads === undefined ? null : positive('threads', parsed.threads, 1),
    minMflop,
    only: parsed.only === undefined ? null : parsed.only.split(',').filter(s => s !== ''),
    relaxedAb: parsed['relaxed-ab'] ?? false,
    pytorch: !parsed['no-pytorch'],
    builtIn: !parsed['no-builtin'],
    loops: !parsed['no-loops'],
    training: parsed['no-training'] ? 'no' : parsed['training-only'] ? 'only' : 'yes',
    out: out === '-' ? null : path.resolve(out),
  };
}

/** The options as they were given, for the report's command line. */
export function commandLine(argv: readonly string[]): string {
  return `npm run bench${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}`;
}

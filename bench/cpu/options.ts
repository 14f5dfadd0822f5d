import {commandLine as parsedCommandLine, commaList, outOption, positiveInteger, switchOption, valueOption} from '../args';

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
  /** Each thread of ours, and PyTorch's, on a CPU of its own (bench/pin_threads.ts). */
  pin: boolean;
  /** Ours on N threads with the adaptive choice on, as a user has it (CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE). */
  adaptive: boolean;
  out: string | null;
  /**
   * The result files' name: 'cpu' for the default run, with '-training' (--training-only),
   * '-threads<N>' (--threads), '-min-mflop<X>' (--min-mflop), '-relaxed-ab', '-pinned' (--pin), '-adaptive' and, on a Node other
   * than 20 (this machine's), '-node<major>' appended, so bench/results holds the latest run of
   * each kind.
   */
  resultName: string;
}

/**
 * The Node major of this machine (and CI): its runs write the unsuffixed result files. A run on
 * another Node (`npx -p node@24 npm run bench`: relaxed SIMD on by default, a newer V8) writes
 * files of its own.
 */
const MACHINE_NODE_MAJOR = 20;

function nodeMajor(): number {
  return Number(process.versions.node.split('.')[0]);
}

function nonNegativeNumber(text: string, flag: string): number {
  const value = Number(text);
  if (text.trim() === '' || !(value >= 0)) throw new Error(`${flag} needs a number ≥ 0, got '${text}'`);
  return value;
}

/** The command line (bench/args.ts); `npm run bench -- --help` prints it. */
const COMMAND = {
  usage: 'npm run bench [-- options]',
  summary: "Ours on cpu and wasm on 1 thread and on N threads, PyTorch (channels-last) on the same threads, tfjs's\n" +
      'built-in cpu kernel, on the ResNet/GoogLeNet layers and shapes_tfjs_training. Writes cpu.{md,json,svg}.',
  options: {
    'runs': valueOption('N', 'timed runs per implementation and workload (TypeScript loops: at most 5)', 9, positiveInteger),
    'key-runs': valueOption('N', "timed runs on the key workloads (ResNet-50 res2/res3 3x3, the built-in's shape; at least --runs)", 15, positiveInteger),
    'training-runs': valueOption('N', 'timed runs per implementation on each training layer', 15, positiveInteger),
    'threads': valueOption('N', 'the "all threads" columns on N threads; PyTorch gets the same number', null as number | null,
        positiveInteger, "CONV_BACKPROP_FILTERS_THREADS's: the cores reported, at most 8"),
    'min-mflop': valueOption('X', 'CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP for the run: problems under X MFLOP stay on one thread; 0 threads every problem',
        null as number | null, nonNegativeNumber, "the flag's (docs/threads.md)"),
    'only': valueOption('a,b', 'only the workloads whose name contains one of these', null as string[] | null, commaList),
    'relaxed-ab': switchOption("adds ours on cpu with the relaxed-SIMD build (1 and N threads), the other cpu rows forced to the plain build (turns on V8's --experimental-wasm-relaxed-simd where needed)"),
    'pin': switchOption("each thread on a CPU of its own: ours (taskset: the calling thread on CPU 0, the workers on 1, 2, …) and PyTorch's (OMP_PROC_BIND, OMP_PLACES); Linux. Not what a user's process gets: it shows what threads give when the OS cannot put a woken worker on the calling thread's core (docs/threads.md)"),
    'adaptive': switchOption("ours on N threads with the adaptive choice on (CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE), as a user has it: a problem runs on one thread while its calls on threads measure slower; the N-thread columns then time what a user's calls get, the tries of the other way included (docs/threads.md)"),
    'no-pytorch': switchOption('skip PyTorch'),
    'no-builtin': switchOption("skip tfjs's built-in cpu kernel (its one run takes ~15 s)"),
    'no-loops': switchOption('skip the TypeScript loops'),
    'no-training': switchOption('skip the training layers'),
    'training-only': switchOption('only the training layers'),
    'out': outOption(),
  },
};

export function parseOptions(argv: readonly string[]): Options {
  const values = parsedCommandLine(COMMAND, argv);
  if (values['no-training'] && values['training-only']) throw new Error('--no-training and --training-only exclude each other');
  // --relaxed-ab starts a second pool in the middle of the run, whose workers would not be pinned.
  if (values.pin && values['relaxed-ab']) throw new Error('--pin and --relaxed-ab exclude each other');
  return {
    runs: values.runs,
    keyRuns: values['key-runs'],
    trainingRuns: values['training-runs'],
    threads: values.threads,
    minMflop: values['min-mflop'],
    only: values.only,
    relaxedAb: values['relaxed-ab'],
    pytorch: !values['no-pytorch'],
    builtIn: !values['no-builtin'],
    loops: !values['no-loops'],
    pin: values.pin,
    adaptive: values.adaptive,
    training: values['no-training'] ? 'no' : values['training-only'] ? 'only' : 'yes',
    out: values.out,
    resultName: ['cpu', values['training-only'] ? 'training' : null, values.threads !== null ? `threads${values.threads}` : null,
                 values['min-mflop'] !== null ? `min-mflop${values['min-mflop']}` : null, values['relaxed-ab'] ? 'relaxed-ab' : null, values.pin ? 'pinned' : null,
                 values.adaptive ? 'adaptive' : null,
                 nodeMajor() !== MACHINE_NODE_MAJOR ? `node${nodeMajor()}` : null]
                    .filter(part => part !== null).join('-'),
  };
}

/** The options as they were given, for the report's command line. */
export function commandLine(argv: readonly string[]): string {
  return `npm run bench${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}`;
}

/** The options of `npm run bench:browser-threads` (see bench/browser_threads.ts). */
import {commaList, OptionValues, outOption, positiveInteger, switchOption, valueOption} from './args';

/** `--quick`: these layers (two picked, three training ones: dense, 1×1, depthwise under the threshold), few runs. */
export const QUICK = {
  picks: ['resnet_50:res2a_branch2b', 'mobilenet:conv3_1/dw'],
  training: ['tfjs-cifar:conv4', 'tfjs-mobilenet025:conv3_1/sep', 'tfjs-mobilenet025:conv2_1/dw'],
  runs: 3,
} as const;

/** The command line (bench/args.ts); `npm run bench:browser-threads -- --help` prints it. */
export const BROWSER_THREADS_COMMAND = {
  usage: 'npm run bench:browser-threads [-- options]',
  summary: 'Ours on cpu and wasm on 1 thread and on N threads (Web Workers) in headless Chromium, on the\n' +
      "cross-origin-isolated karma page; `npm run bench`'s layers. Writes cpu-browser.{md,json}.",
  options: {
    'threads': valueOption('N', 'the threaded columns on N threads (CONV_BACKPROP_FILTERS_THREADS); other than 2: cpu-browser-threads<N>.*',
        2, positiveInteger),
    'quick': switchOption(`a smoke run: ${QUICK.picks.length + QUICK.training.length} layers, at most ${
        QUICK.runs} timed runs each; writes cpu-browser-quick.*`),
    'runs': valueOption('N', 'timed runs per implementation and picked layer', 5, positiveInteger),
    'key-runs': valueOption('N', 'timed runs on the key layers (ResNet-50 res2a/res3a_branch2b; at least --runs)', 15, positiveInteger),
    'training-runs': valueOption('N', 'timed runs per implementation on each training layer', 15, positiveInteger),
    'only': valueOption('a,b', 'only the layers whose name contains one of these', null as string[] | null, commaList),
    'pin': switchOption('the page\'s main thread on CPU 0 and each Web Worker on CPU 1, 2, … (taskset; Linux): what ' +
        'threads give where the OS cannot put a woken worker on the main thread\'s CPU, not what a user\'s page gets ' +
        '(docs/threads.md); writes cpu-browser-pinned.*'),
    'adaptive': switchOption('the N-thread columns with the adaptive choice on (CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE), as ' +
        'a user has it: a problem runs on one thread while its calls on threads measure slower, the tries of the other ' +
        'way included (docs/threads.md); writes cpu-browser-adaptive.*'),
    'out': outOption(),
  },
};

export interface BrowserThreadsOptions {
  /** The threaded implementations' CONV_BACKPROP_FILTERS_THREADS (1: only the 1-thread ones run). */
  readonly threads: number;
  readonly quick: boolean;
  /** Timed runs: picked layers, key layers, training layers (`--quick` caps each at QUICK.runs). */
  readonly runs: number;
  readonly keyRuns: number;
  readonly trainingRuns: number;
  readonly only: string[] | null;
  /** The page's main thread and Web Workers pinned to CPUs of their own (bench/pin_threads.ts). */
  readonly pin: boolean;
  /** The N-thread columns with the adaptive choice on (off: every call on the threads asked for). */
  readonly adaptive: boolean;
  readonly out: string | null;
  /** 'cpu-browser', with '-threads<N>' for N other than 2, '-pinned', '-adaptive' and '-quick' appended. */
  readonly resultName: string;
}

export function browserThreadsOptions(values: OptionValues<typeof BROWSER_THREADS_COMMAND.options>): BrowserThreadsOptions {
  const cap = (runs: number) => values.quick ? Math.min(runs, QUICK.runs) : runs;
  return {
    threads: values.threads,
    quick: values.quick,
    runs: cap(values.runs),
    keyRuns: cap(Math.max(values.runs, values['key-runs'])),
    trainingRuns: cap(values['training-runs']),
    only: values.only,
    pin: values.pin,
    adaptive: values.adaptive,
    out: values.out,
    resultName: ['cpu-browser', values.threads !== 2 ? `threads${values.threads}` : null, values.pin ? 'pinned' : null,
                 values.adaptive ? 'adaptive' : null, values.quick ? 'quick' : null]
                    .filter(part => part !== null).join('-'),
  };
}

import * as path from 'path';

import {
  commaList, helpText, nonNegativeInteger, oneOf, outOption, parseCommandLine, positiveInteger, regularExpression, switchOption,
  valueOption,
} from '../bench/args';
import {BROWSER_THREADS_COMMAND, browserThreadsOptions, QUICK} from '../bench/browser_threads_options';
import {parseOptions} from '../bench/cpu/options';
import {PICKS, TRAINING_FILE} from '../bench/cpu/picks';
import {loadWorkloadFile} from '../bench/workloads';

/** bench/args.ts: the one argument parser of the bench commands. */
const command = {
  usage: 'npm run bench:example [-- options]',
  summary: 'An example command.',
  options: {
    runs: valueOption('N', 'timed runs', 5, positiveInteger),
    'built-in-runs': valueOption('N', 'runs of the built-in', null as number | null, nonNegativeInteger, 'min(runs, 2)'),
    set: valueOption('SET', 'which set', 'all' as 'all' | 'big', oneOf('all', 'big')),
    only: valueOption('REGEX', 'only matching names', null as RegExp | null, regularExpression),
    models: valueOption('a,b', 'only these', ['x'], commaList, 'all'),
    'no-training': switchOption('skip the training layers'),
    out: outOption(),
  },
};

function values(argv: string[]) {
  const result = parseCommandLine(command, argv);
  if ('help' in result) throw new Error('unexpected --help');
  return result.values;
}

describe('bench/args.ts', () => {
  it('gives the declared defaults when nothing is given', () => {
    const v = values([]);
    expect(v.runs).toBe(5);
    expect(v['built-in-runs']).toBeNull();
    expect(v.set).toBe('all');
    expect(v.only).toBeNull();
    expect(v.models).toEqual(['x']);
    expect(v['no-training']).toBe(false);
    expect(v.out).toBe(path.resolve(__dirname, '..', 'bench', 'results'));
  });

  it('reads --name value and --name=value, switches and the parsed values', () => {
    const v = values(['--runs', '3', '--built-in-runs=0', '--set', 'big', '--only', 'mnist|cifar', '--models', 'a,,b',
      '--no-training', '--out', '-']);
    expect(v.runs).toBe(3);
    expect(v['built-in-runs']).toBe(0);
    expect(v.set).toBe('big');
    expect(v.only!.test('tfjs-cifar:conv1')).toBe(true);
    expect(v.only!.test('resnet')).toBe(false);
    expect(v.models).toEqual(['a', 'b']);
    expect(v['no-training']).toBe(true);
    expect(v.out).toBeNull();
    expect(values(['--out', 'some/dir']).out).toBe(path.resolve('some/dir'));
  });

  it('rejects bad values, unknown options, missing values and stray arguments, naming the option', () => {
    expect(() => values(['--runs', '0'])).toThrowError("--runs needs a positive integer, got '0'");
    expect(() => values(['--runs', '2.5'])).toThrowError(/--runs needs a positive integer/);
    expect(() => values(['--built-in-runs', '-1'])).toThrowError(/--built-in-runs/);
    expect(() => values(['--set', 'training'])).toThrowError("--set takes 'all', 'big', got 'training'");
    expect(() => values(['--only', '('])).toThrowError(/--only needs a regular expression/);
    expect(() => values(['--models', ','])).toThrowError(/--models needs a comma-separated list/);
    expect(() => values(['--bogus'])).toThrowError(/Unknown option '--bogus'.*--help/);
    expect(() => values(['--runs'])).toThrowError(/--runs/);
    expect(() => values(['stray'])).toThrowError(/stray/);
  });

  it('prints --help from the declarations', () => {
    const result = parseCommandLine(command, ['--runs', '3', '--help']);
    expect('help' in result).toBe(true);
    const help = (result as {help: string}).help;
    expect(help).toBe(helpText(command));
    expect(help).toContain('npm run bench:example [-- options]');
    expect(help).toMatch(/--runs N +timed runs \(default 5\)/);
    expect(help).toMatch(/--built-in-runs N +runs of the built-in \(default min\(runs, 2\)\)/);
    expect(help).toMatch(/--no-training +skip the training layers\n/);
    expect(help).toMatch(/--out DIR .*\(default bench\/results\)/);
    expect(help).toMatch(/--help +print this and exit/);
    expect('help' in parseCommandLine(command, ['-h'])).toBe(true);
  });

  describe('npm run bench:browser-threads', () => {
    const options = (argv: string[]) => {
      const result = parseCommandLine(BROWSER_THREADS_COMMAND, argv);
      if ('help' in result) throw new Error('unexpected --help');
      return browserThreadsOptions(result.values);
    };

    it('runs 2 threads and npm run bench\'s run counts by default, into cpu-browser.*', () => {
      expect(options([])).toEqual({
        threads: 2, quick: false, runs: 5, keyRuns: 15, trainingRuns: 15, only: null, pin: false, adaptive: false,
        out: path.resolve(__dirname, '..', 'bench', 'results'), resultName: 'cpu-browser',
      });
      expect(options(['--threads', '2']).resultName).toBe('cpu-browser');
    });

    it('names the files for --threads N other than 2, for --pin, --adaptive and --quick', () => {
      expect(options(['--threads', '4'])).toEqual(jasmine.objectContaining({threads: 4, resultName: 'cpu-browser-threads4'}));
      expect(options(['--pin'])).toEqual(jasmine.objectContaining({pin: true, resultName: 'cpu-browser-pinned'}));
      expect(options(['--adaptive'])).toEqual(jasmine.objectContaining({adaptive: true, resultName: 'cpu-browser-adaptive'}));
      expect(options(['--adaptive', '--quick']).resultName).toBe('cpu-browser-adaptive-quick');
      expect(options(['--pin', '--threads', '3', '--quick']).resultName).toBe('cpu-browser-threads3-pinned-quick');
      expect(options(['--threads', '1']).resultName).toBe('cpu-browser-threads1');
      expect(options(['--quick', '--threads=3']).resultName).toBe('cpu-browser-threads3-quick');
    });

    it('caps every run count at a few under --quick, and keeps the key runs at least --runs', () => {
      expect(options(['--quick'])).toEqual(jasmine.objectContaining({quick: true, runs: 3, keyRuns: 3, trainingRuns: 3, resultName: 'cpu-browser-quick'}));
      expect(options(['--quick', '--runs', '1', '--training-runs', '2'])).toEqual(jasmine.objectContaining({runs: 1, keyRuns: 3, trainingRuns: 2}));
      expect(options(['--runs', '20', '--key-runs', '3'])).toEqual(jasmine.objectContaining({runs: 20, keyRuns: 20}));
      expect(options(['--only', 'cifar,res2a']).only).toEqual(['cifar', 'res2a']);
    });

    it('rejects a thread count under 1 and prints --threads and --quick in --help', () => {
      expect(() => options(['--threads', '0'])).toThrowError("--threads needs a positive integer, got '0'");
      expect(() => options(['--quick', 'yes'])).toThrowError(/yes/);
      const help = helpText(BROWSER_THREADS_COMMAND);
      expect(help).toMatch(/--threads N +.*\(default 2\)/);
      expect(help).toMatch(/--quick +a smoke run/);
    });

    it('picks --quick\'s layers among npm run bench\'s', () => {
      const pickNames = PICKS.map(p => p.name);
      const trainingNames = loadWorkloadFile(TRAINING_FILE).map(p => p.name);
      for (const name of QUICK.picks) expect(pickNames).withContext(name).toContain(name);
      for (const name of QUICK.training) expect(trainingNames).withContext(name).toContain(name);
    });
  });

  describe('npm run bench', () => {
    it('times the adaptive choice with --adaptive, into cpu-adaptive.*; every call on the threads asked for without it', () => {
      expect(parseOptions([]).adaptive).toBeFalse();
      expect(parseOptions([]).resultName).toMatch(/^cpu(-node\d+)?$/);
      const adaptive = parseOptions(['--adaptive', '--no-pytorch']);
      expect(adaptive.adaptive).toBeTrue();
      expect(adaptive.pytorch).toBeFalse();
      expect(adaptive.resultName).toMatch(/^cpu-adaptive(-node\d+)?$/);
      expect(parseOptions(['--adaptive', '--pin']).resultName).toMatch(/^cpu-pinned-adaptive(-node\d+)?$/);
    });
  });
});

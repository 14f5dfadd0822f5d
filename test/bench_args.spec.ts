import * as path from 'path';

import {
  commaList, helpText, nonNegativeInteger, oneOf, outOption, parseCommandLine, positiveInteger, regularExpression, switchOption,
  valueOption,
} from '../bench/args';

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
});

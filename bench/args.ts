/**
 * The one argument parser of the bench commands: each command declares its options once (name,
 * value placeholder, help, default, how the text becomes a value), and `parseCommandLine` reads
 * `process.argv` with `node:util` parseArgs (`--name value` and `--name=value`; unknown options and
 * stray arguments are errors) and prints `--help` from the same declarations.
 *
 * ```ts
 * const options = commandLine({
 *   usage: 'npm run bench:webgl [-- options]',
 *   summary: 'our webgl kernel against tfjs\'s built-in filter gradients',
 *   options: {runs: valueOption('N', 'timed runs per workload', 5, positiveInteger)},
 * });
 * options.runs;  // number
 * ```
 */
import * as path from 'path';
import {parseArgs} from 'node:util';

/** An option that takes a value: `--name VALUE`. */
export interface ValueOption<T> {
  readonly kind: 'value';
  /** The value's placeholder in `--help` (N, DIR, REGEX, a,b …). */
  readonly placeholder: string;
  readonly help: string;
  readonly defaultValue: T;
  /** How `--help` shows the default (omitted: no default shown). */
  readonly defaultText?: string;
  /** The option's value from its text; throws an Error saying what it takes. */
  readonly parse: (text: string, flag: string) => T;
}

/** An option without a value: `--name` alone makes it true. */
export interface SwitchOption {
  readonly kind: 'switch';
  readonly help: string;
}

export type OptionDeclaration = ValueOption<unknown> | SwitchOption;

export type OptionValues<S extends Record<string, OptionDeclaration>> = {
  -readonly [K in keyof S]: S[K] extends ValueOption<infer T> ? T : boolean;
};

export interface Command<S extends Record<string, OptionDeclaration>> {
  /** How the command is started, e.g. `npm run bench:webgl [-- options]`. */
  readonly usage: string;
  /** One or a few lines on what the command does and writes. */
  readonly summary: string;
  /** Option names as typed on the command line, without the dashes (`runs`, `built-in-runs`). */
  readonly options: S;
}

export function valueOption<T>(
    placeholder: string, help: string, defaultValue: T, parse: (text: string, flag: string) => T,
    defaultText?: string): ValueOption<T> {
  return {kind: 'value', placeholder, help, defaultValue, parse, defaultText: defaultText ?? describeDefault(defaultValue)};
}

export function switchOption(help: string): SwitchOption {
  return {kind: 'switch', help};
}

function describeDefault(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return String(value);
  return undefined;
}

// Parsers of the values the bench commands take.

export function positiveInteger(text: string, flag: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isSafeInteger(value) || value < 1) throw new Error(`${flag} needs a positive integer, got '${text}'`);
  return value;
}

export function nonNegativeInteger(text: string, flag: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isSafeInteger(value) || value < 0) throw new Error(`${flag} needs a non-negative integer, got '${text}'`);
  return value;
}

export function regularExpression(text: string, flag: string): RegExp {
  try {
    return new RegExp(text);
  } catch (e) {
    throw new Error(`${flag} needs a regular expression, got '${text}' (${(e as Error).message})`);
  }
}

/** A comma-separated list (empty items dropped); at least one item. */
export function commaList(text: string, flag: string): string[] {
  const items = text.split(',').filter(s => s !== '');
  if (items.length === 0) throw new Error(`${flag} needs a comma-separated list, got '${text}'`);
  return items;
}

/** One of the given words. */
export function oneOf<W extends string>(...words: readonly W[]): (text: string, flag: string) => W {
  return (text, flag) => {
    if (!(words as readonly string[]).includes(text)) {
      throw new Error(`${flag} takes ${words.map(w => `'${w}'`).join(', ')}, got '${text}'`);
    }
    return text as W;
  };
}

/**
 * `--out DIR`: where a bench writes its results, resolved against the working directory;
 * '-' writes nothing (null). The default is bench/results.
 */
export function outOption(): ValueOption<string | null> {
  return valueOption('DIR', "where to write the results ('-' writes nothing)", path.resolve(__dirname, 'results'),
      text => text === '-' ? null : path.resolve(text), 'bench/results');
}

/** The `--help` text of a command, from its declarations. */
export function helpText<S extends Record<string, OptionDeclaration>>(command: Command<S>): string {
  const entries = Object.entries(command.options).map(([name, option]) => [
    option.kind === 'value' ? `--${name} ${option.placeholder}` : `--${name}`,
    option.help + (option.kind === 'value' && option.defaultText !== undefined ? ` (default ${option.defaultText})` : ''),
  ]);
  entries.push(['--help', 'print this and exit']);
  const width = Math.max(...entries.map(([left]) => left.length));
  return [`${command.usage}`, '', command.summary, '', 'Options:',
    ...entries.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`)].join('\n') + '\n';
}

/**
 * The options' values from `argv` (the arguments after the script), or `{help}` when `--help`
 * (or `-h`) is among them. Throws an Error naming the option on an unknown option, a missing or
 * bad value, or a stray argument.
 */
export function parseCommandLine<S extends Record<string, OptionDeclaration>>(
    command: Command<S>, argv: readonly string[]): {values: OptionValues<S>} | {help: string} {
  const config: Record<string, {type: 'string' | 'boolean'; short?: string}> = {help: {type: 'boolean', short: 'h'}};
  for (const [name, option] of Object.entries(command.options)) config[name] = {type: option.kind === 'value' ? 'string' : 'boolean'};
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({args: [...argv], options: config, strict: true, allowPositionals: false});
  } catch (e) {
    throw new Error(`${(e as Error).message.replace(/\. To specify a positional argument.*$/s, '')} (--help lists the options)`);
  }
  if (parsed.values.help === true) return {help: helpText(command)};
  const values: Record<string, unknown> = {};
  for (const [name, option] of Object.entries(command.options)) {
    const given = parsed.values[name];
    if (option.kind === 'switch') {
      values[name] = given === true;
    } else {
      values[name] = typeof given === 'string' ? option.parse(given, `--${name}`) : option.defaultValue;
    }
  }
  return {values: values as OptionValues<S>};
}

/**
 * `parseCommandLine` on this process's arguments: prints the help and exits 0 on `--help`,
 * prints the error and the help and exits 2 on a bad command line.
 */
export function commandLine<S extends Record<string, OptionDeclaration>>(
    command: Command<S>, argv: readonly string[] = process.argv.slice(2)): OptionValues<S> {
  let result: ReturnType<typeof parseCommandLine<S>>;
  try {
    result = parseCommandLine(command, argv);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${helpText(command)}`);
    process.exit(2);
  }
  if ('help' in result) {
    process.stdout.write(result.help);
    process.exit(0);
  }
  return result.values;
}

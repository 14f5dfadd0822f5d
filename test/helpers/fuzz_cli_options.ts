import type {FuzzCliOptions} from '../fuzz/cli';

declare const __karma__: {config: {args?: unknown[]}};

/**
 * The options of `npm run fuzz -- --backend webgl|webgpu …` when that command started this karma
 * page (it passes them as JSON in karma's first client arg, under `fuzz`); undefined in `npm test`.
 */
export function fuzzCliOptions(): FuzzCliOptions | undefined {
  const arg = __karma__.config.args?.[0];
  if (typeof arg !== 'string') return undefined;
  try {
    return (JSON.parse(arg) as {fuzz?: FuzzCliOptions}).fuzz;
  } catch {
    return undefined;
  }
}

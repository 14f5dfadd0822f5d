import {env} from '@tensorflow/tfjs-core';

const registered = new Set<string>();

/**
 * A numeric tuning flag's value (a tfjs flag the benches set with `--variant FLAG=VALUE` for an
 * A/B in one run), registered with its default on first use; a value already set is kept.
 */
export function tuningFlag(name: string, fallback: number): number {
  if (!Object.prototype.hasOwnProperty.call(env().getFlags(), name) && !registered.has(name)) {
    env().registerFlag(name, () => fallback);
  }
  registered.add(name);
  return env().getNumber(name);
}

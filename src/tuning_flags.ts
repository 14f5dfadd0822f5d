import {env} from '@tensorflow/tfjs-core';

const registered = new Set<string>();

/**
 * Registers the tfjs flag `name` with its default `evaluate`, once: again (a second call, a
 * second copy of the package) it changes nothing, and a value already set is kept.
 */
export function registerFlagOnce(name: string, evaluate: () => boolean | number) {
  if (registered.has(name)) return;
  if (!Object.prototype.hasOwnProperty.call(env().getFlags(), name)) env().registerFlag(name, evaluate);
  registered.add(name);
}

/**
 * A numeric tuning flag's value (a tfjs flag the benches set with `--variant FLAG=VALUE` for an
 * A/B in one run), registered with its default on first use; a value already set is kept.
 */
export function tuningFlag(name: string, fallback: number): number {
  registerFlagOnce(name, () => fallback);
  return env().getNumber(name);
}

/**
 * `profile` (a device profile: nested plain objects of numbers and booleans) with the tuning
 * flags applied: `flags` maps a field's path (`'split.targetFragments'`) to the flag that sets
 * it, registered with the profile's value; a boolean field takes the flag's value ≠ 0. Frozen.
 */
export function tunedProfile<Profile extends object>(profile: Profile, flags: Readonly<Record<string, string>>): Profile {
  const copy = structuredClone(profile) as Record<string, unknown>;
  for (const [fieldPath, flag] of Object.entries(flags)) {
    const keys = fieldPath.split('.');
    const owner = keys.slice(0, -1).reduce((object, key) => object[key] as Record<string, unknown>, copy);
    const key = keys[keys.length - 1];
    const value = owner[key];
    owner[key] = typeof value === 'boolean' ? tuningFlag(flag, value ? 1 : 0) !== 0 : tuningFlag(flag, value as number);
  }
  return deepFreeze(copy) as Profile;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const field of Object.values(value as object)) deepFreeze(field);
    Object.freeze(value);
  }
  return value;
}

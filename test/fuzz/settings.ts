/**
 * Per-backend settings of the differential fuzzer, shared by `npm run fuzz`, the Node CI sample
 * (test/fuzz.spec.ts) and the webgl one (test/browser/fuzz.spec.ts).
 */
import type {SpecialPlacement} from './problems';

/** The fixed seed of the CI samples (any change of the generator changes the problems too). */
export const CI_SEED = 8;
/** Problems per backend in CI. */
export const CI_COUNT = 300;

export interface FuzzBackendSettings {
  atol: number;
  rtol: number;
  /** Where NaN / ±Infinity / exact zeros may be written into the data. */
  specials: SpecialPlacement;
  /** Why specials are restricted, when they are. */
  specialsNote?: string;
}

export const FUZZ_SETTINGS: Readonly<Record<string, FuzzBackendSettings>> = {
  'cpu': {atol: 1e-5, rtol: 1e-5, specials: 'any'},
  'cpu-loops': {atol: 1e-5, rtol: 1e-5, specials: 'any'},
  'cpu-composite': {atol: 1e-4, rtol: 1e-4, specials: 'any'},
  'wasm': {atol: 1e-5, rtol: 1e-5, specials: 'any'},
  'tensorflow': {atol: 1e-4, rtol: 1e-4, specials: 'any'},
  'webgl': {atol: 1e-4, rtol: 1e-4, specials: 'any'},
  'webgpu': {atol: 1e-4, rtol: 1e-4, specials: 'any'},
};

export function fuzzSettings(backend: string): FuzzBackendSettings {
  const settings = FUZZ_SETTINGS[backend.startsWith('webgl') ? 'webgl' : backend];
  if (settings === undefined) throw new Error(`fuzz: no settings for backend '${backend}'`);
  return settings;
}

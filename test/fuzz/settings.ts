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

/**
 * The composite kernel (kernels/node: tfjs-node's `tensorflow`, `wasm`, and `cpu-composite` in
 * tests) and the webgl kernel multiply the zeros they read for src positions in the padding by
 * diffDst, so an infinite or NaN diffDst value facing padding gives NaN where DESIGN.md §2
 * (terms outside the input are zero) and the reference give a finite sum. Until that is fixed,
 * specials go into src only on those backends (`--specials any` shows the failures).
 */
const PADDING_SPECIALS_NOTE =
    'specials in src only: this kernel multiplies its zero padding by diffDst (0·Inf = NaN; the reference skips those terms)';

export const FUZZ_SETTINGS: Readonly<Record<string, FuzzBackendSettings>> = {
  'cpu': {atol: 1e-5, rtol: 1e-5, specials: 'any'},
  'cpu-composite': {atol: 1e-4, rtol: 1e-4, specials: 'src', specialsNote: PADDING_SPECIALS_NOTE},
  'wasm': {atol: 1e-4, rtol: 1e-4, specials: 'src', specialsNote: PADDING_SPECIALS_NOTE},
  'tensorflow': {atol: 1e-4, rtol: 1e-4, specials: 'src', specialsNote: PADDING_SPECIALS_NOTE},
  'webgl': {atol: 1e-4, rtol: 1e-4, specials: 'src', specialsNote: PADDING_SPECIALS_NOTE},
};

export function fuzzSettings(backend: string): FuzzBackendSettings {
  const settings = FUZZ_SETTINGS[backend.startsWith('webgl') ? 'webgl' : backend];
  if (settings === undefined) throw new Error(`fuzz: no settings for backend '${backend}'`);
  return settings;
}

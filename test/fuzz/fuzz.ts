/**
 * One fuzz run on the current backend: problems `seed`, `count` (problem i from
 * problemSeed(seed, i)), each checked against the reference; failures are shrunk and come
 * back with their seed and a reproducer. Used by `npm run fuzz` (test/fuzz/cli.ts), the Node CI
 * sample (test/fuzz.spec.ts) and the browser one (test/browser/fuzz.spec.ts).
 */
import {FuzzProblem, generateProblem, GenerateOptions} from './problems';
import {problemSeed} from './random';
import {CheckOptions, expectedOf, reproducer, runProblem, runProblemAsync, shrink} from './runner';

export interface FuzzFailure {
  index: number;
  seed: number;
  failure: string;
  /** The shrunk problem's failure and snippet. */
  shrunkFailure: string;
  reproducer: string;
}

export interface FuzzSummary {
  backend: string;
  seed: number;
  count: number;
  passed: number;
  failures: FuzzFailure[];
  milliseconds: number;
  /** Problems by op, rank and whether they had special values, for the report. */
  mix: Record<string, number>;
}

export interface FuzzRunOptions {
  backend: string;
  seed: number;
  count: number;
  /** First problem index (to resume or split a long run). */
  start?: number;
  check: CheckOptions;
  generate?: GenerateOptions;
  /** Only this problem seed (overrides seed/count/start). */
  problem?: number;
  /** Shrink failures (default true). */
  shrink?: boolean;
  /** Stop after this many failures (default 5). */
  maxFailures?: number;
  /** Called every `progressEvery` problems. */
  progress?: (done: number, summary: FuzzSummary) => void;
  progressEvery?: number;
  /** What follows `--backend` in the command that reproduces a problem (default: `backend`). */
  cliBackend?: string;
  /** Precomputed expectations, e.g. shared by several backends of one process. */
  expected?: (problem: FuzzProblem) => ReturnType<typeof expectedOf>;
  /** Only the problems it accepts are run and counted (e.g. those one code path takes). */
  accept?: (problem: FuzzProblem) => boolean;
}

export function runFuzz(options: FuzzRunOptions): FuzzSummary {
  const run = startRun(options);
  for (const index of run.indices) {
    const next = run.next(index);
    if (next === undefined) continue;
    const {problem, expected} = next;
    if (run.record(index, problem, runProblem(problem, options.check, expected))) break;
  }
  return run.finish();
}

/**
 * runFuzz reading results with `await data()` (for tfjs-webgpu, whose dataSync reads zeros in
 * headless Chromium on SwiftShader). Failures are not shrunk (shrinking reads synchronously).
 */
export async function runFuzzAsync(options: FuzzRunOptions): Promise<FuzzSummary> {
  const run = startRun({...options, shrink: false});
  for (const index of run.indices) {
    const next = run.next(index);
    if (next === undefined) continue;
    const {problem, expected} = next;
    if (run.record(index, problem, await runProblemAsync(problem, options.check, expected))) break;
  }
  return run.finish();
}

/** The bookkeeping of one fuzz run: problems in order, outcomes recorded, failures made reproducible. */
function startRun(options: FuzzRunOptions) {
  const start = options.start ?? 0;
  const started = Date.now();
  const summary: FuzzSummary = {
    backend: options.backend, seed: options.seed, count: 0, passed: 0, failures: [], milliseconds: 0, mix: {},
  };
  const indices = options.problem !== undefined ? [-1] : Array.from({length: options.count}, (_, i) => start + i);
  const seedOf = (index: number) => options.problem ?? problemSeed(options.seed, index);
  return {
    indices,
    next(index: number) {
      const problem = generateProblem(seedOf(index), options.generate);
      if (options.accept !== undefined && !options.accept(problem)) return undefined;
      const key = `${problem.spec.transposed ? 'deconv' : 'conv'}${problem.spec.inputSpatial.length}d${
          problem.spec.specials.length ? '+specials' : ''}`;
      summary.mix[key] = (summary.mix[key] ?? 0) + 1;
      return {problem, expected: options.expected?.(problem) ?? expectedOf(problem)};
    },
    /** Records an outcome; true when the run should stop (too many failures). */
    record(index: number, problem: FuzzProblem, failure: string | undefined): boolean {
      const seed = seedOf(index);
      summary.count++;
      if (failure === undefined) {
        summary.passed++;
      } else {
        const generate = options.generate ?? {};
        const command = `npm run fuzz -- --backend ${options.cliBackend ?? options.backend}${
            generate.specials !== undefined ? ` --specials ${generate.specials}` : ''}${
            generate.specialRate !== undefined ? ` --special-rate ${generate.specialRate}` : ''}${
            generate.shape !== undefined ? ` --shape ${generate.shape}` : ''} --problem ${seed}`;
        const origin = options.problem !== undefined ? `problem seed ${seed}: ${command}` :
                                                       `problem ${index} of --seed ${options.seed}, problem seed ${seed}: ${command}`;
        const shrunk = options.shrink === false ? {problem, failure} : shrink(problem, failure, options.check);
        summary.failures.push({
          index,
          seed,
          failure,
          shrunkFailure: shrunk.failure,
          reproducer: reproducer(
              shrunk.problem, options.backend, shrunk.failure,
              shrunk.problem === problem ? origin : `shrunk from ${origin}`),
        });
        if (summary.failures.length >= (options.maxFailures ?? 5)) return true;
      }
      if (options.progress && summary.count % (options.progressEvery ?? 1000) === 0) {
        summary.milliseconds = Date.now() - started;
        options.progress(summary.count, summary);
      }
      return false;
    },
    finish(): FuzzSummary {
      summary.milliseconds = Date.now() - started;
      return summary;
    },
  };
}

/** Adds the outcome of one block of a run to the run's (the browser pages run long runs in blocks). */
export function addToSummary(total: FuzzSummary, block: FuzzSummary): void {
  total.count += block.count;
  total.passed += block.passed;
  total.failures.push(...block.failures);
  total.milliseconds += block.milliseconds;
  for (const [k, v] of Object.entries(block.mix)) total.mix[k] = (total.mix[k] ?? 0) + v;
}

export function describeSummary(summary: FuzzSummary): string {
  const mix = Object.entries(summary.mix).sort().map(([k, v]) => `${k} ${v}`).join(', ');
  const lines = [
    `fuzz on ${summary.backend}: ${summary.passed} of ${summary.count} problems passed (seed ${summary.seed}) in ${
        (summary.milliseconds / 1000).toFixed(1)} s [${mix}]`,
  ];
  for (const f of summary.failures) {
    lines.push(
        `\nFAILED ${f.index >= 0 ? `problem ${f.index} (problem seed ${f.seed})` : `problem seed ${f.seed}`}: ${f.failure}`,
        `minimal reproducer (${f.shrunkFailure}):`, f.reproducer);
  }
  return lines.join('\n');
}

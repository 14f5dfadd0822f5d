/**
 * Runs tfjs's own convolution tests (tfjs-core's compiled dist/ops/*conv*_test.js, see entry.ts)
 * in Node on one backend, with or without the drop-in gradients, each run in its own process:
 * tfjs's test harness resets the engine (every backend disposed, every flag back to its default)
 * before and after each block, which the rest of this suite must not see.
 *
 * The test files are ESM with extensionless imports (and './gradients' naming both a file and a
 * folder), which Node's loaders do not resolve: they are bundled with esbuild, as karma does in
 * the browser, leaving the backends and this package (built, dist/) to load as any app loads them.
 *
 * `npx tsx test/tfjs_suite/run.ts` prints the counts of all four runs (cpu and wasm, with the
 * drop-in and without: the baseline); test/tfjs_suite.spec.ts runs them in `npm test`.
 */
import {build, Plugin} from 'esbuild';
import {execFile} from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import {TFJS_SUITE_RESULT} from './skips';

const ROOT = path.resolve(__dirname, '..', '..');
const OUT_DIR = path.join(ROOT, '.scratch', 'tfjs-suite');  // inside the package: the bundle resolves 'tfjs-conv-backprop-filters' by self-reference
const BUNDLE = path.join(OUT_DIR, 'tfjs_suite.cjs');

export interface TfjsSuiteResult {
  backend: string;
  dropIn: boolean;
  run: number;
  passed: number;
  failed: Array<{name: string; message: string}>;
  skipped: Array<{name: string; reason: string}>;
  /** Failures outside any spec: an error in a beforeAll or afterAll, or at the top level. */
  suiteFailures: Array<{name: string; message: string}>;
  /** jasmine's overall status of the run ('passed', 'failed', 'incomplete'). */
  overallStatus: string;
  /** The child process's exit code. */
  exitCode: number;
  seconds: number;
}

/** Packages loaded at run time, as an app loads them (their CommonJS builds, this package's dist/). */
const EXTERNAL = new Set([
  '@tensorflow/tfjs-core', '@tensorflow/tfjs-backend-cpu', '@tensorflow/tfjs-backend-wasm',
  'tfjs-conv-backprop-filters/gradients',
]);

/**
 * tfjs's jasmine_util.js requires 'jasmine-core/lib/jasmine-core/jasmine.js' (jasmine-core 3's
 * jasmineRequire); jasmine-core 5+ exports no such path: it gets jasmine_require_shim.ts. The
 * packages above stay external (exactly those names: tfjs-core's dist files are bundled).
 */
export const TFJS_SUITE_PLUGIN: Plugin = {
  name: 'tfjs-suite',
  setup(pluginBuild) {
    pluginBuild.onResolve({filter: /^jasmine-core\/lib\/jasmine-core\/jasmine\.js$/},
                          () => ({path: path.join(__dirname, 'jasmine_require_shim.ts')}));
    pluginBuild.onResolve({filter: /^[@a-z]/}, args => EXTERNAL.has(args.path) ? {path: args.path, external: true} : undefined);
  },
};

let bundled: Promise<void> | undefined;

/** Bundles entry.ts once per process. */
function bundle(): Promise<void> {
  bundled ??= build({
    entryPoints: [path.join(__dirname, 'entry.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'es2020',
    outfile: BUNDLE,
    plugins: [TFJS_SUITE_PLUGIN],
    // tfjs-core's package.json declares its files free of side effects: the test files would be dropped.
    ignoreAnnotations: true,
    logLevel: 'error',
  }).then(() => {
    fs.writeFileSync(path.join(OUT_DIR, 'jasmine.json'), JSON.stringify({
      spec_dir: path.relative(ROOT, OUT_DIR),
      spec_files: [path.basename(BUNDLE)],
      jsLoader: 'require',
      // tfjs's test files, written for jasmine 3, repeat three spec names within a suite
      // (separableConv2d's 'Incorrect depthwise filter rank raises error', depthwiseConv2D's
      // 'input=1x5x5x1,f=3,s=1,d=2,p=valid,chMul=1', depthwiseConv2d gradients' 'gradient with
      // clones'); jasmine 7 forbids that by default, declares none of the repeats and reports a
      // suite error. Allowed here, so that every spec of theirs runs.
      env: {random: false, stopSpecOnExpectationFailure: false, forbidDuplicateNames: false},
    }));
  });
  return bundled;
}

/** One run in a child process (plain Node: the bundle needs no TypeScript loader). */
export async function runTfjsSuite(backend: 'cpu' | 'wasm', dropIn: boolean): Promise<TfjsSuiteResult> {
  await bundle();
  const started = Date.now();
  const {output, exitCode} = await new Promise<{output: string; exitCode: number}>((resolve, reject) => {
    execFile(
        process.execPath,
        [path.join(ROOT, 'node_modules', 'jasmine', 'bin', 'jasmine.js'), `--config=${path.join(OUT_DIR, 'jasmine.json')}`],
        {
          cwd: ROOT, env: {...process.env, TFJS_SUITE_BACKEND: backend, TFJS_SUITE_DROP_IN: dropIn ? '1' : '0'},
          maxBuffer: 64 * 2 ** 20,
        },
        // jasmine exits non-zero when a spec or a suite fails: the result line says which, and the
        // code is kept so that a run whose status and exit code disagree (a crash after the
        // result line) fails too.
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
          if (stdout.includes(TFJS_SUITE_RESULT)) resolve({output: stdout, exitCode: code});
          else reject(new Error(`tfjs suite on ${backend} did not report (${error?.message ?? ''}):\n${stdout}\n${stderr}`));
        });
  });
  const line = output.split('\n').find(l => l.startsWith(TFJS_SUITE_RESULT))!;
  return {...JSON.parse(line.slice(TFJS_SUITE_RESULT.length)), exitCode, seconds: (Date.now() - started) / 1000};
}

/**
 * What is wrong with a run beyond its failed specs: failures outside any spec, and an exit code
 * that disagrees with jasmine's overall status (0 exactly when it passed). Empty when nothing is.
 */
export function runProblems(r: TfjsSuiteResult): string[] {
  const problems = r.suiteFailures.map(f => `outside a spec, in ${f.name}: ${f.message}`);
  if ((r.exitCode === 0) !== (r.overallStatus === 'passed')) {
    problems.push(`jasmine's overall status is '${r.overallStatus}' but the run exited with code ${r.exitCode}`);
  }
  return problems;
}

/** One line per run: run / passed / failed / skipped by name. */
export function describeResult(r: TfjsSuiteResult): string {
  return `${r.backend}, ${r.dropIn ? 'with the drop-in gradients' : 'tfjs alone (baseline)'}: ${r.run} run, ${
      r.passed} passed, ${r.failed.length} failed, ${r.skipped.length} skipped by name, ${
      r.suiteFailures.length} failures outside specs; jasmine status ${r.overallStatus}, exit code ${r.exitCode} (${
      r.seconds.toFixed(0)} s)`;
}

if (require.main === module) {
  (async () => {
    const results = await Promise.all(
        (['cpu', 'wasm'] as const).flatMap(backend => [true, false].map(dropIn => runTfjsSuite(backend, dropIn))));
    for (const r of results) {
      console.log(describeResult(r));
      for (const f of r.failed) console.log(`  failed: ${f.name}\n    ${f.message.slice(0, 300)}`);
      for (const problem of runProblems(r)) console.log(`  ${problem.slice(0, 300)}`);
      for (const s of r.skipped) console.log(`  skipped: ${s.name}: ${s.reason}`);
    }
  })();
}

/**
 * `npm run fuzz -- --backend <name> [--count N] [--seed S] [options]`: the differential fuzzer.
 * Random valid problems of both ops (test/fuzz/problems.ts) checked against the float64
 * reference on one backend; failures are shrunk and printed with their seed and a
 * self-contained reproducer. Exit code 1 when any problem fails.
 *
 *   --backend      cpu | cpu-composite | wasm | tensorflow (when tfjs-node loads) | webgl | webgpu
 *   --count N      problems (default 1000)
 *   --seed S       run seed (default 1); problem i has seed problemSeed(S, i)
 *   --start I      first problem index (default 0), to resume or split a run
 *   --problem P    run only the problem of seed P (as printed by a failure)
 *   --specials     none | src | any: where NaN/±Inf/zeros may go (default: the backend's, test/fuzz/settings.ts)
 *   --special-rate share of problems with specials (default 0.2)
 *   --max-failures stop after this many failures (default 5)
 *   --no-shrink    print failures as found, unshrunk
 *   --chunk-bytes  composite backends: the CONV_BACKPROP_FILTERS_CHUNK_BYTES budget (1: a chunk per row of a sample)
 *   --threads N    cpu and wasm: the SIMD path on N threads (CONV_BACKPROP_FILTERS_THREADS), every problem of two
 *                  tasks or more threaded (no threshold); the run waits for the workers before the first problem
 *   --against-one-thread  with --threads: each problem's values must equal, exactly, the same call on one thread
 *                  (instead of matching the float64 reference within the tolerance)
 *   --relaxed-simd cpu and wasm: the relaxed-SIMD build of the micro-kernels (fused multiply-add); turns on
 *                  --experimental-wasm-relaxed-simd where V8 needs it (Node 20), fails if the engine lacks it
 *   --plain-simd   cpu and wasm: the plain-SIMD build (CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD false), whatever the engine has
 *   --env          webgl only: webgl2 (default), webgl2-unpacked, webgl2-small-textures, webgl2-dense-splits, webgl1,
 *                  webgl1-unpacked, float16
 *   --recycle N    webgl only: a fresh backend (and program cache) every N problems (default 1000)
 *   --shape S      strided-tiles: every problem reshaped so src tiles exactly into strides of diffDst along
 *                  its two innermost axes (test/fuzz/problems.ts: the layers webgpu runs in units of src rows);
 *                  wide-channels: up to 40 channels a side (the SIMD kernel's 16-lane depthwise passes and
 *                  8-channel tiles, split between threads)
 *   --path P       webgl only: run only the generated problems that take multi-target pass P
 *                  (dense-rows, dense-loops, depthwise-rows, depthwise-loop-segments: depthwise loops whose
 *                  rows run in segments, depthwise-loops: all depthwise loops, one-channel-rows,
 *                  one-channel-loops; the former names wide-tiles, wide-tap-segments, wide-taps, thin-rows
 *                  and thin-taps still work); --count still counts the generated ones
 *
 * webgl runs in headless Chromium through karma (test/browser/fuzz.spec.ts, handed these
 * options as client args), as bench/webgl.ts does; webgpu likewise (test/browser/webgpu_fuzz.spec.ts).
 *
 * `npm run fuzz -- --ci` runs the CI sample alone, as `npm test` runs it (the Node specs
 * test/fuzz.spec.ts, hostile.spec.ts and memory_load.spec.ts, then test/browser/fuzz.spec.ts),
 * and prints how long each half took.
 */
import {spawnSync} from 'child_process';
import * as path from 'path';

export interface FuzzCliOptions {
  backend: string;
  count: number;
  seed: number;
  start: number;
  problem?: number;
  specials?: 'none' | 'src' | 'any';
  specialRate?: number;
  maxFailures: number;
  shrink: boolean;
  env?: string;
  recycle?: number;
  path?: string;
  shape?: 'strided-tiles' | 'wide-channels';
  chunkBytes?: number;
  threads?: number;
  againstOneThread?: boolean;
  simdBuild?: 'relaxed' | 'plain';
}

const ROOT = path.resolve(__dirname, '..', '..');

async function runCiSample() {
  const nodeStarted = Date.now();
  const node = spawnSync(
      path.join(ROOT, 'node_modules', '.bin', 'tsx'),
      [
        'node_modules/jasmine/bin/jasmine.js', '--config=test/jasmine.json',
        '--filter=^(fuzz on|hostile inputs on|memory under load on)',
      ],
      {cwd: ROOT, stdio: 'inherit'});
  const nodeSeconds = (Date.now() - nodeStarted) / 1000;
  const browserStarted = Date.now();
  const page = path.join(ROOT, 'test', 'browser', 'fuzz.spec.ts');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const karma = require('karma') as KarmaApi;
  const config = await karma.config.parseConfig(
      path.join(ROOT, 'karma.conf.js'), {files: [{pattern: page, watched: false}], preprocessors: {[page]: ['esbuild']}},
      {promiseConfig: true, throwErrors: true});
  await new karma.Server(config, exitCode => {
    const browserSeconds = (Date.now() - browserStarted) / 1000;
    console.log(`\nCI fuzz sample: Node specs ${nodeSeconds.toFixed(1)} s (exit ${node.status}), browser specs ${
        browserSeconds.toFixed(1)} s (exit ${exitCode}, Chromium start and bundling included), ${
        (nodeSeconds + browserSeconds).toFixed(1)} s in all`);
    process.exit(node.status === 0 && exitCode === 0 ? 0 : 1);
  }).start();
}

function parseArguments(argv: readonly string[]): FuzzCliOptions {
  const options: FuzzCliOptions = {backend: '', count: 1000, seed: 1, start: 0, maxFailures: 5, shrink: true};
  const integer = (flag: string, text: string | undefined, minimum: number) => {
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < minimum) throw new Error(`${flag} needs an integer ≥ ${minimum}, got '${text}'`);
    return value;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const next = () => argv[++i];
    switch (flag) {
      case '--backend': options.backend = next(); break;
      case '--count': options.count = integer(flag, next(), 1); break;
      case '--seed': options.seed = integer(flag, next(), 0); break;
      case '--start': options.start = integer(flag, next(), 0); break;
      case '--problem': options.problem = integer(flag, next(), 0); break;
      case '--max-failures': options.maxFailures = integer(flag, next(), 1); break;
      case '--recycle': options.recycle = integer(flag, next(), 1); break;
      case '--chunk-bytes': options.chunkBytes = integer(flag, next(), 1); break;
      case '--threads': options.threads = integer(flag, next(), 1); break;
      case '--against-one-thread': options.againstOneThread = true; break;
      case '--relaxed-simd': options.simdBuild = 'relaxed'; break;
      case '--plain-simd': options.simdBuild = 'plain'; break;
      case '--no-shrink': options.shrink = false; break;
      case '--env': options.env = next(); break;
      case '--path': options.path = next(); break;
      case '--shape': {
        const value = next();
        if (value !== 'strided-tiles' && value !== 'wide-channels') {
          throw new Error(`--shape takes strided-tiles or wide-channels, got '${value}'`);
        }
        options.shape = value;
        break;
      }
      case '--special-rate': {
        const rate = Number(next());
        if (!(rate >= 0 && rate <= 1)) throw new Error(`--special-rate needs a number in [0, 1]`);
        options.specialRate = rate;
        break;
      }
      case '--specials': {
        const value = next();
        if (value !== 'none' && value !== 'src' && value !== 'any') throw new Error(`--specials takes none, src or any, got '${value}'`);
        options.specials = value;
        break;
      }
      default: throw new Error(`unknown argument '${flag}' (see the header of test/fuzz/cli.ts)`);
    }
  }
  if (!options.backend) throw new Error('--backend is required: cpu, cpu-composite, wasm, tensorflow, webgl or webgpu');
  if (options.againstOneThread && options.threads === undefined) throw new Error('--against-one-thread needs --threads N');
  return options;
}

interface KarmaApi {
  config: {parseConfig(file: string, overrides: object, options: object): Promise<object>};
  Server: new (config: object, done: (exitCode: number) => void) => {start(): Promise<void>};
}

async function runInBrowser(options: FuzzCliOptions) {
  const root = ROOT;
  const page = path.join(root, 'test', 'browser', options.backend === 'webgpu' ? 'webgpu_fuzz.spec.ts' : 'fuzz.spec.ts');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const karma = require('karma') as KarmaApi;
  const config = await karma.config.parseConfig(
      path.join(root, 'karma.conf.js'), {
        files: [{pattern: page, watched: false}],
        preprocessors: {[page]: ['esbuild']},
        reporters: ['dots', 'summary'],
        client: {args: [JSON.stringify({fuzz: options})], captureConsole: true, jasmine: {random: false, timeoutInterval: 24 * 3600 * 1000}},
        browserConsoleLogOptions: {level: 'log', format: '%m', terminal: true},
      },
      {promiseConfig: true, throwErrors: true});
  await new karma.Server(config, exitCode => process.exit(exitCode)).start();
}

async function runInNode(options: FuzzCliOptions) {
  // V8 reads this before compiling the relaxed build, which happens on the flag's first read.
  if (options.simdBuild === 'relaxed') (await import('v8')).setFlagsFromString('--experimental-wasm-relaxed-simd');
  const tf = await import('@tensorflow/tfjs-core');
  await import('@tensorflow/tfjs-backend-cpu');
  await import('@tensorflow/tfjs-backend-wasm');
  await import('../../kernels/index');
  const {registerCpuCompositeBackend, registerCpuLoopsBackend} = await import('../helpers/composite_backends');
  const {TENSORFLOW_BACKEND} = await import('../backends');
  const {describeSummary, runFuzz} = await import('./fuzz');
  const {resultOf} = await import('./runner');
  const {fuzzSettings} = await import('./settings');
  tf.env().set('IS_TEST', true);  // no "install tfjs-node" banner
  registerCpuCompositeBackend();
  registerCpuLoopsBackend();
  if (options.backend === 'tensorflow' && !TENSORFLOW_BACKEND.loaded) {
    throw new Error(`the tensorflow backend needs @tensorflow/tfjs-node, which does not load here: ${TENSORFLOW_BACKEND.reason}`);
  }
  if (!(await tf.setBackend(options.backend))) throw new Error(`backend '${options.backend}' did not initialize`);
  if (options.chunkBytes !== undefined) {
    const {CONV_BACKPROP_FILTERS_CHUNK_BYTES} = await import('../../kernels/index');
    tf.env().set(CONV_BACKPROP_FILTERS_CHUNK_BYTES, options.chunkBytes);
  }
  const simd = await import('../../kernels/index');
  if (options.simdBuild !== undefined) {
    const relaxed = options.simdBuild === 'relaxed';
    tf.env().set(simd.CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD, relaxed);
    if (relaxed && !tf.env().getBool(simd.CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD)) {
      throw new Error('--relaxed-simd: this engine does not validate WebAssembly relaxed SIMD');
    }
  }
  let threadsNote = '';
  if (options.threads !== undefined) {
    tf.env().set(simd.CONV_BACKPROP_FILTERS_THREADS, options.threads);
    tf.env().set(simd.CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, 0);
    // Every call on the threads: a problem measured faster on one thread would otherwise run there.
    tf.env().set(simd.CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, false);
    const ready = await simd.simdThreadsReady();
    if (ready !== options.threads) throw new Error(`--threads ${options.threads}: only ${ready} thread(s) started here`);
    threadsNote = `; SIMD on ${options.threads} threads${options.againstOneThread ? ', values exactly those of one thread' : ''}`;
  }
  // --against-one-thread: the expectation is the same call on one thread, compared exactly.
  const oneThread = (problem: Parameters<typeof resultOf>[0]) => {
    tf.env().set(simd.CONV_BACKPROP_FILTERS_THREADS, 1);
    try {
      return resultOf(problem);
    } finally {
      tf.env().set(simd.CONV_BACKPROP_FILTERS_THREADS, options.threads!);
    }
  };
  const relaxedRuns = (options.backend === 'cpu' || options.backend === 'wasm') &&
      tf.env().getBool(simd.CONV_BACKPROP_FILTERS_WASM_SIMD) && tf.env().getBool(simd.CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD);
  const settings = fuzzSettings(options.backend);
  const specials = options.specials ?? settings.specials;
  console.log(`fuzz on ${options.backend}: ${options.problem !== undefined ? `problem ${options.problem}` : `${
      options.count} problems from index ${options.start}, seed ${options.seed}`}; specials ${specials}${
      options.specials === undefined && settings.specialsNote ? ` (${settings.specialsNote})` : ''}${
      options.chunkBytes !== undefined ? `; chunk budget ${options.chunkBytes} bytes` : ''}${
      options.shape !== undefined ? `; shape ${options.shape}` : ''}${threadsNote}${relaxedRuns ? '; relaxed-SIMD build' : ''}`);
  const summary = runFuzz({
    backend: options.backend,
    cliBackend: `${options.backend}${options.chunkBytes !== undefined ? ` --chunk-bytes ${options.chunkBytes}` : ''}${
        options.threads !== undefined ? ` --threads ${options.threads}` : ''}${options.againstOneThread ? ' --against-one-thread' : ''}${
        options.simdBuild !== undefined ? ` --${options.simdBuild}-simd` : ''}`,
    seed: options.seed,
    count: options.count,
    start: options.start,
    problem: options.problem,
    check: options.againstOneThread ? {atol: 0, rtol: 0} : {atol: settings.atol, rtol: settings.rtol},
    ...(options.againstOneThread ? {expected: oneThread} : {}),
    generate: {specials, specialRate: options.specialRate, shape: options.shape},
    shrink: options.shrink,
    maxFailures: options.maxFailures,
    progressEvery: 1000,
    progress: (done, s) => console.log(`  ${done} problems, ${s.failures.length} failed, ${(s.milliseconds / 1000).toFixed(1)} s`),
  });
  console.log(describeSummary(summary));
  process.exit(summary.failures.length === 0 ? 0 : 1);
}

async function main() {
  if (process.argv.includes('--ci')) return runCiSample();
  const options = parseArguments(process.argv.slice(2));
  if (options.backend.startsWith('webgl') || options.backend === 'webgpu') await runInBrowser(options);
  else await runInNode(options);
}

main().catch(error => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(2);
});

import {execFileSync, spawnSync} from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The package as a user gets it: `npm pack` (of the dist/ that `npm run test:node` has just
 * built), installed into a scratch app outside the repository, under the OS temp folder, and
 * used there through `require`, `import` and an esbuild browser bundle. The tarball is installed
 * offline (it has no dependencies; its tfjs peers are not fetched: --legacy-peer-deps), and
 * tfjs comes from this project's node_modules through a symlink of the @tensorflow scope, so the
 * spec needs no network and takes seconds.
 */
const root = path.resolve(__dirname, '..');
const packageJson = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {name: string; version: string};

function run(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, {cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: {...process.env, npm_config_update_notifier: 'false'}});
}

/** What the app scripts print: where the package was loaded from and what it computed. */
const APP_BODY = `
  const names = ['ConvolutionBackpropFilters', 'ConvTransposeBackpropFilters', 'ConvolutionBackwardWeights', 'ConvTransposeBackwardWeights'];
  const registered = names.filter(name => tf.getKernel(name, 'cpu') !== undefined && tf.getKernel(name, 'webgl') !== undefined);
  const dW = p.convolutionBackpropFilters([[[1], [2], [3], [4]]], [[[1], [1], [1]]], {strides: [1], filterShape: [2]});
  // The drop-in gradients: tfjs alone has no gradient for a dilated conv2d.
  const x = tf.ones([1, 5, 5, 1]);
  const dWdilated = tf.grad(w => tf.sum(tf.conv2d(x, w, 1, 'valid', 'NHWC', 2)))(tf.ones([2, 2, 1, 1]));
  console.log(JSON.stringify({registered, dW: Array.from(dW.dataSync()), dilated: Array.from(dWdilated.dataSync()),
                              installed: p.dropInGradientsInstalled(), version: tf.version_core}));
`;

describe('the packed package', () => {
  let scratch = '';
  let app = '';

  beforeAll(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tfjs-conv-backprop-filters-pack-'));
    app = path.join(scratch, 'app');
    fs.mkdirSync(app);
    const [packed] = JSON.parse(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', scratch], root)) as [{filename: string}];
    const tarball = path.join(scratch, packed.filename);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({name: 'scratch-app', version: '1.0.0', private: true}));
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--legacy-peer-deps', '--no-package-lock', tarball], app);
    fs.symlinkSync(path.join(root, 'node_modules', '@tensorflow'), path.join(app, 'node_modules', '@tensorflow'), 'dir');
  }, 120000);

  afterAll(() => {
    if (scratch) fs.rmSync(scratch, {recursive: true, force: true});
  });

  const expected = {
    registered: ['ConvolutionBackpropFilters', 'ConvTransposeBackpropFilters', 'ConvolutionBackwardWeights', 'ConvTransposeBackwardWeights'],
    dW: [6, 9],
    // Σ over the 3×3 valid positions of ones: 9 for each of the 2×2 dilated taps.
    dilated: [9, 9, 9, 9],
    installed: true,
  };

  it('installs as a copy with its files, outside the repository', () => {
    const installed = path.join(app, 'node_modules', packageJson.name);
    expect(fs.lstatSync(installed).isSymbolicLink()).toBe(false);
    const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'));
    expect(manifest.version).toBe(packageJson.version);
    for (const file of ['dist/index.cjs', 'dist/index.mjs', 'dist/gradients.cjs', 'dist/gradients.mjs', 'dist/types/kernels/index.d.ts',
                        'dist/types/kernels/gradients.d.ts', 'README.md', 'CHANGELOG.md', 'docs/design.md']) {
      expect(fs.existsSync(path.join(installed, file))).withContext(file).toBe(true);
    }
    expect(fs.existsSync(path.join(installed, 'src'))).withContext('sources are not shipped').toBe(false);
  });

  it('works through require()', () => {
    const out = run(process.execPath, ['-e', `
      const tf = require('@tensorflow/tfjs');
      const p = require('${packageJson.name}');
      require('${packageJson.name}/gradients');
      if (!require.resolve('${packageJson.name}').startsWith(${JSON.stringify(app)})) throw new Error('resolved outside the app: ' + require.resolve('${packageJson.name}'));
      ${APP_BODY}`], app);
    expect(JSON.parse(out)).toEqual(jasmine.objectContaining(expected));
  });

  it('works through import', () => {
    fs.writeFileSync(path.join(app, 'main.mjs'), `
      import * as tf from '@tensorflow/tfjs';
      import * as p from '${packageJson.name}';
      import '${packageJson.name}/gradients';
      if (!import.meta.resolve('${packageJson.name}').startsWith(${JSON.stringify(new URL(`file://${app}`).href)})) throw new Error('resolved outside the app');
      ${APP_BODY}`);
    const out = run(process.execPath, ['main.mjs'], app);
    expect(JSON.parse(out)).toEqual(jasmine.objectContaining(expected));
  });

  // The worker threads start from the script embedded in dist/, with no file to find; unref'd, they let the process exit.
  for (const [how, file, source] of [
    ['require()', 'threads.cjs', `const tf = require('@tensorflow/tfjs-core'); require('@tensorflow/tfjs-backend-cpu'); const p = require('${packageJson.name}');`],
    ['import', 'threads.mjs', `import * as tf from '@tensorflow/tfjs-core'; import '@tensorflow/tfjs-backend-cpu'; import * as p from '${packageJson.name}';`],
  ]) {
    it(`runs the SIMD kernel on worker threads through ${how}, and the process exits`, () => {
      fs.writeFileSync(path.join(app, file), `${source}
        const lines = [];
        const log = console.log;
        console.log = line => lines.push(String(line));
        tf.setBackend('cpu').then(async () => {
          tf.env().set(p.CONV_BACKPROP_FILTERS_THREADS, 2);
          const ready = await p.simdThreadsReady();
          tf.env().set(p.CONV_BACKPROP_FILTERS_VERBOSE, true);
          const x = tf.ones([2, 28, 28, 32]);
          const sum = tf.sum(p.convolutionBackpropFilters(x, x, {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]})).dataSync()[0];
          log(JSON.stringify({ready, sum, path: lines.filter(l => l.startsWith('conv_backprop_filters_verbose'))[0].split(',')[4]}));
        });`);
      const out = execFileSync(process.execPath, [file], {cwd: app, encoding: 'utf8', timeout: 60000, stdio: ['ignore', 'pipe', 'pipe']});
      // Per filter element, the positions whose 3×3 window (pads 1) stays in 28×28, over 2 samples.
      const sum = 2 * (28 * 28 + 4 * 27 * 28 + 4 * 27 * 27) * 32 * 32;
      expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ready: 2, sum, path: 'simd threads=2'});
    });
  }

  // Bun and Deno (their npm packages `bun` and `deno` ship the runtimes) run the threaded path too,
  // on cpu and wasm, with the values of one thread. Run where the runtime is on the PATH.
  for (const [runtime, args] of [['bun', ['runtimes.mjs']], ['deno', ['run', '-A', 'runtimes.mjs']]] as const) {
    it(`runs the SIMD kernel on worker threads in ${runtime}, on cpu and wasm, with the values of one thread`, () => {
      const found = spawnSync(runtime, ['--version'], {encoding: 'utf8'});
      if (found.error !== undefined || found.status !== 0) {
        pending(`${runtime} is not on the PATH (npm i bun deno, then put node_modules/.bin on the PATH)`);
        return;
      }
      fs.writeFileSync(path.join(app, 'runtimes.mjs'), `
        import * as tf from '@tensorflow/tfjs-core';
        import '@tensorflow/tfjs-backend-cpu';
        import '@tensorflow/tfjs-backend-wasm';
        import * as p from '${packageJson.name}';
        const out = {};
        for (const backend of ['cpu', 'wasm']) {
          await tf.setBackend(backend);
          const x = tf.randomNormal([2, 20, 20, 24], 0, 1, 'float32', 1);
          const dy = tf.randomNormal([2, 20, 20, 16], 0, 1, 'float32', 2);
          const runs = [];
          for (const threads of [1, 2]) {
            tf.env().set(p.CONV_BACKPROP_FILTERS_THREADS, threads);
            tf.env().set(p.CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, 0);
            const ready = await p.simdThreadsReady();
            const dW = p.convolutionBackpropFilters(x, dy, {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]});
            runs.push({ready, bits: Array.from(new Uint32Array(dW.dataSync().buffer)).join()});
          }
          out[backend] = {ready: runs.map(r => r.ready), same: runs[0].bits === runs[1].bits};
        }
        console.log(JSON.stringify(out));`);
      const result = spawnSync(runtime, args, {cwd: app, encoding: 'utf8', timeout: 120000});
      expect(result.signal).withContext(`${runtime} did not exit: ${result.stderr}`).toBeNull();
      expect(result.status).withContext(result.stderr).toBe(0);
      expect(JSON.parse(result.stdout.trim().split('\n').pop()!)).toEqual({cpu: {ready: [1, 2], same: true}, wasm: {ready: [1, 2], same: true}});
    }, 150000);
  }

  it('bundles for the browser with esbuild, kernel registration included', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const esbuild = require('esbuild') as typeof import('esbuild');
    fs.writeFileSync(path.join(app, 'browser.js'), `
      import * as tf from '@tensorflow/tfjs-core';
      import '@tensorflow/tfjs-backend-cpu';
      import '@tensorflow/tfjs-backend-webgl';
      import {convolutionBackpropFilters, CONV_BACKPROP_FILTERS_THREADS, CONV_BACKPROP_FILTERS_VERBOSE} from '${packageJson.name}';
      import '${packageJson.name}/gradients';
      const kernels = tf.getKernelsForBackend('webgl').map(k => k.kernelName);
      // No Worker here (as in an extension without workers): the cpu kernel runs on one thread.
      globalThis.__done = tf.setBackend('cpu').then(() => {
        tf.env().set(CONV_BACKPROP_FILTERS_THREADS, 2);
        tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, true);
        const x = tf.ones([2, 28, 28, 32]);
        const sum = tf.sum(convolutionBackpropFilters(x, x, {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]})).dataSync()[0];
        globalThis.__result = {kernels, op: typeof convolutionBackpropFilters, sum};
      });
    `);
    const result = await esbuild.build({
      entryPoints: [path.join(app, 'browser.js')], absWorkingDir: app, bundle: true, platform: 'browser', format: 'iife',
      minify: true, write: false, logLevel: 'silent', metafile: true,
    });
    const bundle = result.outputFiles[0].text;
    const inputs = Object.keys(result.metafile.inputs);
    // The package's own files came from the installed copy, not the repository.
    expect(inputs.some(f => f.includes(`node_modules/${packageJson.name}/dist/index.mjs`))).toBe(true);
    expect(inputs.some(f => f.includes(`node_modules/${packageJson.name}/dist/gradients.mjs`))).toBe(true);
    // Minified and tree-shaken, the registration of every kernel name survives (sideEffects: true).
    for (const name of expected.registered) expect(bundle).withContext(name).toContain(`"${name}"`);
    // The cpu kernel's WebAssembly SIMD module is inlined (base64 of the "\\0asm" magic), and so is its worker script.
    expect(bundle).toContain('AGFzbQ');
    expect(bundle).toContain('Atomics.wait');
    // Run it in a fresh V8 context with no Node globals (no process, require or module): the
    // kernels are registered for webgl as they are in a page.
    fs.writeFileSync(path.join(app, 'bundle.js'), bundle);
    const ran = JSON.parse(run(process.execPath, ['-e', `
      const vm = require('node:vm');
      const paths = [];
      const pageConsole = {...console, log: line => paths.push(String(line).split(',')[4])};
      const page = {console: pageConsole, TextEncoder, TextDecoder, WebAssembly, setTimeout, clearTimeout, queueMicrotask, atob};
      page.self = page;  // tfjs finds its global object as self, as in a worker
      vm.runInNewContext(require('node:fs').readFileSync('bundle.js', 'utf8'), page);
      page.__done.then(() => console.log(JSON.stringify({...page.__result, paths})));`], app)) as
        {kernels: string[]; op: string; sum: number; paths: string[]};
    expect(ran.op).toBe('function');
    expect(ran.kernels).toEqual(jasmine.arrayContaining(expected.registered));
    expect(ran.sum).toBe(2 * (28 * 28 + 4 * 27 * 28 + 4 * 27 * 27) * 32 * 32);
    expect(ran.paths.filter(p => p !== undefined)).toEqual(['simd threads=1 (no workers)']);
  }, 60000);
});

import {execFileSync, spawnSync} from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type {AddressInfo} from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type {Browser} from 'puppeteer-core';

import {CHROMIUM, launchChromium, NO_CHROMIUM} from './helpers/chromium';
import {ENGINE_RELAXED_SIMD} from './helpers/setup';
import {expectClose, seededValues} from './helpers/util';
import {referenceFilterGradient} from './reference';

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
/** The verbose path's start in a fresh process of this Node: the build it chooses by default. */
const SIMD_PATH = ENGINE_RELAXED_SIMD ? 'simd relaxed' : 'simd';

function run(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, {cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: {...process.env, npm_config_update_notifier: 'false'}});
}

/**
 * The command that runs `runtime` (bun, deno): the one on the PATH, else the one the npm package
 * of that name put in this project's node_modules/.bin; or why neither answers `--version`.
 */
function findRuntime(runtime: string): {command: string} | {missing: string} {
  const reasons: string[] = [];
  for (const command of [runtime, path.join(root, 'node_modules', '.bin', runtime)]) {
    const found = spawnSync(command, ['--version'], {encoding: 'utf8', timeout: 30000});
    if (found.error === undefined && found.status === 0) return {command};
    reasons.push(`${command}: ${found.error?.message ?? (found.stderr.trim().split('\n')[0] || `exit status ${found.status}`)}`);
  }
  return {missing: reasons.join('; ')};
}


/**
 * The app a Vite or webpack user writes: tfjs-core, its cpu backend and this package, imported by
 * name. `globalThis.__app.run` computes one filter gradient on cpu with 1 and then 2 threads
 * asked for (no threshold), the verbose flag on, and returns per run the threads that
 * simdThreadsReady() reported, the path the verbose line printed (its 5th field) and the values.
 */
const BUNDLER_ENTRY = `
  import * as tf from '@tensorflow/tfjs-core';
  import '@tensorflow/tfjs-backend-cpu';
  import {convolutionBackpropFilters, simdThreadsReady, CONV_BACKPROP_FILTERS_THREADS, CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP,
          CONV_BACKPROP_FILTERS_VERBOSE} from '${packageJson.name}';

  globalThis.__app = {
    async run(x, dy, attrs) {
      if (!await tf.setBackend('cpu')) throw new Error('the cpu backend did not start');
      const tensorsBefore = tf.memory().numTensors;
      const xt = tf.tensor(x.values, x.shape, 'float32');
      const dyt = tf.tensor(dy.values, dy.shape, 'float32');
      const runs = [];
      const log = console.log;
      for (const threads of [1, 2]) {
        tf.env().set(CONV_BACKPROP_FILTERS_THREADS, threads);
        tf.env().set(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, 0);
        const ready = await simdThreadsReady();
        const lines = [];
        console.log = (...args) => lines.push(args.join(' '));
        tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, true);
        let dW;
        try {
          dW = convolutionBackpropFilters(xt, dyt, attrs);
        } finally {
          tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, false);
          console.log = log;
        }
        const values = dW.dataSync();
        const verbose = lines.filter(line => line.startsWith('conv_backprop_filters_verbose'));
        runs.push({threads, ready, paths: verbose.map(line => line.split(',')[4]), shape: dW.shape, values: Array.from(values),
                   bits: Array.from(new Uint32Array(values.buffer, values.byteOffset, values.length))});
        dW.dispose();
      }
      tf.dispose([xt, dyt]);
      return {isolated: globalThis.crossOriginIsolated, sharedArrayBuffer: typeof SharedArrayBuffer, backend: tf.getBackend(),
              runs, tensorsLeft: tf.memory().numTensors - tensorsBefore};
    },
  };
`;

/** A page loading `script` (the data: icon keeps Chromium from asking for /favicon.ico). */
function htmlPage(script: string, type: 'module' | 'classic'): string {
  return `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>app</title></head>
    <body><script ${type === 'module' ? 'type="module" ' : ''}src="${script}"></script></body></html>`;
}

interface StaticServer {
  url: string;
  /** Paths asked for that were not there. */
  missing: string[];
  close(): Promise<void>;
}

/**
 * How a page is served: plain (no SharedArrayBuffer), cross-origin isolated (COOP/COEP headers),
 * or cross-origin isolated with a Content-Security-Policy that allows workers only from the
 * page's origin, so not from the Blob URL the package starts its workers from.
 */
type PageKind = 'plain' | 'isolated' | 'isolated-no-blob-workers';
const PAGE_HEADERS: Record<PageKind, Record<string, string>> = {
  'plain': {},
  'isolated': {'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp'},
  'isolated-no-blob-workers': {
    'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp',
    'Content-Security-Policy': "worker-src 'self'",
  },
};

/** Serves the files under `dir` on 127.0.0.1 (a secure context, like localhost) as a `kind` page. */
async function serveStatic(dir: string, kind: PageKind): Promise<StaticServer> {
  const types: Record<string, string> = {'.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css',
                                         '.wasm': 'application/wasm', '.json': 'application/json', '.map': 'application/json'};
  const missing: string[] = [];
  const server = http.createServer((request, response) => {
    const pathname = decodeURIComponent(new URL(request.url ?? '/', 'http://127.0.0.1').pathname);
    const file = path.join(dir, path.normalize(pathname));
    if (!file.startsWith(dir + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      missing.push(pathname);
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, {
      'Content-Type': types[path.extname(file)] ?? 'application/octet-stream',
      'Cache-Control': 'no-store',
      ...PAGE_HEADERS[kind],
    });
    fs.createReadStream(file).pipe(response);
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    missing,
    close: () => new Promise<void>(resolve => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

type Bundler = 'Vite' | 'webpack';

/**
 * Bundles `app`'s index.html (Vite) or bundler-entry.js (webpack, with a page of its own) into
 * `outDir` as a production build, run from the app's folder like a user's project; returns the
 * absolute paths of the modules it took in.
 */
async function bundleApp(bundler: Bundler, app: string, outDir: string): Promise<string[]> {
  if (bundler === 'Vite') {
    const vite = await import('vite');
    const result = await vite.build({configFile: false, root: app, base: './', logLevel: 'silent', build: {outDir, emptyOutDir: true}});
    const outputs = (Array.isArray(result) ? result : [result]) as unknown as {output: {type: string; moduleIds?: string[]}[]}[];
    return outputs.flatMap(o => o.output.flatMap(chunk => chunk.moduleIds ?? []));
  }
  const webpack = (await import('webpack')).default;
  const stats = await new Promise<import('webpack').Stats>((resolve, reject) => webpack({
    mode: 'production', context: app, entry: './bundler-entry.js', target: 'web', devtool: false,
    output: {path: outDir, filename: 'bundle.js', clean: true}, performance: {hints: false}, infrastructureLogging: {level: 'none'},
  }, (error, result) => error || result === undefined ? reject(error ?? new Error('webpack returned no stats')) : resolve(result)));
  if (stats.hasErrors()) throw new Error(`webpack: ${stats.toString({all: false, errors: true})}`);
  fs.writeFileSync(path.join(outDir, 'index.html'), htmlPage('./bundle.js', 'classic'));
  return [...stats.compilation.fileDependencies];
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
      expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ready: 2, sum, path: `${SIMD_PATH} threads=2`});
    });
  }

  // Bun and Deno (their npm packages `bun` and `deno`, devDependencies here, ship the runtimes) run
  // the threaded path too, on cpu and wasm, with the values of one thread. Run with the runtime on
  // the PATH, else the one in this project's node_modules/.bin.
  for (const [runtime, args] of [['bun', ['runtimes.mjs']], ['deno', ['run', '-A', 'runtimes.mjs']]] as const) {
    it(`runs the SIMD kernel on worker threads in ${runtime}, on cpu and wasm, with the values of one thread`, () => {
      const found = findRuntime(runtime);
      if ('missing' in found) {
        pending(`${runtime} runs neither from the PATH nor from node_modules/.bin (the devDependency ${runtime} installs it): ${found.missing}`);
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
      const result = spawnSync(found.command, args, {cwd: app, encoding: 'utf8', timeout: 120000});
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
    expect(ran.paths.filter(p => p !== undefined)).toEqual([`${SIMD_PATH} threads=1 (no workers)`]);
  }, 60000);

  // Vite and webpack bundles of the installed package, each served from a local server on a plain
  // page, on a cross-origin-isolated one (COOP/COEP headers) and on an isolated one whose CSP
  // forbids Blob URL workers, in headless Chromium: threads where the page allows them (2 Web
  // Workers), one thread with its reason where it does not, and in all the values of one thread,
  // bitwise, close to the float64 reference.
  describe('bundled by Vite and webpack, in headless Chromium', () => {
    const attrs = {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]};
    // 9 kernel offsets × 2 vector tiles × 4 broadcast chunks = 72 output units: tasks for both threads.
    const x = {shape: [2, 12, 12, 16], values: Array.from(seededValues(2 * 12 * 12 * 16, 31))};
    const dy = {shape: [2, 12, 12, 16], values: Array.from(seededValues(2 * 12 * 12 * 16, 32))};
    let reference: {shape: number[]; values: Float64Array};
    let browser: Browser | undefined;
    const servers: Partial<Record<PageKind, StaticServer>> = {};
    const bundles = new Map<Bundler, Promise<string[]>>();
    const bundlesDir = () => path.join(app, 'bundles');
    /** Each bundler runs once, for the first spec that needs its bundle. */
    const bundled = (bundler: Bundler) => {
      if (!bundles.has(bundler)) bundles.set(bundler, bundleApp(bundler, app, path.join(bundlesDir(), bundler.toLowerCase())));
      return bundles.get(bundler)!;
    };

    beforeAll(async () => {
      reference = referenceFilterGradient(false, x, dy, {...attrs, kernel: [3, 3]});
      fs.writeFileSync(path.join(app, 'bundler-entry.js'), BUNDLER_ENTRY);
      fs.writeFileSync(path.join(app, 'index.html'), htmlPage('./bundler-entry.js', 'module'));
      fs.mkdirSync(bundlesDir(), {recursive: true});
      if (!fs.existsSync(CHROMIUM)) return;
      for (const kind of Object.keys(PAGE_HEADERS) as PageKind[]) servers[kind] = await serveStatic(bundlesDir(), kind);
      browser = await launchChromium();
    }, 60000);

    afterAll(async () => {
      await browser?.close();
      for (const server of Object.values(servers)) await server.close();
    });

    for (const bundler of ['Vite', 'webpack'] as const) {
      const pages: Array<[PageKind, string, RegExp]> = [
        ['isolated', 'a cross-origin-isolated page: 2 threads', /^simd( relaxed)? threads=2$/],
        ['plain', 'a plain page: 1 thread (not cross-origin isolated)', /^simd( relaxed)? threads=1 \(not cross-origin isolated\)$/],
        // Chromium refuses the Blob URL worker: the pool fails at its start, the call runs alone.
        ['isolated-no-blob-workers', 'an isolated page whose CSP forbids Blob URL workers: 1 thread',
         /^simd( relaxed)? threads=1 \(worker (failed to start|error)/],
      ];
      for (const [kind, where, threadedPath] of pages) {
        const isolated = kind !== 'plain';
        it(`bundled by ${bundler}, runs on ${where}, with the values of 1 thread and the reference`, async () => {
          if (browser === undefined) {
            pending(NO_CHROMIUM);
            return;
          }
          const modules = await bundled(bundler);
          // The package came from the installed tarball, through its ESM entry ('import' condition).
          expect(modules.filter(m => m.includes(`/node_modules/${packageJson.name}/dist/`)))
              .toEqual([path.join(app, 'node_modules', packageJson.name, 'dist', 'index.mjs')]);

          const server = servers[kind]!;
          const page = await browser.newPage();
          const pageErrors: string[] = [];
          page.on('pageerror', error => pageErrors.push(String(error)));
          page.on('console', message => {
            // The CSP page's refused worker is reported as a console error: expected there.
            const refused = kind === 'isolated-no-blob-workers' && message.text().includes('Content Security Policy');
            if ((message.type() === 'error' || message.type() === 'warn') && !refused) {
              pageErrors.push(`console.${message.type()}: ${message.text()}`);
            }
          });
          try {
            await page.goto(`${server.url}/${bundler.toLowerCase()}/index.html`, {waitUntil: 'load', timeout: 30000});
            await page.waitForFunction('globalThis.__app !== undefined', {timeout: 30000});
            const result = await page.evaluate(`globalThis.__app.run(${JSON.stringify(x)}, ${JSON.stringify(dy)}, ${JSON.stringify(attrs)})`) as {
              isolated: boolean; sharedArrayBuffer: string; backend: string; tensorsLeft: number;
              runs: {threads: number; ready: number; paths: string[]; shape: number[]; values: number[]; bits: number[]}[];
            };
            expect(pageErrors).toEqual([]);
            expect(server.missing).toEqual([]);
            expect(result.isolated).withContext('crossOriginIsolated').toBe(isolated);
            expect(result.sharedArrayBuffer).toBe(isolated ? 'function' : 'undefined');
            expect(result.backend).toBe('cpu');
            expect(result.tensorsLeft).withContext('tensors left behind').toBe(0);
            const [one, two] = result.runs;
            // The relaxed-SIMD build where Chromium validates it, in both runs alike.
            expect(one.ready).toBe(1);
            expect(one.paths).toEqual([jasmine.stringMatching(/^simd( relaxed)? threads=1$/)]);
            expect(two.ready).toBe(kind === 'isolated' ? 2 : 1);
            expect(two.paths).toEqual([jasmine.stringMatching(threadedPath)]);
            expect(String(two.paths[0]).includes('relaxed')).withContext('the same build in both runs').toBe(String(one.paths[0]).includes('relaxed'));
            expect(one.shape).toEqual(reference.shape);
            expect(two.shape).toEqual(reference.shape);
            expect(two.bits).withContext('2 threads asked for, bitwise against 1').toEqual(one.bits);
            expectClose(one.values, reference.values, `${bundler}, 1 thread, against the float64 reference`, 1e-4, 1e-4);
          } finally {
            await page.close();
          }
        }, 60000);
      }
    }
  });
});

// The browser suite: jasmine in headless Debian Chromium (WebGL through SwiftShader, no GPU
// needed), bundled offline by karma-esbuild. `npm run test:browser` runs it.
process.env.CHROME_BIN = process.env.CHROME_BIN || '/usr/bin/chromium';

/**
 * Prints the time per top-level describe block (to keep the suite's minutes in view) and one
 * closing line in the plain "N passed, N failed, N skipped" form CI logs are read for.
 */
function SummaryReporter(baseReporterDecorator) {
  baseReporterDecorator(this);
  const counts = {passed: 0, failed: 0, skipped: 0};
  const seconds = new Map();
  this.onSpecComplete = (browser, result) => {
    if (result.skipped || result.pending) counts.skipped++;
    else if (result.success) counts.passed++;
    else counts.failed++;
    const block = result.suite[0] ?? '(top level)';
    seconds.set(block, (seconds.get(block) ?? 0) + (result.time ?? 0) / 1000);
  };
  this.onRunComplete = () => {
    const blocks = [...seconds].sort((a, b) => b[1] - a[1]).map(([name, s]) => `  ${s.toFixed(1).padStart(6)} s  ${name}`);
    this.write(`\nseconds per describe block:\n${blocks.join('\n')}\n`);
    this.write(`\nbrowser: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  };
}
SummaryReporter.$inject = ['baseReporterDecorator'];

/**
 * karma-esbuild's test entry point, with each spec imported by a path esbuild reads as a path.
 * karma-esbuild writes its entry file into the OS temp folder and imports each spec by its path
 * relative to that folder, written bare: for a checkout under the temp folder (a clone in /tmp)
 * that is `import "fresh/test/browser/webgl.spec.js"`, which esbuild resolves as a package and
 * fails ("Could not resolve"), leaving 0 browser specs. Here every such path starts with `./` or
 * `../`. Same interface as karma-esbuild's TestEntryPoint (dist/test-entry-point.js), which
 * index.js reads as `file`, `addFile`, `write` and `touch`.
 */
function EsbuildEntryPoint() {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const dir = fs.realpathSync(os.tmpdir());
  const imports = new Set();
  let dirty = false;
  return {
    file: path.join(dir, `${require('node:crypto').randomBytes(8).toString('hex')}-bundle.js`),
    addFile(file) {
      const relative = path.relative(dir, file).split(path.sep).join(path.posix.sep);
      const specifier = relative.startsWith('../') ? relative : `./${relative}`;
      if (imports.has(specifier)) return;
      imports.add(specifier);
      dirty = true;
    },
    write() {
      if (!dirty) return;
      dirty = false;
      fs.writeFileSync(this.file, [...imports].map(s => `import ${JSON.stringify(s)};`).join('\n'));
    },
    touch() {
      fs.writeFileSync(this.file, '');
    },
  };
}
EsbuildEntryPoint.$inject = [];

/**
 * The page the suite runs in. By default cross-origin isolated (COOP/COEP headers on every
 * response karma serves), so SharedArrayBuffer exists and the cpu and wasm kernels run on worker
 * threads; KARMA_PAGE=plain serves no such headers and runs test/browser/threads.spec.ts alone,
 * where threads cannot run (`npm run test:browser` runs both).
 */
const plainPage = process.env.KARMA_PAGE === 'plain';
const isolationHeaders = [
  {match: '.*', name: 'Cross-Origin-Opener-Policy', value: 'same-origin'},
  {match: '.*', name: 'Cross-Origin-Embedder-Policy', value: 'require-corp'},
];
const specs = plainPage ? 'test/browser/threads.spec.ts' : 'test/browser/**/*.spec.ts';

module.exports = config => {
  config.set({
    // The entry point after 'karma-*': a later plugin's provider of the same name wins.
    plugins: ['karma-*', {'reporter:summary': ['type', SummaryReporter]}, {karmaEsbuildEntryPoint: ['factory', EsbuildEntryPoint]}],
    frameworks: ['jasmine'],
    files: [
      {pattern: specs, watched: false},
      // tfjs-backend-wasm's binaries, fetched by the wasm backend (setWasmPaths in test/browser/threads.spec.ts).
      {pattern: 'node_modules/@tensorflow/tfjs-backend-wasm/dist/*.wasm', watched: false, included: false, served: true},
    ],
    preprocessors: {[specs]: ['esbuild']},
    customHeaders: plainPage ? [] : isolationHeaders,
    esbuild: {target: 'es2020', sourcemap: false, define: {'process.env.NODE_ENV': '"test"'}},
    browsers: ['ChromiumHeadlessCI'],
    customLaunchers: {
      ChromiumHeadlessCI: {
        base: 'ChromeHeadless',
        flags: [
          '--no-sandbox',  // CI runs as root
          '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist',
          '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
          '--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader',
        ],
      },
    },
    // A spec that runs no expectation fails: it could not have failed otherwise.
    client: {jasmine: {random: false, timeoutInterval: 120000, failSpecWithNoExpectations: true}, threadsPage: plainPage ? 'plain' : 'isolated'},
    reporters: ['dots', 'summary'],
    singleRun: true,
    // Shader compiles and SwiftShader runs block the page for seconds at a time.
    browserNoActivityTimeout: 600000,
    browserDisconnectTimeout: 600000,
    pingTimeout: 600000,
    captureTimeout: 120000,
  });
};

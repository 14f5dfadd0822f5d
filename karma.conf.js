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

module.exports = config => {
  config.set({
    plugins: ['karma-*', {'reporter:summary': ['type', SummaryReporter]}],
    frameworks: ['jasmine'],
    files: [{pattern: 'test/browser/**/*.spec.ts', watched: false}],
    preprocessors: {'test/browser/**/*.spec.ts': ['esbuild']},
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
    client: {jasmine: {random: false, timeoutInterval: 120000}},
    reporters: ['dots', 'summary'],
    singleRun: true,
    // Shader compiles and SwiftShader runs block the page for seconds at a time.
    browserNoActivityTimeout: 600000,
    browserDisconnectTimeout: 600000,
    pingTimeout: 600000,
    captureTimeout: 120000,
  });
};

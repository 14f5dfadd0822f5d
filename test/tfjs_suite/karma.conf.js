// tfjs's own convolution tests with the drop-in gradients (and with TFJS_SUITE_BASELINE=1 without
// them too), in their own karma runs (`npm run test:browser` runs them after the main suite): tfjs's
// test harness resets the engine, disposing every backend, before and after each block. On webgl
// by default; TFJS_SUITE_BROWSER_BACKEND=webgpu runs them on webgpu (browser_entry_webgpu.ts) in a
// page of its own. Settings are the main suite's (../../karma.conf.js) but for the files and two
// esbuild options.
const path = require('path');

const base = require('../../karma.conf.js');

/** tfjs's jasmine_util.js requires jasmine-core 3's jasmineRequire: see jasmine_require_shim.ts. */
const jasmineRequireShim = {
  name: 'jasmine-require-shim',
  setup(build) {
    build.onResolve({filter: /^jasmine-core\/lib\/jasmine-core\/jasmine\.js$/},
                    () => ({path: path.join(__dirname, 'jasmine_require_shim.ts')}));
  },
};

module.exports = config => {
  base(config);
  const entry = process.env.TFJS_SUITE_BROWSER_BACKEND === 'webgpu' ? 'test/tfjs_suite/browser_entry_webgpu.ts' :
                                                                      'test/tfjs_suite/browser_entry.ts';
  config.set({
    basePath: path.resolve(__dirname, '..', '..'),
    files: [{pattern: entry, watched: false}],
    preprocessors: {[entry]: ['esbuild']},
    // tfjs-core's package.json declares its files free of side effects: the test files would be dropped.
    esbuild: {
      ...config.esbuild,
      ignoreAnnotations: true,
      plugins: [jasmineRequireShim],
      // TFJS_SUITE_BASELINE=1 also runs the tests without the drop-in (see browser_setup.ts).
      define: {...config.esbuild.define, TFJS_SUITE_BASELINE: JSON.stringify(process.env.TFJS_SUITE_BASELINE === '1')},
    },
  });
};

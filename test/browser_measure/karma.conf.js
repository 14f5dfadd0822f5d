// The float16 error measurement (float16_error.ts), alone, with the main suite's settings:
// `npx karma start test/browser_measure/karma.conf.js`. Not part of `npm test`.
const path = require('path');

const base = require('../../karma.conf.js');

module.exports = config => {
  base(config);
  const file = 'test/browser_measure/float16_error.ts';
  config.set({
    basePath: path.resolve(__dirname, '..', '..'),
    files: [{pattern: file, watched: false}],
    preprocessors: {[file]: ['esbuild']},
    client: {...config.client, captureConsole: true},
  });
};

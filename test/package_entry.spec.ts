import {execFileSync} from 'node:child_process';
import * as path from 'node:path';

const root = path.resolve(__dirname, '..');

/** Runs a script in a fresh Node process against the built package, as an app would. */
function runNode(args: string[]): string {
  return execFileSync(process.execPath, args, {cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']});
}

const SCRIPT_BODY = `
  tf.env().set('IS_TEST', true);
  const registered = ['ConvolutionBackpropFilters', 'ConvTransposeBackpropFilters', 'ConvolutionBackwardWeights',
                      'ConvTransposeBackwardWeights'].filter(name => tf.getKernel(name, 'cpu') !== undefined);
  const dW = p.convolutionBackpropFilters([[[1], [2], [3], [4]]], [[[1], [1], [1]]], {strides: [1], filterShape: [2]});
  const attrs = p.fromSpecAttrs({strides: [1], weights_shape: [2], auto_pad: 'VALID', data_format: 'NXC'});
  console.log(JSON.stringify({registered, dW: Array.from(dW.dataSync()), attrs}));
`;

describe('the built package', () => {
  const expected = {
    registered: [
      'ConvolutionBackpropFilters', 'ConvTransposeBackpropFilters', 'ConvolutionBackwardWeights',
      'ConvTransposeBackwardWeights',
    ],
    dW: [6, 9],
    attrs: {strides: [1], filterShape: [2], autoPad: 'VALID', dataFormat: 'NXC'},
  };

  it('works through require() and registers every kernel on import', () => {
    const out = runNode([
      '-e',
      `const tf = require('@tensorflow/tfjs-core'); require('@tensorflow/tfjs-backend-cpu');
       const p = require('tfjs-conv-backprop-filters'); ${SCRIPT_BODY}`,
    ]);
    expect(JSON.parse(out)).toEqual(expected);
  });

  it('works through ESM import', () => {
    const out = runNode([
      '--input-type=module', '-e',
      `import * as tf from '@tensorflow/tfjs-core'; import '@tensorflow/tfjs-backend-cpu';
       import * as p from 'tfjs-conv-backprop-filters'; ${SCRIPT_BODY}`,
    ]);
    expect(JSON.parse(out)).toEqual(expected);
  });

  it('ships typings for the public API', () => {
    const types = require(path.join(root, 'package.json')).exports['.'].types as string;
    const text = require('node:fs').readFileSync(path.join(root, types), 'utf8') as string;
    expect(text).toContain("export * from '../src/index'");
  });
});

/**
 * `npm run bench:webgl [-- --runs N]`: our webgl kernel against tfjs's built-in webgl filter
 * gradients (Conv2DBackpropFilter, DepthwiseConv2dNativeBackpropFilter, Conv3DBackpropFilterV2)
 * on the same shapes in the same headless Chromium, one run after the other.
 *
 * Node picks the workloads from the benchdnn lists (bench/workloads.ts) and starts karma with
 * bench/webgl_page.ts, which receives them through karma's client args and prints a Markdown
 * table. In this project's machine WebGL runs on SwiftShader (the CPU): compare the two columns
 * of one run with each other, never with the cpu bench.
 */
import * as path from 'path';

import {describeProblem, findProblem, loadWorkloadFile, toOpArguments} from './workloads';

/** Which built-in tfjs kernel computes the same gradient, for the page to call. */
export type BuiltIn = 'Conv2DBackpropFilter' | 'DepthwiseConv2dNativeBackpropFilter' | 'Conv3DBackpropFilterV2';

export interface WebglWorkload {
  name: string;
  source: string;
  shape: string;
  builtIn: BuiltIn;
  args: ReturnType<typeof toOpArguments>;
}

/** Batches chosen so tfjs's built-in kernel takes seconds, not minutes, per run on SwiftShader. */
const PICKS: Array<{file: string; name: string; batch: number; builtIn: BuiltIn}> = [
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res2a_branch2b', batch: 1, builtIn: 'Conv2DBackpropFilter'},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res2a_branch1', batch: 1, builtIn: 'Conv2DBackpropFilter'},
  {file: 'conv/shapes_resnet_50', name: 'resnet_50:res3a_branch2c', batch: 1, builtIn: 'Conv2DBackpropFilter'},
  {file: 'conv/shapes_mobilenet_dw', name: 'mobilenet:conv3_1/dw', batch: 1, builtIn: 'DepthwiseConv2dNativeBackpropFilter'},
  {file: 'conv/shapes_mobilenet_dw', name: 'mobilenet:conv2_2/dw', batch: 1, builtIn: 'DepthwiseConv2dNativeBackpropFilter'},
  {file: 'conv/shapes_3d', name: '3d_conv_pad:1', batch: 1, builtIn: 'Conv3DBackpropFilterV2'},
];

function parseRuns(argv: readonly string[]): number {
  const index = argv.indexOf('--runs');
  const runs = index >= 0 ? Number(argv[index + 1]) : 3;
  if (!Number.isSafeInteger(runs) || runs < 1) throw new Error(`--runs needs a positive integer, got '${argv[index + 1]}'`);
  return runs;
}

interface KarmaApi {
  config: {parseConfig(file: string, overrides: object, options: object): Promise<object>};
  Server: new (config: object, done: (exitCode: number) => void) => {start(): Promise<void>};
}

async function main() {
  const runs = parseRuns(process.argv.slice(2));
  const workloads: WebglWorkload[] = PICKS.map(pick => {
    const problem = findProblem(loadWorkloadFile(pick.file), pick.name);
    return {
      name: problem.name,
      source: `${problem.source}:${problem.line}`,
      shape: describeProblem(problem),
      builtIn: pick.builtIn,
      args: toOpArguments(problem, pick.batch),
    };
  });
  const root = path.resolve(__dirname, '..');
  const page = path.join(root, 'bench', 'webgl_page.ts');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const karma = require('karma') as KarmaApi;
  const config = await karma.config.parseConfig(
      path.join(root, 'karma.conf.js'), {
        files: [{pattern: page, watched: false}],
        preprocessors: {[page]: ['esbuild']},
        reporters: ['dots'],
        client: {args: [JSON.stringify({workloads, runs})], captureConsole: true, jasmine: {random: false, timeoutInterval: 3600000}},
        browserConsoleLogOptions: {level: 'log', format: '%m', terminal: true},
      },
      {promiseConfig: true, throwErrors: true});
  await new karma.Server(config, exitCode => process.exit(exitCode)).start();
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});

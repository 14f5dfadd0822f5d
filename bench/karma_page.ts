/**
 * Runs a bench page in headless Chromium through karma, with the browser suite's configuration
 * (karma.conf.js: the launcher and its flags, WebGPU's included; esbuild bundling). The page gets
 * `input` as its client argument and logs its result as one line `<marker> {json}`; every other
 * line it logs goes to stderr. Shared by bench:webgl, bench:webgpu, bench:training and bench:browser-threads.
 */
import * as path from 'path';

interface KarmaServer {
  start(): Promise<void>;
  on(event: 'browser_log', listener: (browser: unknown, log: string, type: string) => void): void;
}

interface KarmaApi {
  config: {parseConfig(file: string, overrides: object, options: object): Promise<object>};
  Server: new (config: object, done: (exitCode: number) => void) => KarmaServer;
}

/** The page's result (null when it logged none) and karma's exit code. */
export interface KarmaPageRun<Result> {
  result: Result | null;
  exitCode: number;
}

/**
 * Bundles `files` (in order) into one page, runs it and resolves when karma exits. `served`:
 * patterns served as they are under /base/ (relative to the repository root), neither bundled
 * nor included, e.g. tfjs-backend-wasm's binaries (the page's `files` replace karma.conf.js's).
 */
export async function runKarmaPage<Result>(
    files: readonly string[], input: unknown, marker: string, served: readonly string[] = []): Promise<KarmaPageRun<Result>> {
  const root = path.resolve(__dirname, '..');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const karma = require('karma') as KarmaApi;
  const config = await karma.config.parseConfig(
      path.join(root, 'karma.conf.js'), {
        files: [...files.map(pattern => ({pattern, watched: false})),
                ...served.map(pattern => ({pattern, watched: false, included: false, served: true}))],
        preprocessors: Object.fromEntries(files.map(file => [file, ['esbuild']])),
        reporters: ['dots'],
        client: {args: [JSON.stringify(input)], captureConsole: true, jasmine: {random: false, timeoutInterval: 3600000}},
        browserConsoleLogOptions: {level: 'log', format: '%m', terminal: false},
      },
      {promiseConfig: true, throwErrors: true});
  return new Promise((resolve, reject) => {
    let result: Result | null = null;
    const server = new karma.Server(config, exitCode => resolve({result, exitCode}));
    server.on('browser_log', (_browser, log) => {
      const text = String(log);
      const at = text.indexOf(`${marker} `);
      if (at >= 0) result = JSON.parse(text.slice(text.indexOf('{', at), text.lastIndexOf('}') + 1)) as Result;
      else process.stderr.write(`${text.replace(/^'|'$/g, '')}\n`);
    });
    server.start().catch(reject);
  });
}

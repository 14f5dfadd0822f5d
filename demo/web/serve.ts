/**
 * `npm run demo:web`: bundles demo/web/app.ts with esbuild (tfjs and this package's built dist/
 * from node_modules: nothing is fetched from the network) and serves it on localhost.
 * `npx tsx demo/web/serve.ts [port]`; the end-to-end test starts it on a free port.
 */
import {build} from 'esbuild';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type {AddressInfo} from 'node:net';
import * as path from 'node:path';

export interface DemoServer {
  url: string;
  close(): Promise<void>;
}

export async function startDemoServer(port: number): Promise<DemoServer> {
  const bundle = await build({
    entryPoints: [path.join(__dirname, 'app.ts')],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    define: {'process.env.NODE_ENV': '"production"'},
    logLevel: 'warning',
  });
  const files: Record<string, {type: string; body: string | Uint8Array}> = {
    '/': {type: 'text/html; charset=utf-8', body: fs.readFileSync(path.join(__dirname, 'index.html'), 'utf8')},
    '/app.js': {type: 'text/javascript; charset=utf-8', body: bundle.outputFiles[0].contents},
    // The wasm backend's binaries, for the page's backend choice (setWasmPaths('/wasm/')).
    ...Object.fromEntries(['tfjs-backend-wasm.wasm', 'tfjs-backend-wasm-simd.wasm', 'tfjs-backend-wasm-threaded-simd.wasm'].map(
        name => [`/wasm/${name}`, {
          type: 'application/wasm',
          body: fs.readFileSync(path.join(__dirname, '..', '..', 'node_modules', '@tensorflow', 'tfjs-backend-wasm', 'dist', name)),
        }])),
  };
  const server = http.createServer((request, response) => {
    const file = files[new URL(request.url ?? '/', 'http://localhost').pathname];
    response.writeHead(file ? 200 : 404, {'content-type': file?.type ?? 'text/plain'});
    response.end(file?.body ?? 'not found');
  });
  await new Promise<void>(resolve => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>(resolve => server.close(() => resolve())),
  };
}

if (require.main === module) {
  startDemoServer(Number(process.argv[2] ?? 8080)).then(
      server => console.log(`demo: open ${server.url} (Ctrl-C to stop)`), error => {
        console.error(error);
        process.exitCode = 1;
      });
}

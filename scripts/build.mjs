// Builds dist/: one CommonJS and one ESM bundle of the package entry (kernels/index.ts), with
// @tensorflow/* left external so the app's own tfjs copy is used, plus .d.ts files from tsc.
import {build} from 'esbuild';
import {execFileSync} from 'node:child_process';
import {rmSync} from 'node:fs';

rmSync('dist', {recursive: true, force: true});
const common = {
  entryPoints: ['kernels/index.ts'],
  bundle: true,
  platform: 'neutral',
  target: 'es2020',
  external: ['@tensorflow/*'],
  sourcemap: true,
  logLevel: 'warning',
};
await Promise.all([
  build({...common, format: 'cjs', outfile: 'dist/index.cjs'}),
  build({...common, format: 'esm', outfile: 'dist/index.mjs'}),
]);
execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {stdio: 'inherit'});

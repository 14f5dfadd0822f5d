// Builds dist/: one CommonJS and one ESM bundle of the package entry (kernels/index.ts) and of the
// drop-in gradients entry (kernels/gradients.ts), with
// @tensorflow/* left external so the app's own tfjs copy is used, plus .d.ts files from tsc.
import {build} from 'esbuild';
import {execFileSync} from 'node:child_process';
import {rmSync} from 'node:fs';

import {buildMicroKernels} from './build_wasm.mjs';

rmSync('dist', {recursive: true, force: true});
await buildMicroKernels();
const common = {
  entryPoints: ['kernels/index.ts'],
  bundle: true,
  platform: 'neutral',
  target: 'es2020',
  external: ['@tensorflow/*'],
  sourcemap: true,
  logLevel: 'warning',
};
/**
 * The `./gradients` entry imports the package entry at run time (dist/index.*) instead of bundling
 * a second copy of it, so importing both registers every kernel once.
 */
const packageEntryExternal = extension => ({
  name: 'package-entry-external',
  setup(pluginBuild) {
    pluginBuild.onResolve({filter: /^\.\/index$/}, () => ({path: `./index.${extension}`, external: true}));
  },
});
await Promise.all([
  build({...common, format: 'cjs', outfile: 'dist/index.cjs'}),
  build({...common, format: 'esm', outfile: 'dist/index.mjs'}),
  build({...common, entryPoints: ['kernels/gradients.ts'], format: 'cjs', outfile: 'dist/gradients.cjs', plugins: [packageEntryExternal('cjs')]}),
  build({...common, entryPoints: ['kernels/gradients.ts'], format: 'esm', outfile: 'dist/gradients.mjs', plugins: [packageEntryExternal('mjs')]}),
]);
execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {stdio: 'inherit'});

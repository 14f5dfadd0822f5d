/**
 * Registers tfjs's webgpu backend in the page of `npm run bench:training`. bench/training.ts puts
 * this file in the karma bundle only when @tensorflow/tfjs-backend-webgpu is installed (it is not
 * a dependency of every build), hence the require: an import of a package that is not there
 * would fail the typecheck.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('@tensorflow/tfjs-backend-webgpu');

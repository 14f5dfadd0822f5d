/**
 * The set-up of one run of tfjs's own convolution tests in Node (run.ts bundles it with the test
 * files and runs the bundle in a child process). TFJS_SUITE_BACKEND names the backend ('cpu' or
 * 'wasm'); TFJS_SUITE_DROP_IN is '1' to run them with the drop-in gradients installed as a user
 * installs them (`require('tfjs-conv-backprop-filters/gradients')`, the built package), '0' for
 * the baseline: tfjs alone, without this package.
 *
 * tfjs's test files are the ESM build of tfjs-core (dist/ops/*_test.js, importing '../index'),
 * bundled with their jasmine_util.js; the backends and this package use the CommonJS build they
 * load in any app. Both copies share tfjs's engine and its kernel and gradient registries through
 * the global namespace.
 */
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-wasm';
import '@tensorflow/tfjs-core/dist/register_all_gradients';  // tfjs's own gradients (its tests take them)
import '@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops';  // x.conv2d(…) (as tfjs's own test set-up)

import {setTestEnvs} from '@tensorflow/tfjs-core/dist/jasmine_util';

import {skipReason, TFJS_SUITE_RESULT} from './skips';

const backend = process.env.TFJS_SUITE_BACKEND ?? 'cpu';
const dropIn = process.env.TFJS_SUITE_DROP_IN === '1';

if (dropIn) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('tfjs-conv-backprop-filters/gradients');
}

setTestEnvs([{name: backend, backendName: backend, isDataSync: true}]);
jasmine.DEFAULT_TIMEOUT_INTERVAL = 20000;  // what tfjs's jasmine_util sets

// Specs skipped by name (skips.ts) are filtered out and reported with their reason.
const env = jasmine.getEnv();
const skipped: Array<{name: string; reason: string}> = [];
env.configure({
  specFilter: spec => {
    const reason = skipReason(spec.getFullName(), backend, dropIn);
    if (reason !== undefined) skipped.push({name: spec.getFullName(), reason});
    return reason === undefined;
  },
});

// Per-spec results, and what fails outside a spec (an error in a beforeAll or afterAll, or at the
// top level: jasmine reports those on the suite or the run, not on any spec) with the run's
// overall status, so run.ts can fail on either.
const result = {
  backend, dropIn, run: 0, passed: 0, failed: [] as Array<{name: string; message: string}>, skipped,
  suiteFailures: [] as Array<{name: string; message: string}>, overallStatus: 'unknown',
};
env.addReporter({
  specDone(spec) {
    if (spec.status === 'excluded') return;  // counted in `skipped` by the filter
    result.run++;
    if (spec.status === 'passed') result.passed++;
    else result.failed.push({name: spec.fullName, message: spec.failedExpectations.map(e => e.message).join('; ')});
  },
  suiteDone(suite) {
    if (suite.failedExpectations.length > 0) {
      result.suiteFailures.push({name: suite.fullName, message: suite.failedExpectations.map(e => e.message).join('; ')});
    }
  },
  jasmineDone(run) {
    if (run.failedExpectations.length > 0) {
      result.suiteFailures.push({name: '(top level)', message: run.failedExpectations.map(e => e.message).join('; ')});
    }
    result.overallStatus = run.overallStatus;
    // The first spec-filter call per spec is recorded; jasmine may ask again.
    result.skipped = [...new Map(skipped.map(s => [s.name, s])).values()];
    console.log(`\n${TFJS_SUITE_RESULT}${JSON.stringify(result)}`);
  },
});

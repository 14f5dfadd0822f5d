/**
 * The set-up of tfjs's own convolution tests in the browser (karma.conf.js in this folder;
 * entries: browser_entry.ts on webgl, browser_entry_webgpu.ts on webgpu, each importing its
 * backend and calling setUpTfjsConvTests before the test files load). tfjs's test harness runs
 * every test block once per test environment: '<backend>-drop-in', the backend with the drop-in
 * gradients installed, and with TFJS_SUITE_BASELINE=1 in karma's environment also
 * '<backend>-baseline', the same backend without them (this package imported, its drop-in
 * uninstalled), switched as each spec starts. The baseline doubles the run (minutes on
 * SwiftShader), so `npm test` leaves it out. The flags are those of tfjs's own test environment
 * for the backend. Specs skipped by name (skips.ts) are filtered out with their reason printed;
 * the counts per environment are printed at the end.
 */
import '@tensorflow/tfjs-core/dist/register_all_gradients';  // tfjs's own gradients (its tests take them)
import '@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops';  // x.conv2d(…)

import {getBackend} from '@tensorflow/tfjs-core';
import {setTestEnvs} from '@tensorflow/tfjs-core/dist/jasmine_util';

import {installDropInGradients, uninstallDropInGradients} from '../../kernels/index';
import {skipReason} from './skips';

declare const TFJS_SUITE_BASELINE: boolean;  // defined by karma.conf.js

/** Test environments for `backend` (with these tfjs flags), the skips and the reporter. */
export function setUpTfjsConvTests(backend: 'webgl' | 'webgpu', flags: Record<string, boolean | number>) {
  const DROP_IN_ENV = `${backend}-drop-in`;
  const BASELINE_ENV = `${backend}-baseline`;
  setTestEnvs([
    {name: DROP_IN_ENV, backendName: backend, flags, isDataSync: true},
    ...(TFJS_SUITE_BASELINE ? [{name: BASELINE_ENV, backendName: backend, flags, isDataSync: true}] : []),
  ]);
  jasmine.DEFAULT_TIMEOUT_INTERVAL = 20000;  // what tfjs's jasmine_util sets
  // tfjs's harness only warns when a backend fails to start, and the spec then runs on another:
  // every spec also checks the backend it ran on.
  afterEach(() => expect(getBackend()).withContext('the backend the spec ran on').toBe(backend));

  const withDropIn = (fullName: string) => fullName.includes(` ${DROP_IN_ENV} `);

  const env = jasmine.getEnv();
  const skipped = new Map<string, string>();
  env.configure({
    specFilter: spec => {
      const name = spec.getFullName();
      const reason = skipReason(name, backend, withDropIn(name));
      if (reason !== undefined) skipped.set(name, reason);
      return reason === undefined;
    },
  });

  const counts = {
    [DROP_IN_ENV]: {run: 0, passed: 0, failed: 0},
    [BASELINE_ENV]: {run: 0, passed: 0, failed: 0},
  };
  env.addReporter({
    specStarted(spec) {
      if (withDropIn(spec.fullName)) installDropInGradients();
      else uninstallDropInGradients();
    },
    specDone(spec) {
      if (spec.status === 'excluded') return;
      const c = counts[withDropIn(spec.fullName) ? DROP_IN_ENV : BASELINE_ENV];
      c.run++;
      if (spec.status === 'passed') c.passed++;
      else c.failed++;
    },
    jasmineDone() {
      uninstallDropInGradients();
      const lines = [...skipped].map(([name, reason]) => `  skipped: ${name}: ${reason}`);
      for (const [name, c] of Object.entries(counts).filter(([name]) => name === DROP_IN_ENV || TFJS_SUITE_BASELINE)) {
        const skips = [...skipped.keys()].filter(n => n.includes(` ${name} `)).length;
        lines.push(`tfjs's convolution tests on ${name}: ${c.run} run, ${c.passed} passed, ${c.failed} failed, ${skips} skipped by name`);
      }
      console.log(lines.join('\n'));
    },
  });
}

import {describeResult, runProblems, runTfjsSuite, TfjsSuiteResult} from './tfjs_suite/run';

/**
 * tfjs's own convolution tests — tfjs-core's compiled conv1d, conv2d, conv2d_separable,
 * conv2d_transpose, conv3d, conv3d_transpose, depthwise_conv2d, fused conv2d and fused depthwise
 * test files — against the drop-in gradients (the built package's `/gradients` entry), on cpu
 * and wasm, each run in its own process (test/tfjs_suite/run.ts). Every spec must pass but those
 * skipped by name in test/tfjs_suite/skips.ts, whose reasons are printed; nothing may fail outside
 * a spec (a beforeAll, an afterAll, the top level), and the run must exit 0 with jasmine's status
 * 'passed'. The same files run
 * without this package give the baseline, reported beside them. Needs `npm run build` (dist/).
 */
const BACKENDS = ['cpu', 'wasm'] as const;

describe('tfjs\'s own convolution tests in Node', () => {
  const results = new Map<string, TfjsSuiteResult>();
  const key = (backend: string, dropIn: boolean) => `${backend}/${dropIn}`;

  beforeAll(async () => {
    const runs = await Promise.all(BACKENDS.flatMap(backend => [true, false].map(dropIn => runTfjsSuite(backend, dropIn))));
    const lines: string[] = [];
    for (const r of runs) {
      results.set(key(r.backend, r.dropIn), r);
      lines.push(describeResult(r));
      if (r.dropIn) for (const s of r.skipped) lines.push(`  skipped: ${s.name}: ${s.reason}`);
    }
    console.log(`\n${lines.join('\n')}`);
  }, 600000);

  for (const backend of BACKENDS) {
    it(`on ${backend}: every spec passes with the drop-in gradients, but those skipped by name; nothing fails outside a spec`, () => {
      const r = results.get(key(backend, true))!;
      expect(r.failed.map(f => `${f.name}: ${f.message}`)).toEqual([]);
      expect(runProblems(r)).toEqual([]);
      expect(r.overallStatus).toBe('passed');
      expect(r.exitCode).toBe(0);
      expect(r.run).toBeGreaterThan(150);
    });

    it(`on ${backend}: the baseline (tfjs alone) runs the same specs and passes no more`, () => {
      const withDropIn = results.get(key(backend, true))!;
      const baseline = results.get(key(backend, false))!;
      expect(runProblems(baseline)).withContext('the baseline ran whole').toEqual([]);
      // The drop-in also skips the spec asserting what it lifts on purpose (which tfjs alone passes).
      const liftedOnPurpose = withDropIn.skipped.length - baseline.skipped.length;
      expect(liftedOnPurpose).toBe(1);
      expect(baseline.run + baseline.skipped.length).toBe(withDropIn.run + withDropIn.skipped.length);
      expect(baseline.passed).toBeLessThanOrEqual(withDropIn.passed + liftedOnPurpose);
    });
  }
});

/**
 * Measures the error of the webgl kernel on a float16-only device against the float64 reference,
 * the figures test/helpers/float16_tolerance.ts is set from: `npx karma start
 * test/browser_measure/karma.conf.js` (not part of the suite). Problems: the case table, split
 * depthwise reductions of L = 900 to 3,600, and fuzz problems 0–299 of seeds 8 and 9 (float16's
 * special values). Per element, with u = 2^-11 and L the reduction length (accumulationLength):
 * |actual − expected| / (u·√L), and the part past 4u·|expected| likewise; the largest of each per
 * group of problems, with the problem it came from, and whether every problem is within
 * float16Tolerance.
 */
import * as tf from '@tensorflow/tfjs-core';

import {convolutionBackpropFilters, convTransposeBackpropFilters} from '../../kernels/index';
import {CASES} from '../cases';
import {generateProblem, problemData} from '../fuzz/problems';
import {problemSeed} from '../fuzz/random';
import {accumulationLength, FLOAT16_UNIT_ROUNDOFF as U, float16Tolerance} from '../helpers/float16_tolerance';
import {seededValues} from '../helpers/util';
import {packing, useWebglBackend} from '../helpers/webgl_flags';
import {CallAttrs, Dense, referenceForCall} from '../reference';

const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1);

interface Worst {
  value: number;
  problem: string;
  length: number;
}

interface Group {
  problems: number;
  lengths: [number, number];
  /** max |actual − expected| / (u·√L) */
  total: Worst;
  /** max (|actual − expected| − 4u·|expected|) / (u·√L) */
  pastRelative: Worst;
  largestAbsolute: Worst;
  outsideTolerance: string[];
}

const groups = new Map<string, Group>();

function measure(group: string, problem: string, transposed: boolean, input: Dense, outputDelta: Dense, attrs: CallAttrs) {
  const expected = referenceForCall(transposed, input, outputDelta, attrs).values;
  const x = tf.tidy(() => tf.mul(tf.tensor(input.values as Float32Array, input.shape), 1));
  const dy = tf.tidy(() => tf.mul(tf.tensor(outputDelta.values as Float32Array, outputDelta.shape), 1));
  const result = (transposed ? convTransposeBackpropFilters : convolutionBackpropFilters)(x, dy, attrs as never);
  const actual = result.dataSync();
  tf.dispose([x, dy, result]);
  const length = accumulationLength(transposed, input.shape, outputDelta.shape, attrs.dataFormat);
  const g = groups.get(group) ?? {
    problems: 0, lengths: [Infinity, 0], total: {value: 0, problem: '', length: 0},
    pastRelative: {value: 0, problem: '', length: 0}, largestAbsolute: {value: 0, problem: '', length: 0}, outsideTolerance: [],
  };
  groups.set(group, g);
  g.problems++;
  g.lengths = [Math.min(g.lengths[0], length), Math.max(g.lengths[1], length)];
  const {atol, rtol} = float16Tolerance(length);
  let outside = false;
  for (let i = 0; i < expected.length; i++) {
    if (!Number.isFinite(expected[i])) continue;  // NaN / ±Infinity positions: exact, as the fuzz compares them
    const error = Math.abs(actual[i] - expected[i]);
    const scaled = error / (U * Math.sqrt(length));
    const past = Math.max(0, error - 4 * U * Math.abs(expected[i])) / (U * Math.sqrt(length));
    if (!(scaled <= g.total.value)) g.total = {value: scaled, problem, length};
    if (!(past <= g.pastRelative.value)) g.pastRelative = {value: past, problem, length};
    if (!(error <= g.largestAbsolute.value)) g.largestAbsolute = {value: error, problem, length};
    if (!(error <= atol + rtol * Math.abs(expected[i]))) outside = true;
  }
  if (outside) g.outsideTolerance.push(problem);
}

describe('float16 device: error of the webgl kernel against the float64 reference', () => {
  useWebglBackend('webgl-float16-measure', {
    WEBGL_VERSION: 2, ...packing(false), WEBGL_RENDER_FLOAT32_ENABLED: false, WEBGL_FORCE_F16_TEXTURES: true,
  });

  it('on the case table', () => {
    for (const c of CASES) {
      const input = {shape: c.inputShape, values: seededValues(size(c.inputShape), c.seed)};
      const outputDelta = {shape: c.outputDeltaShape, values: seededValues(size(c.outputDeltaShape), c.seed + 1000)};
      measure('case table', c.id, c.op === 'ConvTransposeBackpropFilters', input, outputDelta,
              {...c.attrs, filterShape: c.filterShapeInput ?? (c.attrs as {filterShape?: number[]}).filterShape} as CallAttrs);
    }
    expect(groups.get('case table')!.problems).toBe(CASES.length);
  });

  it('on split depthwise reductions', () => {
    for (const [seed, batch] of [[5, 1], [15, 1], [25, 2], [35, 4]]) {
      const shape = [batch, 30, 30, 4];
      measure('split depthwise', `batch ${batch}, seed ${seed}`, false, {shape, values: seededValues(size(shape), seed)},
              {shape, values: seededValues(size(shape), seed + 1)},
              {strides: [1, 1], autoPad: 'same_upper', groups: 4, filterShape: [3, 3]});
    }
    expect(groups.get('split depthwise')!.problems).toBe(4);
  });

  for (const seed of [8, 9]) {
    it(`on fuzz problems 0–299 of seed ${seed}`, () => {
      for (let i = 0; i < 300; i++) {
        const p = generateProblem(problemSeed(seed, i), {specials: 'any', specialValues: [NaN, 0]});
        if (p.inputShape[0] === 0 || p.filterShape.some(s => s === 0)) continue;
        const data = problemData(p);
        measure(`fuzz seed ${seed}`, `problem ${i}`, p.spec.transposed, {shape: p.inputShape, values: data.input},
                {shape: p.outputDeltaShape, values: data.outputDelta},
                {...p.attrs, filterFormat: p.referenceAttrs.filterFormat, filterShape: p.referenceAttrs.kernel} as CallAttrs);
      }
      expect(groups.get(`fuzz seed ${seed}`)!.problems).toBeGreaterThan(0);
    });
  }

  afterAll(() => {
    const show = (w: Worst, digits = 2) => `${w.value.toFixed(digits)} (${w.problem}, L = ${w.length})`;
    for (const [name, g] of groups) {
      console.log(`${name}: ${g.problems} problems, L ${g.lengths[0]}–${g.lengths[1]}; max |a − e|/(u√L) ${show(g.total)}; ` +
                  `max (|a − e| − 4u|e|)/(u√L) ${show(g.pastRelative)}; largest |a − e| ${show(g.largestAbsolute, 4)}; ` +
                  `outside float16Tolerance: ${g.outsideTolerance.length === 0 ? 'none' : g.outsideTolerance.join(', ')}`);
    }
  });
});

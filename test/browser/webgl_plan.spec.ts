/**
 * The webgl kernel runs the plan planWebgl makes for the inputs as they are, and the verbose
 * line prints that plan's summary: for inputs packed by an earlier op (odd block rows read in
 * place), freshly uploaded ones, and with the multi-target flag off.
 */
import * as tf from '@tensorflow/tfjs-core';
import type {MathBackendWebGL} from '@tensorflow/tfjs-backend-webgl';

import {computeGeometry, CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET, convolutionBackpropFilters, FilterGradientGeometry} from '../../kernels/index';
import {webglDevice} from '../../kernels/webgl/plan/device';
import {describeInputs} from '../../kernels/webgl/plan/inputs';
import {planWebgl, WebglPlan} from '../../kernels/webgl/plan/planner';
import {CONV_BACKPROP_FILTERS_VERBOSE} from '../../src/verbose';
import {packing, useWebglBackend} from '../helpers/webgl_flags';

const ATTRS = {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]};

/** The plan for x and dy now, and the verbose line of the call that follows. */
function planAndLine(x: tf.Tensor, dy: tf.Tensor): {plan: WebglPlan; line: string} {
  const geometry: FilterGradientGeometry = computeGeometry('ConvolutionBackpropFilters', {input: x, outputDelta: dy}, ATTRS);
  const backend = tf.backend() as MathBackendWebGL;
  const plan = planWebgl(geometry, webglDevice(backend), describeInputs(backend, geometry, {input: x, outputDelta: dy}));
  const lines: string[] = [];
  const log = spyOn(console, 'log').and.callFake((line: string) => lines.push(line));
  tf.dispose(convolutionBackpropFilters(x, dy, ATTRS));
  log.and.callThrough();
  expect(lines.length).toBe(1);
  return {plan, line: lines[0] ?? ''};
}

describe('webgl plan, as the kernel runs it:', () => {
  useWebglBackend('webgl-plan', {WEBGL_VERSION: 2, ...packing(true)});
  let multiTarget: boolean;
  beforeAll(() => {
    multiTarget = tf.env().getBool(CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET);
    tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, true);
  });
  afterAll(() => {
    tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, false);
    tf.env().set(CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET, multiTarget);
  });

  /**
   * Runs the kernel on x and dy of these shapes (made by relu, packed, when `byOp`; else fresh
   * uploads) with the multi-target flag as given, and checks that the verbose line prints the
   * summary of the plan planWebgl makes for them; returns that plan.
   */
  function planOfCall(multiTargetFlag: boolean, byOp: boolean, xShape: number[], dyShape: number[], seed: number): WebglPlan {
    tf.env().set(CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET, multiTargetFlag);
    const make = (shape: number[], offset: number) =>
        tf.tidy(() => byOp ? tf.relu(tf.randomNormal(shape, 0, 1, 'float32', seed + offset)) :
                             tf.randomNormal(shape, 0, 1, 'float32', seed + offset));
    const [x, dy] = [make(xShape, 0), make(dyShape, 1)];
    try {
      const {plan, line} = planAndLine(x, dy);
      expect(line.split(',')[4]).toBe(plan.summary);
      return plan;
    } finally {
      tf.dispose([x, dy]);
    }
  }

  it('reads inputs packed by an earlier op in place (odd block rows) and prints the pass it runs', () => {
    // 13 × 13 images: packed for their own shape, blocks of 13 positions.
    const plan = planOfCall(true, true, [2, 13, 13, 16], [2, 13, 13, 32], 1);
    expect(plan.path === 'multiTarget' && plan.views.src.kind).toBe('paddedBlocks');
    expect(plan.summary).toMatch(/^dense rows splits=\d+$/);
  });

  it('plans fresh uploads as the packed views the passes make of them', () => {
    const plan = planOfCall(true, false, [2, 13, 13, 16], [2, 13, 13, 32], 3);
    expect(plan.path === 'multiTarget' && plan.views.src.kind).toBe('rows');
  });

  it('runs the single-target programs with the multi-target flag off', () => {
    expect(planOfCall(false, true, [2, 8, 8, 4], [2, 8, 8, 6], 5).path).toBe('singleTarget');
  });
});

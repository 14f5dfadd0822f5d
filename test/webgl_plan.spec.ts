import * as fs from 'node:fs';
import * as path from 'node:path';

import {computeGeometry, FilterGradientGeometry} from '../src/geometry';
import {DEFAULT_WEBGL_PROFILE, WebglDevice, WebglProfile} from '../kernels/webgl/plan/device';
import {oddBlockRows, WebglInputs} from '../kernels/webgl/plan/inputs';
import {MULTI_TARGET_PASSES, planWebgl, WEBGL_PROGRAM_NAMES} from '../kernels/webgl/plan/planner';
import type {TextProblem} from './shader_texts/problems';

/** SwiftShader's WebGL 2 as tfjs sees it in the browser specs: 8 draw buffers, textures up to 8192. */
function swiftShader(profile: WebglProfile = DEFAULT_WEBGL_PROFILE, overrides: Partial<WebglDevice> = {}): WebglDevice {
  return {webglVersion: 2, multiTarget: true, maxDrawBuffers: 8, maxTextureSize: 8192, profile, ...overrides};
}

/** Inputs as a model passes them: packed by the ops before, for their own shapes. */
function packedByOps(geometry: FilterGradientGeometry): WebglInputs {
  const input = (shape: readonly number[]) => ({onGpu: true, packed: true, oddBlockRows: oddBlockRows(shape, shape)});
  return {src: input(geometry.src.shape), diffDst: input(geometry.diffDst.shape)};
}

const {problems} = JSON.parse(fs.readFileSync(path.join(__dirname, 'shader_texts', 'digest.json'), 'utf8')) as
    {problems: TextProblem[]};

function geometryOf(problem: TextProblem): FilterGradientGeometry {
  return computeGeometry(problem.op, {input: {shape: problem.inputShape, dtype: 'float32'},
                                      outputDelta: {shape: problem.outputDeltaShape, dtype: 'float32'}}, problem.attrs);
}

function trainingLayer(name: string): FilterGradientGeometry {
  const problem = problems.find(candidate => candidate.id === `shapes_tfjs_training/${name}`);
  if (problem === undefined) throw new Error(`no layer ${name} in test/shader_texts/digest.json`);
  return geometryOf(problem);
}

describe('webgl plan', () => {
  it('names the pass each shapes_tfjs_training layer takes on SwiftShader', () => {
    const expected: Record<string, string> = {
      'tfjs-mnist:conv1': 'one-channel rows', 'tfjs-mnist:conv2': 'dense rows', 'tfjs-mnist3x3:conv2': 'dense rows',
      'tfjs-cifar:conv1': 'dense rows', 'tfjs-cifar:conv4': 'dense rows', 'tfjs-speech:conv1': 'one-channel loops',
      'tfjs-mobilenet025:conv1': 'dense rows', 'tfjs-mobilenet025:conv2_1/dw': 'depthwise rows',
      'tfjs-mobilenet025:conv2_1/sep': 'dense loops', 'tfjs-mobilenet025:conv2_2/dw': 'depthwise rows',
      'tfjs-mobilenet025:conv6/sep': 'dense loops', 'resnet_50:conv1 mb1': 'dense rows',
    };
    for (const [name, pass] of Object.entries(expected)) {
      const plan = planWebgl(trainingLayer(name), swiftShader(), packedByOps(trainingLayer(name)));
      expect(plan.path === 'multiTarget' ? plan.pass : plan.path).withContext(name).toBe(pass);
    }
  });

  it('reads odd block rows in place, and takes the loops where the rows cannot be read in order', () => {
    const geometry = trainingLayer('tfjs-mnist3x3:conv2');  // 13 × 13 → 11 × 11: odd rows
    const inPlace = planWebgl(geometry, swiftShader(), packedByOps(geometry));
    expect(inPlace.path === 'multiTarget' && inPlace.views.src).toEqual({kind: 'paddedBlocks', packed: true, columns: 16, blockRows: 13});
    const fresh = {onGpu: true, packed: true, oddBlockRows: 0};
    const repacked = planWebgl(geometry, swiftShader(), {src: fresh, diffDst: fresh});
    expect(repacked.path === 'multiTarget' && repacked.pass).toBe('dense loops');
    expect(repacked.path === 'multiTarget' && repacked.views.src.kind).toBe('rows');
  });

  it('is a frozen value with a summary the verbose line prints', () => {
    const geometry = trainingLayer('tfjs-mobilenet025:conv2_1/dw');
    const plan = planWebgl(geometry, swiftShader(), packedByOps(geometry));
    expect(Object.isFrozen(plan)).toBe(true);
    expect(plan.path === 'multiTarget' && Object.isFrozen(plan.params)).toBe(true);
    expect(plan.summary).toBe('depthwise rows splits=128');
    expect(JSON.parse(JSON.stringify(plan))).toEqual(plan as unknown as Record<string, unknown>);
  });

  it('takes the single-target programs on WebGL 1, with the multi-target flag off, and where no pass takes the problem', () => {
    const dense = trainingLayer('tfjs-cifar:conv2');
    expect(planWebgl(dense, swiftShader(DEFAULT_WEBGL_PROFILE, {webglVersion: 1, multiTarget: false}), packedByOps(dense)).summary)
        .toBe('single target packedTiles splits=8');
    expect(planWebgl(dense, swiftShader(DEFAULT_WEBGL_PROFILE, {multiTarget: false}), packedByOps(dense)).path).toBe('singleTarget');
    const ncx = geometryOf(problems.find(problem => problem.id === 'cases/conv2d_pads/NCX/XIO/input-full')!);
    const plan = planWebgl(ncx, swiftShader(), packedByOps(ncx));
    expect(plan.path === 'singleTarget' && plan.reduction.mode).toBe('channelTiles');
  });

  it('reads its thresholds from the device profile', () => {
    const geometry = trainingLayer('tfjs-cifar:conv2');
    const noDenseRows = {...DEFAULT_WEBGL_PROFILE, denseRows: {...DEFAULT_WEBGL_PROFILE.denseRows, maxWidth: 0}};
    const plan = planWebgl(geometry, swiftShader(noDenseRows), packedByOps(geometry));
    expect(plan.path === 'multiTarget' && plan.pass).toBe('dense loops');
    const fewerFragments = {...DEFAULT_WEBGL_PROFILE, split: {...DEFAULT_WEBGL_PROFILE.split, targetFragments: 256}};
    const sep = trainingLayer('tfjs-mobilenet025:conv2_1/sep');
    expect(planWebgl(sep, swiftShader(fewerFragments), packedByOps(sep)).summary).toBe('dense loops splits=64');
  });

  it('has one pass per family and form, and names every program of them', () => {
    const matrix = MULTI_TARGET_PASSES.map(pass => `${pass.family}/${pass.form}`).sort();
    expect(matrix).toEqual(['dense/loops', 'dense/writtenRows', 'depthwise/loops', 'depthwise/writtenRows',
                            'oneSrcChannel/loops', 'oneSrcChannel/writtenRows']);
    expect(WEBGL_PROGRAM_NAMES).toContain('OneChannelRowsProgram');
    expect(new Set(WEBGL_PROGRAM_NAMES).size).toBe(12);
  });

  it('plans zeros for a batch of 0', () => {
    const geometry = computeGeometry('ConvolutionBackpropFilters', {input: {shape: [0, 4, 4, 2], dtype: 'float32'},
                                                                  outputDelta: {shape: [0, 4, 4, 2], dtype: 'float32'}},
                                     {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]});
    expect(planWebgl(geometry, swiftShader(), packedByOps(geometry)).path).toBe('zeros');
  });
});

import * as tf from '@tensorflow/tfjs-core';
import * as fs from 'node:fs';
import * as path from 'node:path';

import {OpName} from '../src/names';
import {NODE_BACKENDS} from './backends';
import {runCaseEverywhere} from './helpers/run_case';

interface GoldenCase {
  id: string;
  op: OpName;
  attrs: Record<string, unknown>;
  input: {shape: number[]; values: number[]};
  outputDelta: {shape: number[]; values: number[]};
  expected: {shape: number[]; values: number[]};
}

/** Expected values from PyTorch autograd (test/golden/generate.py); CI only reads the JSON. */
const golden = JSON.parse(fs.readFileSync(path.join(__dirname, 'golden', 'golden.json'), 'utf8')) as
    {torch: string; cases: GoldenCase[]};

describe(`PyTorch ${golden.torch} golden file:`, () => {
  it('has cases for both ops in 1-D, 2-D and 3-D', () => {
    const kinds = new Set(golden.cases.map(c => `${c.op}/${c.input.shape.length}`));
    expect(kinds.size).toBe(6);
  });
});

for (const backend of NODE_BACKENDS) {
  describe(`PyTorch ${golden.torch} golden cases on ${backend.name}:`, () => {
    beforeAll(async () => {
      expect(await tf.setBackend(backend.name)).toBe(true);
    });
    // Specs that pick no backend run on cpu, so put it back.
    afterAll(async () => {
      await tf.setBackend('cpu');
    });
    for (const c of golden.cases) {
      it(c.id, () => {
        runCaseEverywhere({
          ...c,
          input: {shape: c.input.shape, values: Float32Array.from(c.input.values)},
          outputDelta: {shape: c.outputDelta.shape, values: Float32Array.from(c.outputDelta.values)},
        }, backend.tolerance);
      });
    }
  });
}

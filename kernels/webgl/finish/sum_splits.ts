import type {GPGPUProgram} from '@tensorflow/tfjs-backend-webgl';

import {customUniforms, customUniformValues} from '../glsl/builder';

/**
 * Pass 2 after the scalar pass 1: adds the splits, [filterSize, splits] → [filterSize].
 * Cache key: the shapes; the text bakes in the split count on WebGL 1 only.
 */
export class SumSplitsProgram implements GPGPUProgram {
  readonly variableNames = ['partial'];
  readonly outputShape: number[];
  readonly userCode: string;
  readonly customUniforms = customUniforms([['splits', 'int', []]]);
  /** WebGL 2: one program for every split count (the partial sums' shape is a uniform). */
  readonly enableShapeUniforms: boolean;

  constructor(filterSize: number, readonly splits: number, webgl2: boolean) {
    this.enableShapeUniforms = webgl2;
    this.outputShape = [filterSize];
    this.userCode = `
      void main() {
        int element = getOutputCoords();
        float sum = 0.0;
        for (int s = 0; s < ${webgl2 ? 'splits' : splits}; s++) {
          sum += getPartial(element, s);
        }
        setOutput(sum);
      }
    `;
  }

  uniforms(): number[][] {
    return customUniformValues([['splits', 'int', [this.splits]]]);
  }
}

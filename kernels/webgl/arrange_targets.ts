import type {GPGPUProgram} from '@tensorflow/tfjs-backend-webgl';

import {FilterGradientGeometry, spatialAxesAs3d} from '../../src/geometry';
import {decodeFilterIndex, filterAxesInLayoutOrder} from './filter_gradient_program';

/**
 * Pass 2 after a multi-target pass 1 (wide tiles or wide taps): adds the splits of each filter
 * element from the target that holds it and writes the element where the requested layout
 * puts it, [filterSize]. The targets are read as the packed textures they are (tfjs would
 * otherwise unpack each first): a read is a texel, the element one of its lanes.
 *
 * `locate` is GLSL that, given the element's canonical indices (diffDstChannel, srcChannel,
 * ivec3 k) and the uniforms `int tiling[]` and `ivec3 kernelSize`, sets `int target`, the
 * element-coordinates `row` and `col` of its texel in split 0, `lane`, and `ivec2 splitStep` (the
 * element rows and columns from one split's texel to the next's).
 *
 * Cache key: the locating text (it bakes in the tile shape or taps per fragment), the number of
 * targets and the order of the filter axes; with shape uniforms, no shapes.
 */
export class ArrangeTargetsProgram implements GPGPUProgram {
  readonly variableNames: string[];
  readonly outputShape: number[];
  readonly userCode: string;
  readonly enableShapeUniforms = true;
  readonly packedInputs = true;
  readonly customUniforms: Array<{name: string; type: 'int' | 'ivec3'; arrayIndex?: number}>;
  private readonly uniformValues: number[][];

  constructor(geometry: FilterGradientGeometry, targetCount: number, tiling: number[], splits: number, locate: string) {
    this.variableNames = Array.from({length: targetCount}, (_, t) => `target${t}`);
    this.outputShape = [geometry.filterSize];
    const [d, h, w] = spatialAxesAs3d(geometry.axes);
    const filterAxes = filterAxesInLayoutOrder(geometry);
    this.customUniforms = [
      {name: 'filterAxisStrides', type: 'int', arrayIndex: filterAxes.length},
      {name: 'kernelSize', type: 'ivec3'},
      {name: 'tiling', type: 'int', arrayIndex: tiling.length},
      {name: 'splits', type: 'int', arrayIndex: 1},
    ];
    this.uniformValues = [filterAxes.map(axis => axis.stride), [d.kernelSize, h.kernelSize, w.kernelSize], tiling, [splits]];
    const reads = this.variableNames.map((name, t) => `${t > 0 ? ' else ' : ''}if (target == ${t}) {
          for (int s = 0; s < splits[0]; s++) sum += get${name[0].toUpperCase()}${name.slice(1)}(row + s * splitStep.x, col + s * splitStep.y)[lane];
        }`).join('');
    this.userCode = `
      void main() {
        int rest = getOutputCoords();
        ivec3 k = ivec3(0, 0, 0);${decodeFilterIndex(filterAxes)}${locate}
        float sum = 0.0;
        ${reads}
        setOutput(sum);
      }
    `;
  }

  uniforms(): number[][] {
    return this.uniformValues;
  }
}

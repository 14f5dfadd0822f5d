import type {GPGPUProgram} from '@tensorflow/tfjs-backend-webgl';

import {FilterGradientGeometry, spatialAxesAs3d} from '../../../src/geometry';
import {customUniforms, customUniformValues, Uniform} from '../glsl/builder';
import {decodeFilterIndex, filterAxesInLayoutOrder} from '../glsl/geometry';
import type {ReductionPlan} from '../plan/splits';

/**
 * Pass 2 after a packed pass 1 ('channelTiles' or 'kernelTaps'): adds the splits and writes
 * each filter element where the requested layout puts it, [filterSize].
 * Cache key: the mode, the order of the filter axes and the shapes; on WebGL 1 also the split count.
 */
export class ArrangeTilesProgram implements GPGPUProgram {
  readonly variableNames = ['partial'];
  readonly outputShape: number[];
  readonly userCode: string;
  readonly customUniforms: ReturnType<typeof customUniforms>;
  private readonly uniformValues: number[][];

  /** WebGL 2: one program for every split count (the partial sums' shape is a uniform). */
  readonly enableShapeUniforms: boolean;

  constructor(geometry: FilterGradientGeometry, plan: ReductionPlan, webgl2: boolean) {
    this.enableShapeUniforms = webgl2;
    const [d, h, w] = spatialAxesAs3d(geometry.axes);
    const filterAxes = filterAxesInLayoutOrder(geometry);
    const kernelVolume = d.kernelSize * h.kernelSize * w.kernelSize;
    const srcPerGroup = geometry.src.channelsPerGroup;
    const diffDstPerGroup = geometry.diffDst.channelsPerGroup;
    const tapQuads = Math.ceil(w.kernelSize / 4);
    const quadsPerPair = d.kernelSize * h.kernelSize * tapQuads;
    // Texels per split, and where filter element (channels, k) sits in split 0.
    const channelTiles = plan.mode === 'channelTiles' || plan.mode === 'packedTiles';
    const perSplit = channelTiles ? geometry.groups * kernelVolume :
                                                    geometry.groups * srcPerGroup * diffDstPerGroup * quadsPerPair;
    const locate = channelTiles ? `
        int group = diffDstChannel / ${diffDstPerGroup};
        int tile = group * ${kernelVolume} + (k.x * kernelSize.y + k.y) * kernelSize.z + k.z;
        int row = srcChannel;
        int col = diffDstChannel - group * ${diffDstPerGroup};` : `
        int pair = diffDstChannel * ${srcPerGroup} + srcChannel;
        int quad = k.z / 4;
        int lane = k.z - 4 * quad;
        int tile = pair * ${quadsPerPair} + (k.x * kernelSize.y + k.y) * ${tapQuads} + quad;
        int row = lane / 2;
        int col = lane - 2 * row;`;
    const uniforms: Uniform[] = [
      ['filterAxisStrides', 'int[]', filterAxes.map(axis => axis.stride)],
      ['kernelSize', 'ivec3', [d.kernelSize, h.kernelSize, w.kernelSize]],
      ['splits', 'int[]', [plan.splits]],
    ];
    this.customUniforms = customUniforms(uniforms);
    this.uniformValues = customUniformValues(uniforms);
    this.outputShape = [geometry.filterSize];
    this.userCode = `
      void main() {
        int rest = getOutputCoords();
        ivec3 k = ivec3(0, 0, 0);${decodeFilterIndex(filterAxes)}${locate}
        float sum = 0.0;
        for (int s = 0; s < ${webgl2 ? 'splits[0]' : plan.splits}; s++) {
          sum += getPartial(s * ${perSplit} + tile, row, col);
        }
        setOutput(sum);
      }
    `;
  }

  uniforms(): number[][] {
    return this.uniformValues;
  }
}

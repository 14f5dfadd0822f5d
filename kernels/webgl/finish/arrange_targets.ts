import type {GPGPUProgram} from '@tensorflow/tfjs-backend-webgl';

import {FilterGradientGeometry, spatialAxesAs3d} from '../../../src/geometry';
import {decodeFilterIndex, filterAxesInLayoutOrder} from '../glsl/geometry';
import {customUniforms, customUniformValues, Uniform} from '../glsl/builder';

/**
 * Where a multi-target pass 1 keeps each filter element: `locate` is GLSL that, given the
 * element's canonical indices (int diffDstChannel, int srcChannel, ivec3 k) and the uniforms
 * `int tiling[]` (the pass's `tiling` values) and `ivec3 kernelSize`, sets `int target`, the
 * element coordinates `row` and `col` of its texel (even: texel (col / 2, row / 2)) in split 0,
 * and `lane`.
 */
export interface TargetLocation {
  readonly targetCount: number;
  readonly tiling: readonly number[];
  readonly locate: string;
}

/**
 * GLSL reading the texel at `texel` of the target `target` into `vec4 chosen`: every target's
 * texel is read and one kept by a select, not a chain of `if (target == t)` (SwiftShader runs
 * the body of every branch of such a chain for a group of fragments anyway).
 */
function readChosenTarget(targetCount: number): string {
  const names = [...Array(targetCount).keys()].map(t => `target${t}`);
  return `${names.map(name => `
        vec4 ${name}Texel = texelFetch(${name}, texel, 0);`).join('')}
        vec4 chosen = ${names.slice(0, -1).map((name, t) => `target == ${t} ? ${name}Texel : `).join('')}${
      names[names.length - 1]}Texel;`;
}

/**
 * What both arrangements share: the targets as packed inputs target0, target1, … and the
 * uniforms their locating text reads (kernelSize, tiling) beside each arrangement's own.
 */
abstract class TargetArrangement implements GPGPUProgram {
  readonly variableNames: string[];
  abstract readonly outputShape: number[];
  abstract readonly userCode: string;
  readonly enableShapeUniforms = true;
  readonly packedInputs = true;
  readonly customUniforms: ReturnType<typeof customUniforms>;
  private readonly uniformValues: number[][];

  protected constructor(geometry: FilterGradientGeometry, location: TargetLocation,
                        extra: readonly Uniform[]) {
    this.variableNames = Array.from({length: location.targetCount}, (_, t) => `target${t}`);
    const [d, h, w] = spatialAxesAs3d(geometry.axes);
    const uniforms: Uniform[] = [
      ['kernelSize', 'ivec3', [d.kernelSize, h.kernelSize, w.kernelSize]],
      ['tiling', 'int[]', location.tiling],
      ...extra,
    ];
    this.customUniforms = customUniforms(uniforms);
    this.uniformValues = customUniformValues(uniforms);
  }

  uniforms(): number[][] {
    return this.uniformValues;
  }
}

/**
 * Pass 2 after a multi-target pass 1 (after SumTargetSplitsProgram when pass 1 split the
 * reduction: the targets hold one split): writes each filter element, from the target lane
 * that holds it, where the requested layout puts it, [filterSize] unpacked. The targets are
 * read as the packed textures they are (tfjs would otherwise unpack each first).
 *
 * Cache key: the locating text (it bakes in the tile shape or taps per fragment), the number of
 * targets and the order of the filter axes; with shape uniforms, no shapes.
 */
export class ArrangeTargetsProgram extends TargetArrangement {
  readonly outputShape: number[];
  readonly userCode: string;

  constructor(geometry: FilterGradientGeometry, location: TargetLocation) {
    const filterAxes = filterAxesInLayoutOrder(geometry);
    super(geometry, location,
          [['filterAxisStrides', 'int[]', filterAxes.map(axis => axis.stride)]]);
    this.outputShape = [geometry.filterSize];
    this.userCode = `
      void main() {
        int rest = getOutputCoords();
        ivec3 k = ivec3(0, 0, 0);${decodeFilterIndex(filterAxes)}${location.locate}
        ivec2 texel = ivec2(col, row) / 2;${readChosenTarget(location.targetCount)}
        setOutput(chosen[lane]);
      }
    `;
  }
}

/**
 * Whether ArrangeChannelTexelsProgram can write this filter: a 1-D or 2-D problem whose filter
 * layout has the channels innermost ([k…, C/G, O] or [k…, O, C/G]), each axis the size its
 * shape says.
 */
export function channelsInnermost(geometry: FilterGradientGeometry): boolean {
  const axes = filterAxesInLayoutOrder(geometry);
  const inner = axes.slice(-2).map(axis => axis.role).sort().join();
  return geometry.spatialRank <= 2 && inner === 'diffDstChannel,srcChannel' &&
      axes.every((axis, i) => axis.size === geometry.filterShape[i]);
}

/**
 * Pass 2 after dense loops or dense rows (after SumTargetSplitsProgram when pass 1 split the
 * reduction) for filters whose layout has the channels innermost (channelsInnermost): the
 * result is packed, and a texel of it — two src channels × two diffDst channels of one kernel
 * offset ([k…, C/G, O]), or the same transposed ([k…, O, C/G]) — is one texel of a target,
 * whose lanes hold (s0·d0, s0·d1, s1·d0, s1·d1). A fragment locates one texel, where
 * ArrangeTargetsProgram locates each element (on SwiftShader its integer divisions cost more
 * than the read). Lanes past the last channel of an odd count are written as 0.
 *
 * Cache key: the locating text, the number of targets, the order of the filter axes and the
 * filter's rank; with shape uniforms, no shapes.
 */
export class ArrangeChannelTexelsProgram extends TargetArrangement {
  readonly outputShape: number[];
  readonly userCode: string;
  readonly packedOutput = true;

  constructor(geometry: FilterGradientGeometry, location: TargetLocation) {
    super(geometry, location, [
      ['channels', 'int[]', [geometry.src.channelsPerGroup, geometry.groups * geometry.diffDst.channelsPerGroup]],
    ]);
    this.outputShape = [...geometry.filterShape];
    const filterAxes = filterAxesInLayoutOrder(geometry);
    const diffDstInner = filterAxes[filterAxes.length - 1].role === 'diffDstChannel';
    // getOutputCoords gives the texel's first element: its two innermost coordinates are even.
    this.userCode = `
      void main() {
        ivec${filterAxes.length} coords = getOutputCoords();
        ivec3 k = ivec3(0, 0, 0);${filterAxes.map((axis, i) => `
        ${axis.role.startsWith('k.') ? axis.role : `int ${axis.role}`} = coords[${i}];`).join('')}${location.locate}
        ivec2 texel = ivec2(col, row) / 2;${readChosenTarget(location.targetCount)}
        // Selected, not multiplied by 0: 0 · Infinity is NaN.
        bool secondInner = ${diffDstInner ? 'diffDstChannel + 1 < channels[1]' : 'srcChannel + 1 < channels[0]'};
        bool secondOuter = ${diffDstInner ? 'srcChannel + 1 < channels[0]' : 'diffDstChannel + 1 < channels[1]'};
        bvec4 outside = bvec4(false, !secondInner, !secondOuter, !(secondInner && secondOuter));
        setOutput(mix(${diffDstInner ? 'chosen' : 'chosen.xzyw'}, vec4(0.0), outside));
      }
    `;
  }
}

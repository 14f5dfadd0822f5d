import type {MultiTargetProgram} from './multi_target';

/**
 * Where a multi-target pass 1 puts its splits: split s of every target is the block of texels
 * [s · rowStep, …) × [s · columnStep, …) of the targets' texture (one of the steps is 0), the
 * size of split 0's block.
 */
export interface TargetSplits {
  readonly splits: number;
  /** Texel rows and columns from one split's block to the next's. */
  readonly rowStep: number;
  readonly columnStep: number;
}

/** The texels of one split's block of targets of rows × columns texels. */
export function splitBlockShape(rows: number, columns: number, {splits, rowStep, columnStep}: TargetSplits): [number, number] {
  return [rows - (splits - 1) * rowStep, columns - (splits - 1) * columnStep];
}

/**
 * Between a multi-target pass 1 and its arrangement (arrange_targets.ts), when pass 1 split
 * the reduction: adds each target's splits texel by texel into a target of one split's size,
 * every target of a fragment at once (targets × splits texel reads a fragment, each used).
 *
 * The arrangement then reads one split. It keeps one target's texel for each element it writes
 * but reads every target's (a chain of `if (target == t)` costs the same on SwiftShader, which
 * runs every branch for a group of fragments): adding the splits there would cost targets ×
 * splits reads an element, and here each read is used once.
 *
 * Cache key: the shader text, which bakes in only the number of targets; the splits and the
 * steps are uniforms.
 */
export function sumTargetSplitsProgram(targetCount: number, {splits, rowStep, columnStep}: TargetSplits): MultiTargetProgram {
  const targets = [...Array(targetCount).keys()];
  const source = `#version 300 es
      precision highp float;
      precision highp int;
      precision highp sampler2D;
      ${targets.map(t => `uniform sampler2D target${t};`).join('\n      ')}
      uniform int splits;
      uniform ivec2 splitStep;
      ${targets.map(t => `layout(location = ${t}) out vec4 sum${t};`).join('\n      ')}
      void main() {
        ivec2 texel = ivec2(gl_FragCoord.xy);
        ${targets.map(t => `sum${t} = vec4(0.0);`).join('\n        ')}
        for (int s = 0; s < splits; s++) {${targets.map(t => `
          sum${t} += texelFetch(target${t}, texel, 0);`).join('')}
          texel += splitStep;
        }
      }
`;
  return {
    name: 'SumTargetSplitsProgram',
    source,
    inputNames: targets.map(t => `target${t}`),
    uniforms: [{name: 'splits', type: 'int', values: [splits]}, {name: 'splitStep', type: 'ivec2', values: [columnStep, rowStep]}],
  };
}

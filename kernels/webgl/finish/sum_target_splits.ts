import {declareUniforms, lines, Uniform, uniformValues} from '../glsl/builder';
import type {MultiTargetProgram} from '../multi_target';

/**
 * Where a multi-target pass 1 puts its splits: each split's texels are one block of blockRows ×
 * blockColumns texels (laid out inside as the pass says), the blocks a grid of gridColumns
 * blocks a row, split s at block row ⌊s / gridColumns⌋ and block column s mod gridColumns.
 * Split 0's block is at the targets' origin; cells of the grid's last row past the last split
 * are written (zeros) but never read.
 */
export interface TargetSplits {
  readonly splits: number;
  readonly blockRows: number;
  readonly blockColumns: number;
  readonly gridColumns: number;
}

/**
 * The grid of `splits` blocks of blockRows × blockColumns texels (see TargetSplits): blocks
 * stacked down the rows, two a row where a block's columns are odd, more where the rows would
 * pass maxTextureSize; null when even that does not fit.
 *
 * Why tall: SwiftShader shades fragments in 2 × 2 quads (a quad reaching past the targets' edge
 * runs its lanes for nothing: hence an even width) and splits a draw between its threads by
 * rows of quads, every 16th to one task. A pass's block is often 4–12 texels tall; targets of
 * blocks side by side leave 2–6 rows of quads, as many tasks, which two cores run unevenly
 * (three tasks: one core idle a third of the time).
 */
export function planSplitGrid(blockRows: number, blockColumns: number, splits: number, maxTextureSize: number):
    TargetSplits | null {
  const maxGridRows = Math.floor(maxTextureSize / blockRows);
  if (maxGridRows < 1) return null;
  let gridColumns = Math.max(Math.ceil(splits / maxGridRows), blockColumns % 2 === 1 && splits > 1 ? 2 : 1);
  if (blockColumns % 2 === 1 && gridColumns % 2 === 1 && gridColumns < splits) gridColumns++;
  if (gridColumns * blockColumns > maxTextureSize) return null;
  return {splits, blockRows, blockColumns, gridColumns};
}

/** The targets' texels, [rows, columns], of a grid of splits. */
export function splitGridShape({splits, blockRows, blockColumns, gridColumns}: TargetSplits): [number, number] {
  return [Math.ceil(splits / gridColumns) * blockRows, gridColumns * blockColumns];
}

/** The uniform SPLIT_OF_FRAGMENT reads: (block columns, block rows, grid columns). */
export function splitGridUniform({blockRows, blockColumns, gridColumns}: TargetSplits): Uniform {
  return ['splitGrid', 'ivec3', [blockColumns, blockRows, gridColumns]];
}

/**
 * GLSL (first in a pass's main, with splitGridUniform declared) setting `int split`, the
 * fragment's split, and `ivec2 fragment`, its texel in that split's block.
 */
export const SPLIT_OF_FRAGMENT = `ivec2 gridCell = ivec2(gl_FragCoord.xy) / splitGrid.xy;
        int split = gridCell.y * splitGrid.z + gridCell.x;
        ivec2 fragment = ivec2(gl_FragCoord.xy) - gridCell * splitGrid.xy;`;

/** sumTargetSplitsProgram's name (tf.profile, the bench's program counts). */
export const SUM_TARGET_SPLITS_PROGRAM = 'SumTargetSplitsProgram';

/**
 * Between a multi-target pass 1 and its arrangement (arrange_targets.ts), when pass 1 split
 * the reduction: adds each target's splits texel by texel into a target of one split's block,
 * every target of a fragment at once (targets × splits texel reads a fragment, each used).
 *
 * The arrangement then reads one split. It keeps one target's texel for each element it writes
 * but reads every target's (a chain of `if (target == t)` costs the same on SwiftShader, which
 * runs every branch for a group of fragments): adding the splits there would cost targets ×
 * splits reads an element, and here each read is used once.
 *
 * Cache key: the shader text, which bakes in only the number of targets; the splits and the
 * grid are uniforms.
 */
export function sumTargetSplitsProgram(targetCount: number, targetSplits: TargetSplits): MultiTargetProgram {
  const targets = [...Array(targetCount).keys()];
  const uniforms: Uniform[] = [['splits', 'int', [targetSplits.splits]], splitGridUniform(targetSplits)];
  const source = `#version 300 es
      precision highp float;
      precision highp int;
      precision highp sampler2D;
      ${lines(targets.map(t => `uniform sampler2D target${t};`), 6)}
      ${declareUniforms(uniforms)}
      ${lines(targets.map(t => `layout(location = ${t}) out vec4 sum${t};`), 6)}
      void main() {
        ivec2 texel = ivec2(gl_FragCoord.xy);
        ${lines(targets.map(t => `sum${t} = vec4(0.0);`), 8)}
        for (int s = 0; s < splits; texel.y += splitGrid.y) {
          ivec2 block = texel;
          for (int column = 0; column < splitGrid.z && s < splits; column++) {${targets.map(t => `
            sum${t} += texelFetch(target${t}, block, 0);`).join('')}
            block.x += splitGrid.x;
            s++;
          }
        }
      }
`;
  return {
    name: SUM_TARGET_SPLITS_PROGRAM,
    source,
    inputNames: targets.map(t => `target${t}`),
    uniforms: uniformValues(uniforms),
  };
}

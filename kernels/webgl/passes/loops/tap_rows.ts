import {FilterGradientGeometry, SpatialAxis, spatialAxesAs3d} from '../../../../src/geometry';
import {geometryUniforms, INSIDE_FUNCTIONS, position, splitRowsLoop} from '../../glsl/geometry';
import {declareUniforms, lines, Uniform} from '../../glsl/builder';
import {InputFolding, inputFolding, PackedTexture} from '../../glsl/packed_reads';
import type {ReductionPlan} from '../../plan/splits';
import {splitGridUniform, TargetSplits} from '../../finish/sum_target_splits';

/**
 * GLSL shared by the programs that sum a block of neighbouring taps along the innermost kernel
 * axis over one split of the diffDst rows (depthwise_taps.ts: depthwise; one_channel_taps.ts: one src
 * channel), reading packed 2-D views through cursors (see cursorFunctions in glsl/packed_reads.ts).
 * Both bake in the tap block, the stride and the dilation along the row; the rest comes from
 * geometryUniforms, `sizes` = (rows per split, rows, tap blocks, kernel rows) and splitGrid
 * (see SPLIT_OF_FRAGMENT in finish/sum_target_splits.ts).
 */
export interface TapRows {
  /** The stride along the innermost axis. */
  readonly stride: number;
  /** src texels a step spans (read before the first step, then `stride` a step). */
  readonly stepTexels: number;
  /** GLSL expressions: the fragment's src channel and first diffDst channel. */
  readonly srcChannel: string;
  readonly diffDstChannel: string;
  /** GLSL setting up the diffDst cursors at view row `diffDstRow + pw`, column `diffDstCol` on. */
  readonly diffDstCursors: string;
  /** GLSL of one step over positions (pw, pw + 1): tested at the ends of a row, or not. */
  step(tested: boolean): string;
  /** Every row's steps are whole and untested (see wholeRowSteps): tapRowsLoop runs the untested loop alone. */
  readonly wholeRows?: boolean;
}

/**
 * From `kernelRow` and `tapBlock`, for blocks of `taps` taps at `stride` and `dilation` along the
 * row: the kernel offset `k` of the block's first tap, its shift,
 * the diffDst range whose taps stay inside src along the outer axes (`first`, `end`) and, along
 * the row, the steps (pw, pw + 1) whose positions are inside diffDst and whose real taps (the
 * block may overhang the kernel: those lanes are never stored) are all inside src
 * (`middleFirst`, `middleEnd`).
 */
export function tapBlockSetup(taps: number, stride: number, dilation: number): string {
  return `
        ivec3 k = ivec3(kernelRow / kernelSize.y, 0, ${taps} * tapBlock);
        k.y = kernelRow - k.x * kernelSize.y;
        ivec3 shift = k * dilation - padBegin;
        ivec2 first = ivec2(firstInside(shift.x, stride.x), firstInside(shift.y, stride.y));
        ivec2 end = ivec2(endInside(shift.x, stride.x, srcSize.x, diffDstSize.x),
                          endInside(shift.y, stride.y, srcSize.y, diffDstSize.y));
        int lastTap = min(${taps}, kernelSize.z - k.z) - 1;
        int middleFirst = firstInside(shift.z, ${stride});
        int middleEnd = endInside(shift.z + lastTap * ${dilation} + ${stride}, ${stride}, srcSize.z, diffDstSize.z - 1);`;
}

/**
 * GLSL at the start of a row (pd, ph) of batch n: the position p of its first step, the src
 * position of its first tap, and both tensors' view row and column there.
 */
function rowStart(rows: TapRows): string {
  return `          ivec3 p = ivec3(pd, ph, 0);
          ivec3 tap = p * stride + shift;
          tap.z = 0;
          int srcRow = ${position('src', 'Row', 'n', rows.srcChannel, 'tap')} + shift.z;
          int srcCol = ${position('src', 'Col', 'n', rows.srcChannel, 'tap')};
          int diffDstRow = ${position('diffDst', 'Row', 'n', rows.diffDstChannel, 'p')};
          int diffDstCol = ${position('diffDst', 'Col', 'n', rows.diffDstChannel, 'p')};`;
}

/** GLSL reading the src texels a step spans, t0…, from the cursor srcAt on (declaring them when `declare`). */
function readStepTexels(rows: TapRows, declare: boolean): string {
  return lines(Array.from({length: rows.stepTexels}, (_, m) => `${declare ? 'vec4 ' : ''}t${m} = readSrcAt(srcAt);
          srcAt = srcNextRow(srcAt);`), 10);
}

/**
 * The loop over the split's diffDst rows: for each row inside, the cursors at its first step
 * and the src texels the step spans, then the steps — tested up to `middleFirst`, untested up to
 * `middleEnd`, tested to the row's end.
 */
export function tapRowsLoop(rows: TapRows): string {
  const {stride} = rows;
  return `
${splitRowsLoop('sizes.x', 'sizes.x', 'sizes.y')}
${rowStart(rows)}
          // Steps start at texel boundaries of diffDst: at position -1 when the row starts at a
          // texel's second half. The src half each value comes from is the same all along.
          int pw = isOdd(diffDstRow) ? -1 : 0;
          bool odd = isOdd(srcRow + pw * ${stride});
          int texelRow = srcRow + pw * ${stride} - (odd ? 1 : 0);
          // Cursors at the texels read next (a step moves diffDst one texel row, src one per
          // unit of stride), stepped with an add and a compare where a folded texture's index
          // would take a division per read.${rows.diffDstCursors}
          ivec2 srcAt = srcTexelOf(texelRow, srcCol);
          ${readStepTexels(rows, true)}
${rows.wholeRows ? `          for (; pw < diffDstSize.z; pw += 2) {${rows.step(false)}
          }` : `          int testedEnd = min(middleFirst, diffDstSize.z);
          for (; pw < testedEnd; pw += 2) {${rows.step(true)}
          }
          for (; pw < middleEnd; pw += 2) {${rows.step(false)}
          }
          for (; pw < diffDstSize.z; pw += 2) {${rows.step(true)}
          }`}
        }`;
}

/**
 * tapRowsLoop for problems whose rows run in segments (see planSegments): the split's rows run
 * in segments, each the split's rows of one (n, pd) plane whose kernel row stays inside src,
 * and a segment is one run of steps — the cursors set up once a segment, not once a row. Inside
 * a segment diffDst's rows follow one another (rows of even length: a step never spans two);
 * src's rows are a fixed number of texel rows apart. Where a row's steps end where the next
 * row's begin (`SegmentRows.continuous`), the src texels carried from a row's last step are the
 * next row's first ones; elsewhere the src cursor moves from row start to row start and the
 * step's texels are read anew at each row's start, without the row's position arithmetic.
 * Each step is tested, or not, by its position along the row (`pw`, counted and wrapped at the
 * row's end), as tapRowsLoop's three loops test them.
 *
 * On SwiftShader a short row's set-up (position arithmetic, parities, the src texels before
 * the first step, three loops) costs more than its steps: the depthwise layers of 4–16
 * positions a row spend most of a call there.
 */
export function tapSegmentsLoop(rows: TapRows, continuous: boolean): string {
  return `${continuous ? '' : `
        // From one src row start to the next: stride × the src row stride, an even number of view rows.
        ivec2 srcRowPitch = srcRowsStep(stride.y * srcRowStrides[3] / 2);`}
        int rowBegin = split * sizes.x;
        int rowEnd = min(rowBegin + sizes.x, sizes.y);
        for (int row = rowBegin; row < rowEnd;) {
          int outer = row / diffDstSize.y;
          int ph = row - outer * diffDstSize.y;
          int n = outer / diffDstSize.x;
          int pd = outer - n * diffDstSize.x;
          // The split's rows of this plane, [ph, phEnd), then those whose taps stay inside src.
          int phEnd = min(diffDstSize.y, ph + rowEnd - row);
          row += phEnd - ph;
          ph = max(ph, first.y);
          phEnd = min(phEnd, end.y);
          if (pd < first.x || pd >= end.x || ph >= phEnd) continue;
${rowStart(rows)}
          // Rows of even length start at texel boundaries of diffDst; the src half each value
          // comes from is the same all along the segment.
          int pw = 0;
          bool odd = isOdd(srcRow);
          int texelRow = srcRow - (odd ? 1 : 0);${rows.diffDstCursors}
          ivec2 srcAt = srcTexelOf(texelRow, srcCol);${continuous ? '' : `
          ivec2 srcRowAt = srcAt;`}
          ${readStepTexels(rows, true)}
          int steps = (phEnd - ph) * (diffDstSize.z / 2);
          for (int s = 0; s < steps; s++) {
            if (pw < middleFirst || pw >= middleEnd) {${rows.step(true).replace(/\n/g, '\n  ')}
            } else {${rows.step(false).replace(/\n/g, '\n  ')}
            }
            pw += 2;
            if (pw == diffDstSize.z) {
              pw = 0;${continuous ? '' : `
              srcRowAt = srcAdvance(srcRowAt, srcRowPitch);
              srcAt = srcRowAt;
              ${readStepTexels(rows, false).replace(/\n/g, '\n    ')}`}
            }
          }
        }`;
}

/**
 * Whether the rows of a channels-last problem can run in segments (tapSegmentsLoop), and if so
 * whether they are `continuous` — a row's src steps end where the next row's begin (stride ×
 * the src row's length along the outer axis = stride × the row's length along it, e.g. stride 1
 * with src and diffDst of one width): null unless diffDst's rows of even length follow one
 * another (no padded blocks) and src's row starts are an even number of view rows apart (the
 * src half each value comes from stays the same over a segment).
 */
export function planSegments(geometry: FilterGradientGeometry, paddedBlocks: boolean): {continuous: boolean} | null {
  const [, h, w] = spatialAxesAs3d(geometry.axes);
  const srcColumns = geometry.src.shape[geometry.src.shape.length - 1];
  const diffDstColumns = geometry.diffDst.shape[geometry.diffDst.shape.length - 1];
  const srcRowPitch = h.stride * h.srcStride / srcColumns;
  if (geometry.dataFormat !== 'NXC' || paddedBlocks || w.diffDstSize % 2 !== 0 || w.diffDstStride !== diffDstColumns ||
      h.diffDstStride !== w.diffDstSize * diffDstColumns || w.srcStride !== srcColumns || srcRowPitch % 2 !== 0) {
    return null;
  }
  return {continuous: srcRowPitch === w.stride * w.diffDstSize};
}

/**
 * Whether every diffDst row of a channels-last problem is whole steps (texels of two positions)
 * whose taps all lie inside src: an even number of positions, diffDst's rows not in padded blocks,
 * no pad before the row and the last position's last tap inside src. Then the programs leave out
 * the code for a row's tested ends (tapRowsLoop's tested loops; dense loops' half-texel steps at
 * a row's start and end), which would run no step but still cost one: SwiftShader runs the body
 * of every `if` and the first iteration of every loop for the lanes it has masked off, reads
 * included.
 */
export function wholeRowSteps(geometry: FilterGradientGeometry, diffDst: Pick<PackedTexture, 'blockRows'>): boolean {
  const w = spatialAxesAs3d(geometry.axes)[2];
  return diffDst.blockRows === 0 && w.diffDstSize % 2 === 0 && w.padBegin === 0 &&
      (w.diffDstSize - 1) * w.stride + (w.kernelSize - 1) * w.dilation <= w.srcSize - 1;
}

/** The integer uniforms of a tap-rows program: kernel size, geometryUniforms and `sizes`. */
export function tapRowsUniforms(
    geometry: FilterGradientGeometry, textures: {src: PackedTexture; diffDst: PackedTexture},
    blocks: {plan: Pick<ReductionPlan, 'rows' | 'rowsPerSplit'>; tapBlocks: number; kernelRows: number; targetSplits: TargetSplits}): Uniform[] {
  const [d, h, w] = spatialAxesAs3d(geometry.axes);
  const each = (f: (axis: SpatialAxis) => number) => [f(d), f(h), f(w)];
  return [
    ['kernelSize', 'ivec3', each(axis => axis.kernelSize)],
    ...geometryUniforms(geometry, {src: textures.src.blockRows, diffDst: textures.diffDst.blockRows}),
    ['sizes', 'ivec4', [blocks.plan.rowsPerSplit, blocks.plan.rows, blocks.tapBlocks, blocks.kernelRows]],
    splitGridUniform(blocks.targetSplits),
  ];
}

/**
 * The src values of a step: tap t reads the positions `offsets(t)` = t·dilation (the step's
 * first position) and t·dilation + stride (its second), relative to tap 0's first; `values` is
 * GLSL declaring `x{p}` (of `type`) for every position p some tap reads, taken from the step's
 * texels t0, t1, … (texel m starts `odd` positions before tap 0's) by `lanes(p)`, the lanes of
 * position p there.
 */
export function stepValues(taps: number, stride: number, dilation: number, type: 'float' | 'vec2', lanes: (p: number) => string):
    {offsets: (tap: number) => number[]; values: string} {
  const offsets = (t: number) => [t * dilation, t * dilation + stride];
  const used = new Set(Array.from({length: taps}, (_, t) => offsets(t)).flat());
  const values = [...used].sort((a, b) => a - b).map(p => `
            ${type} x${p} = odd ? ${lanes(p + 1)} : ${lanes(p)};`).join('');
  return {offsets, values};
}

/**
 * GLSL ending a step: a step moves 2 · stride positions, `stride` texels, so the texels past
 * the first `stride` are the next step's first ones — each step reads `stride` src texels (after
 * skipping the rows a stride past the span leaves out), all along the row.
 */
export function stepAdvance(stride: number, stepTexels: number): string {
  const skipped = Math.max(0, stride - stepTexels);
  return `${Array.from({length: skipped}, () => `
            srcAt = srcNextRow(srcAt);`).join('')}
            ${lines(Array.from({length: stepTexels}, (_, m) => m + stride < stepTexels ? `t${m} = t${m + stride};` : `t${m} = readSrcAt(srcAt);
            srcAt = srcNextRow(srcAt);`), 12)}`;
}

/** GLSL functions the tap-rows programs call: firstInside, endInside and insideRow (a src position along the row). */
export const TAP_ROWS_FUNCTIONS = `${INSIDE_FUNCTIONS}
      bool insideRow(int w) {
        return w >= 0 && w < srcSize.z;
      }
`;

/** What the texts of the passes built on these loops (depthwise loops, one-channel loops) are made from besides their own fields. */
export interface TapRowsText {
  readonly taps: number;
  /** The stride and the dilation along the innermost axis. */
  readonly stride: number;
  readonly dilation: number;
  readonly stepTexels: number;
  /** wholeRowSteps. */
  readonly wholeRows: boolean;
  readonly inputs: InputFolding;
  /** The integer uniforms' declarations. */
  readonly intUniforms: string;
}

/** A looping tap pass's TapRowsText, from its plan's taps and step, the inputs' textures and its integer uniforms. */
export function tapRowsText(geometry: FilterGradientGeometry, blocks: {readonly taps: number; readonly stepTexels: number},
                            textures: {readonly src: PackedTexture; readonly diffDst: PackedTexture}, uniforms: readonly Uniform[]):
    TapRowsText {
  const w = spatialAxesAs3d(geometry.axes)[2];
  return {taps: blocks.taps, stride: w.stride, dilation: w.dilation, stepTexels: blocks.stepTexels,
          wholeRows: wholeRowSteps(geometry, textures.diffDst), inputs: inputFolding(textures), intUniforms: declareUniforms(uniforms)};
}

import type {GPGPUProgram} from '@tensorflow/tfjs-backend-webgl';

import {FilterGradientGeometry, SpatialAxis, spatialAxesAs3d} from '../../../src/geometry';
import {customUniforms, customUniformValues, lines, Uniform} from '../glsl/builder';
import {decodeFilterIndex, filterAxesInLayoutOrder, geometryUniforms, INSIDE_FUNCTIONS, position, splitRowsLoop} from '../glsl/geometry';
import type {ReductionPlan} from '../plan/splits';

/**
 * Pass 1 of the webgl filter gradient: partial sums of the canonical reduction over splits of
 * batch × diffDst positions (see ReductionPlan). Inputs are 2-D views of src and diffDst (see
 * tensorUniforms), read through strides, so every data and filter layout runs the same code.
 *
 * A fragment sums (plan.mode):
 *   - 'packedTiles' (channels-last data, both groups' channel counts ≥ 2, groups starting at
 *     even channels): a 2×2 tile of (src channel, diffDst channel) like 'channelTiles', but
 *     read from packed 2-D views [positions, channels], where a texel holds two channels of
 *     two neighbouring positions: 3 reads per 8 multiply-adds, two positions a step;
 *   - 'channelTiles' (both groups' channel counts ≥ 2): a 2×2 tile of (src channel, diffDst
 *     channel), one packed texel of the output [splits·groups·K, SC, DC]: 4 reads per 4
 *     multiply-adds instead of 8, each value read serving twice;
 *   - 'kernelTaps' (depthwise and other thin groups, kernel width ≥ 2): 4 neighbouring taps
 *     along the innermost kernel axis for one channel pair, one packed texel of the output
 *     [splits·pairs·Kd·Kh·⌈Kw/4⌉, 2, 2]. When the stride is a multiple m of the dilation
 *     along that axis, the src values of one position are, shifted by m taps, those of the
 *     next: only m of the 4 are read anew (one read for stride 1);
 *   - 'single': one filter element, output [filterSize, splits] in the requested layout.
 *
 * Cache key (tfjs keys a compiled program on this text, plus the input and output shapes
 * unless the program runs with shape uniforms):
 *   - the text bakes in the mode, the number of channel pairs or group × kernel offsets per
 *     split, for 'single' the order of the filter axes, for 'kernelTaps' the shift m, whether
 *     the inputs are read directly, and on WebGL 1, whose loops need constant bounds,
 *     rowsPerSplit and the row length; sizes, strides, pads, dilations, channel counts and the
 *     split are uniforms;
 *   - with direct reads (WebGL 2, textures holding their views row-major: the usual case, see
 *     readFunctions) the program runs with shape uniforms, so the key holds no shapes and one
 *     program serves every batch size; otherwise it reads through tfjs's samplers with the
 *     shapes baked in (their shape-uniform versions divide by a uniform on every read), and a
 *     new tensor shape compiles a new program.
 */
export class FilterGradientProgram implements GPGPUProgram {
  readonly variableNames = ['src', 'diffDst'];
  readonly outputShape: number[];
  readonly userCode: string;
  readonly packedOutput: boolean;
  readonly packedInputs: boolean;
  readonly enableShapeUniforms: boolean;
  readonly customUniforms: ReturnType<typeof customUniforms>;
  private readonly uniformValues: number[][];

  /** `directReads`: WebGL 2, and both inputs' textures hold their 2-D views row-major (see readFunctions). */
  constructor(geometry: FilterGradientGeometry, plan: ReductionPlan, webgl2: boolean, directReads = false) {
    const {mode} = plan;
    const [d, h, w] = spatialAxesAs3d(geometry.axes);
    const each = (f: (axis: SpatialAxis) => number) => [f(d), f(h), f(w)];
    const srcPerGroup = geometry.src.channelsPerGroup;
    const diffDstPerGroup = geometry.diffDst.channelsPerGroup;
    const kernelVolume = d.kernelSize * h.kernelSize * w.kernelSize;
    const pairs = geometry.groups * srcPerGroup * diffDstPerGroup;
    const tapQuads = Math.ceil(w.kernelSize / 4);
    const quadsPerPair = d.kernelSize * h.kernelSize * tapQuads;
    const filterAxes = filterAxesInLayoutOrder(geometry);
    const uniforms: Uniform[] = [
      mode === 'single' ? ['filterAxisStrides', 'int[]', filterAxes.map(axis => axis.stride)] :
                          ['kernelSize', 'ivec3', each(axis => axis.kernelSize)],
      ...geometryUniforms(geometry),
      ['sizes', 'ivec4', [srcPerGroup, diffDstPerGroup, plan.rowsPerSplit, plan.rows]],
    ];
    this.packedInputs = mode === 'packedTiles';
    this.enableShapeUniforms = directReads;
    this.customUniforms = customUniforms(uniforms);
    this.uniformValues = customUniformValues(uniforms);
    this.packedOutput = mode !== 'single';
    this.outputShape = mode === 'channelTiles' || mode === 'packedTiles' ?
        [plan.splits * geometry.groups * kernelVolume, srcPerGroup, diffDstPerGroup] :
        mode === 'kernelTaps' ? [plan.splits * pairs * quadsPerPair, 2, 2] : [geometry.filterSize, plan.splits];

    // Which outputs this fragment sums, and over which split. A tile: (split, group, kernel
    // offset) along the output's first axis, the tile's first src and diffDst channels along
    // the other two.
    const tileCoords = `
        ivec3 coords = getOutputCoords();
        int groupKernels = ${geometry.groups * kernelVolume};
        int split = coords.x / groupKernels;
        int kernelIndex = coords.x - split * groupKernels;
        int group = kernelIndex / ${kernelVolume};
        kernelIndex -= group * ${kernelVolume};
        ivec3 k = ivec3(kernelIndex / (kernelSize.y * kernelSize.z), 0, 0);
        kernelIndex -= k.x * kernelSize.y * kernelSize.z;
        k.y = kernelIndex / kernelSize.z;
        k.z = kernelIndex - k.y * kernelSize.z;
        int srcChannelAll = group * sizes.x + coords.y;
        int diffDstChannel = group * sizes.y + coords.z;`;
    const work = {
      channelTiles: `${tileCoords}
        // A ragged last tile repeats the last channel; tfjs drops what falls outside the shape.
        int srcNext = coords.y + 1 < sizes.x ? 1 : 0;
        int diffDstNext = coords.z + 1 < sizes.y ? 1 : 0;`,
      // Even channels: one texel holds the tile's two channels of two positions. A ragged last
      // tile reads the texel's zero padding into lanes tfjs drops.
      packedTiles: tileCoords,
      kernelTaps: `
        ivec3 coords = getOutputCoords();
        int split = coords.x / ${pairs * quadsPerPair};
        int quadIndex = coords.x - split * ${pairs * quadsPerPair};
        int pair = quadIndex / ${quadsPerPair};
        quadIndex -= pair * ${quadsPerPair};
        ivec3 k = ivec3(quadIndex / (kernelSize.y * ${tapQuads}), 0, 0);
        quadIndex -= k.x * kernelSize.y * ${tapQuads};
        k.y = quadIndex / ${tapQuads};
        k.z = 4 * (quadIndex - k.y * ${tapQuads});
        // pair = diffDstChannel · SC + src channel in the group.
        int diffDstChannel = pair / sizes.x;
        int srcChannelAll = (diffDstChannel / sizes.y) * sizes.x + pair - diffDstChannel * sizes.x;`,
      single: `
        ivec2 coords = getOutputCoords();
        int split = coords[1];
        int rest = coords[0];
        ivec3 k = ivec3(0, 0, 0);${decodeFilterIndex(filterAxes)}
        int srcChannelAll = (diffDstChannel / sizes.y) * sizes.x + srcChannel;`,
    }[mode];
    // The innermost axis: a 'kernelTaps' fragment runs over the positions any of its 4 taps
    // reads inside src (the last real tap bounds the start, the first the end).
    const innermostRange = mode === 'kernelTaps' ? `
        int lastTapShift = (k.z + 3 < kernelSize.z ? k.z + 3 : kernelSize.z - 1) * dilation.z - padBegin.z;
        first.z = firstInside(lastTapShift, stride.z);` : '';
    const rowSetup = {
      channelTiles: `
          int srcRow = ${position('src', 'Row', 'n', 'srcChannelAll', 'tap')};
          int srcCol = ${position('src', 'Col', 'n', 'srcChannelAll', 'tap')};`,
      packedTiles: `
          int srcRow = ${position('src', 'Row', 'n', 'srcChannelAll', 'tap')};
          int srcCol = ${position('src', 'Col', 'n', 'srcChannelAll', 'tap')};`,
      single: `
          int srcRow = ${position('src', 'Row', 'n', 'srcChannelAll', 'tap')};
          int srcCol = ${position('src', 'Col', 'n', 'srcChannelAll', 'tap')};`,
      kernelTaps: `
          tap.z = 0;
          int srcRow = ${position('src', 'Row', 'n', 'srcChannelAll', 'tap')};
          int srcCol = ${position('src', 'Col', 'n', 'srcChannelAll', 'tap')};
          int w = first.z * stride.z + shift.z;
          ${lines([0, 1, 2, 3].map(t => `float x${t} = srcAt(srcRow, srcCol, w + ${t} * dilation.z);`), 10)}`,
    }[mode];
    const accumulate = {
      packedTiles: '',
      channelTiles: `
            float x0 = readSrc(srcRow, srcCol);
            float x1 = readSrc(srcRow + srcNextRow, srcCol + srcNextCol);
            float y0 = readDiffDst(diffDstRow, diffDstCol);
            float y1 = readDiffDst(diffDstRow + diffDstNextRow, diffDstCol + diffDstNextCol);
            sum += vec4(x0 * y0, x0 * y1, x1 * y0, x1 * y1);
            srcRow += srcRowStep;
            srcCol += srcColStep;`,
      single: `
            sum += readSrc(srcRow, srcCol) * readDiffDst(diffDstRow, diffDstCol);
            srcRow += srcRowStep;
            srcCol += srcColStep;`,
      kernelTaps: '',
    }[mode];
    const rowsPerSplit = webgl2 ? 'sizes.z' : String(plan.rowsPerSplit);
    const innerLoop = webgl2 ?
        `for (int pw = first.z; pw < end.z; pw++) {` :
        `for (int j = 0; j < ${plan.rowLength}; j++) {
            if (first.z + j >= end.z) break;`;
    this.userCode = `${readFunctions(this.packedInputs, directReads)}
${INSIDE_FUNCTIONS}${mode === 'kernelTaps' ? `
      bool tapInside(int w) {
        return w >= 0 && w < srcSize.z;
      }
      // src at innermost position w of the row starting at (row, col), which must be inside src.
      float srcInside(int row, int col, int w) {
        return readSrc(row + w * srcRowStrides[4], col + w * srcColStrides[4]);
      }
      // The same anywhere: 0 in the padding.
      float srcAt(int row, int col, int w) {
        return tapInside(w) ? srcInside(row, col, w) : 0.0;
      }` : ''}

      void main() {${directReads ? READ_SETUP : ''}${work}
        ivec3 shift = k * dilation - padBegin;
        ivec3 first = ivec3(firstInside(shift.x, stride.x), firstInside(shift.y, stride.y),
                            firstInside(shift.z, stride.z));
        ivec3 end = ivec3(endInside(shift.x, stride.x, srcSize.x, diffDstSize.x),
                          endInside(shift.y, stride.y, srcSize.y, diffDstSize.y),
                          endInside(shift.z, stride.z, srcSize.z, diffDstSize.z));${innermostRange}
        int srcRowStep = stride.z * srcRowStrides[4];
        int srcColStep = stride.z * srcColStrides[4];
        int diffDstRowStep = diffDstRowStrides[4];
        int diffDstColStep = diffDstColStrides[4];${mode === 'channelTiles' ? `
        int srcNextRow = srcNext * srcRowStrides[1];
        int srcNextCol = srcNext * srcColStrides[1];
        int diffDstNextRow = diffDstNext * diffDstRowStrides[1];
        int diffDstNextCol = diffDstNext * diffDstColStrides[1];` : ''}

        ${mode === 'single' ? 'float sum = 0.0;' : 'vec4 sum = vec4(0.0);'}
${splitRowsLoop(rowsPerSplit, 'sizes.z', 'sizes.w')}
          ivec3 p = ivec3(pd, ph, first.z);
          ivec3 tap = p * stride + shift;${rowSetup}
          int diffDstRow = ${position('diffDst', 'Row', 'n', 'diffDstChannel', 'p')};
          int diffDstCol = ${position('diffDst', 'Col', 'n', 'diffDstChannel', 'p')};
          ${mode === 'packedTiles' ? packedRowSweep(webgl2, plan.rowLength) :
            mode === 'kernelTaps'  ? kernelTapSweep(webgl2, plan.rowLength, plan.tapShift) :
                                     `${innerLoop}${accumulate}
            diffDstRow += diffDstRowStep;
            diffDstCol += diffDstColStep;
          }`}
        }
        setOutput(sum);
      }
    `;
  }

  /** The values of `customUniforms`, in order, for runWebGLProgram. */
  uniforms(): number[][] {
    return this.uniformValues;
  }
}

/**
 * How pass 1 reads its inputs: readSrc / readDiffDst (a float, or a texel of 2 × 2 for packed
 * inputs) at (row, col) of the tensor's 2-D view.
 *
 * Without `directReads` they are tfjs's samplers, whose text bakes in the tensors' shapes, so a
 * new shape (a new batch size) compiles a new program. With it — the kernel has checked that
 * both textures hold their views row-major (see textureLayout in input_views.ts) — the program runs with
 * tfjs's shape uniforms, so one program serves every batch size, and reads the textures itself:
 * uv = ((col, row) + ½) × the reciprocal of the texture's size, one multiply-add, as tfjs's
 * fixed-shape fast path does (tfjs's own samplers would divide by uniforms on every read).
 */
function readFunctions(packed: boolean, directReads: boolean): string {
  const type = packed ? 'vec4' : 'float';
  return ['src', 'diffDst'].map(name => {
    const Name = name[0].toUpperCase() + name.slice(1);
    const uv = `(vec2(col, row) + halfCR) * ${name}TexelScale`;
    return directReads ? `
      vec2 ${name}TexelScale;
      ${type} read${Name}(int row, int col) {
        return ${packed ? `texture(${name}, ${uv})` : `sampleTexture(${name}, ${uv})`};
      }` : `
      ${type} read${Name}(int row, int col) {
        return get${Name}(row, col);
      }`;
  }).join('');
}

const READ_SETUP = ['src', 'diffDst'].map(name => `
        ${name}TexelScale = 1.0 / vec2(${name}TexShape.y, ${name}TexShape.x);`).join('');

/**
 * The positions of one row for 'packedTiles': the inputs are packed 2-D views [positions,
 * channels] (NXC), so one texel holds two channels of two neighbouring positions. Each step
 * reads the diffDst texel of two positions and the src texels of their two window taps (one
 * texel when the taps are neighbours of the same texel row pair would do, but a branch costs
 * more than the read), and adds 8 products. The half of a src texel to use alternates with
 * the parity of its view row, which stays the same along the row (the taps move 2·stride rows
 * a step), so it is found once. A texel half outside this row of positions — at most the
 * first position of the first texel and the second of the last — is left out by peeling those
 * steps, not by zeroing (0 · y is NaN when y is ±Infinity or NaN), so the loop has no tests.
 */
function packedRowSweep(webgl2: boolean, rowLength: number): string {
  const loop = webgl2 ? `for (; texelRow + 1 < rowEnd; texelRow += 2) {` :
                        `for (int j = 0; j < ${Math.ceil(rowLength / 2) + 1}; j++) {
            if (texelRow + 1 >= rowEnd) break;`;
  return `int rowEnd = diffDstRow + (end.z - first.z) * diffDstRowStep;
          int texelRow = diffDstRow - imod(diffDstRow, 2);
          int rowA = srcRow + (texelRow - diffDstRow) * srcRowStep;
          bool oddA = imod(rowA, 2) != 0;
          bool oddB = imod(rowA + srcRowStep, 2) != 0;
          if (texelRow < diffDstRow) {  // the row starts at the texel's second position
            if (diffDstRow < rowEnd) {
              vec4 b = readSrc(rowA + srcRowStep, srcCol);
              sum += (oddB ? b.zzww : b.xxyy) * readDiffDst(texelRow, diffDstCol).zwzw;
            }
            texelRow += 2;
            rowA += 2 * srcRowStep;
          }
          ${loop}
            vec4 y = readDiffDst(texelRow, diffDstCol);
            vec4 a = readSrc(rowA, srcCol);
            vec4 b = readSrc(rowA + srcRowStep, srcCol);
            sum += (oddA ? a.zzww : a.xxyy) * y.xyxy + (oddB ? b.zzww : b.xxyy) * y.zwzw;
            rowA += 2 * srcRowStep;${webgl2 ? '' : `
            texelRow += 2;`}
          }
          if (texelRow < rowEnd) {  // the row ends at the texel's first position
            vec4 a = readSrc(rowA, srcCol);
            sum += (oddA ? a.zzww : a.xxyy) * readDiffDst(texelRow, diffDstCol).xyxy;
          }`;
}

/**
 * The positions of one row for 'kernelTaps': 4 taps along the innermost axis, whose window of
 * src values moves `tapShift` taps a position, so only that many are read anew. The row runs
 * in three loops: where some tap is in the padding (start and end of the row) a tap there
 * adds nothing, not 0 · y (NaN when y is ±Infinity or NaN), so each product is tested; in
 * between, where every real tap is inside src, none is (a 4th tap past the kernel's end may
 * read anything there: its lane is never stored).
 */
function kernelTapSweep(webgl2: boolean, rowLength: number, tapShift: number): string {
  const taps = [0, 1, 2, 3];
  const step = (tested: boolean) => `
            float y = readDiffDst(diffDstRow, diffDstCol);
            sum += ${tested ? `vec4(${taps.map(t => `tapInside(w + ${t} * dilation.z) ? y * x${t} : 0.0`).join(', ')})` :
                              'y * vec4(x0, x1, x2, x3)'};
            w += stride.z;
            ${lines(taps.map(t => t + tapShift < 4 ? `x${t} = x${t + tapShift};` :
                                                  `x${t} = ${tested ? 'srcAt' : 'srcInside'}(srcRow, srcCol, w + ${t} * dilation.z);`), 12)}
            diffDstRow += diffDstRowStep;
            diffDstCol += diffDstColStep;`;
  const loop = (until: string, tested: boolean) => webgl2 ? `
          for (; pw < ${until}; pw++) {${step(tested)}
          }` : `
          for (int j = 0; j < ${rowLength}; j++) {
            if (pw >= ${until}) break;${step(tested)}
            pw++;
          }`;
  return `int pw = first.z;
          // Positions whose taps are all inside src: [allInsideFirst, allInsideEnd) within [first.z, end.z).
          int allInsideFirst = firstInside(shift.z, stride.z);
          allInsideFirst = allInsideFirst > first.z ? allInsideFirst : first.z;
          allInsideFirst = allInsideFirst < end.z ? allInsideFirst : end.z;
          int allInsideEnd = endInside(lastTapShift, stride.z, srcSize.z, diffDstSize.z);
          allInsideEnd = allInsideEnd < end.z ? allInsideEnd : end.z;
          allInsideEnd = allInsideEnd > allInsideFirst ? allInsideEnd : allInsideFirst;${
      loop('allInsideFirst', true)}${loop('allInsideEnd', false)}${loop('end.z', true)}`;
}

import type {KernelConfig, KernelFunc, NamedTensorInfoMap, TensorInfo} from '@tensorflow/tfjs-core';
import {env, getKernel} from '@tensorflow/tfjs-core';
import type {MathBackendWebGL} from '@tensorflow/tfjs-backend-webgl';

import type {FilterGradientGeometry} from '../../src/geometry';
import {geometryOfKernelCall} from '../../src/kernel_inputs';
import {kernelConfigsFor, OpName} from '../../src/names';
import {reportPath} from '../../src/verbose';
import {ArrangeTilesProgram, FilterGradientProgram, SumSplitsProgram} from './filter_gradient_program';
import {ArrangeChannelTexelsProgram, ArrangeTargetsProgram, channelsInnermost, TargetLocation} from './arrange_targets';
import {makeTargets, maxRenderTargets, MultiTargetProgram, runMultiTarget} from './multi_target';
import type {PackedTexture} from './packed_reads';
import {denseRowsProgram, denseRowsTargetLocation, planDenseRows} from './dense_rows';
import {depthwiseRowsProgram, depthwiseRowsTargetLocation, planDepthwiseRows} from './depthwise_rows';
import {planReduction} from './reduction_plan';
import {splitGridShape, sumTargetSplitsProgram, TargetSplits} from './sum_target_splits';
import {planThinRows, THIN_ROWS_SRC_COLUMNS, thinRowsProgram, thinRowsTargetLocation} from './thin_rows';
import {planThinTaps, thinTapsProgram, thinTapsTargetLocation} from './thin_taps';
import {planWideTaps, wideTapsProgram, wideTapsTargetLocation} from './wide_taps';
import {planWideTiles, wideTilesProgram, wideTilesTargetLocation} from './wide_tiles';

/**
 * The tfjs flag choosing, on WebGL 2, the multi-target passes for channels-last problems (dense:
 * dense_rows.ts, wide_tiles.ts; depthwise: depthwise_rows.ts, wide_taps.ts; one src channel:
 * thin_rows.ts, thin_taps.ts): `tf.env().set('CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET',
 * false)` runs the single-target programs there instead. Defaults to true.
 */
export const CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET = 'CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET';

let flagRegistered = false;

/** Registers the flag (idempotent; a value already set is kept). */
export function registerMultiTargetFlag() {
  if (flagRegistered) return;
  env().registerFlag(CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET, () => true);
  flagRegistered = true;
}

type Textures = {src: PackedTexture; diffDst: PackedTexture};

/** A multi-target pass 1 planned for a problem, and where it leaves each filter element. */
interface MultiTargetPass {
  /** The pass, as the verbose line names it. */
  readonly name: string;
  readonly targetSplits: TargetSplits;
  readonly location: TargetLocation;
  /** Whether a target texel holds two src × two diffDst channels of one kernel offset (ArrangeChannelTexelsProgram). */
  readonly channelTexels: boolean;
  /** The src view's columns: the src tensor's channels, or THIN_ROWS_SRC_COLUMNS for thin rows. */
  readonly srcColumns?: number;
  program(textures: Textures): MultiTargetProgram;
}

/**
 * For channels-last problems: dense rows for dense ones on narrow images and wide tiles for the
 * others, depthwise rows for depthwise ones on narrow images and wide taps for the others, thin
 * rows for those with one src channel on narrow images and thin taps for the others; null for
 * others.
 */
function planMultiTargetPass(geometry: FilterGradientGeometry, maxTargets: number, maxTextureSize: number,
                             blockRows: {src: number; diffDst: number}): MultiTargetPass | null {
  const paddedBlocks = blockRows.src > 0 || blockRows.diffDst > 0;
  const pass = (name: string, plan: {targetSplits: TargetSplits}, location: TargetLocation, channelTexels: boolean,
                program: (textures: Textures) => MultiTargetProgram): MultiTargetPass =>
      ({name, targetSplits: plan.targetSplits, location, channelTexels, program});
  const dense = planDenseRows(geometry, maxTargets, maxTextureSize, blockRows);
  if (dense !== null) {
    return pass('dense rows', dense, denseRowsTargetLocation(dense), true, textures => denseRowsProgram(geometry, dense, textures));
  }
  const tiles = planWideTiles(geometry, maxTargets, maxTextureSize, paddedBlocks);
  if (tiles !== null) {
    return pass('wide tiles', tiles, wideTilesTargetLocation(geometry, tiles), true, textures => wideTilesProgram(geometry, tiles, textures));
  }
  const rows = planDepthwiseRows(geometry, maxTargets, maxTextureSize, blockRows);
  if (rows !== null) {
    return pass('depthwise rows', rows, depthwiseRowsTargetLocation(rows), false, textures => depthwiseRowsProgram(geometry, rows, textures));
  }
  const taps = planWideTaps(geometry, maxTargets, maxTextureSize, paddedBlocks);
  if (taps !== null) {
    return pass('wide taps', taps, wideTapsTargetLocation(taps), false, textures => wideTapsProgram(geometry, taps, textures));
  }
  const thinRows = planThinRows(geometry, maxTargets, maxTextureSize, blockRows.diffDst);
  if (thinRows !== null) {
    return {...pass('thin rows', thinRows, thinRowsTargetLocation(thinRows), false, textures => thinRowsProgram(geometry, thinRows, textures)),
            srcColumns: THIN_ROWS_SRC_COLUMNS};
  }
  const thin = planThinTaps(geometry, maxTargets, maxTextureSize);
  if (thin !== null) {
    return pass('thin taps', thin, thinTapsTargetLocation(thin), false, textures => thinTapsProgram(geometry, thin, textures));
  }
  return null;
}

/**
 * The multi-target passes (WebGL 2) and their arrangement into the filter layout; null when
 * the problem has none, an input's texture cannot be read directly, or the targets would need
 * folded textures (the single-target programs then run). A packed input whose texture holds
 * blocks of an odd number of positions (W odd) is read in place through padded row strides (see
 * oddBlockRows), where matrixView would unpack and re-pack it on every call.
 */
function runMultiTargetPasses(webgl: MathBackendWebGL, geometry: FilterGradientGeometry, inputs: NamedTensorInfoMap):
    TensorInfo | null {
  const srcInput = inputs[geometry.src.name]!;
  const diffDstInput = inputs[geometry.diffDst.name]!;
  const blockRows = {src: oddBlockRows(webgl, srcInput), diffDst: oddBlockRows(webgl, diffDstInput)};
  const pass = planMultiTargetPass(geometry, maxRenderTargets(webgl), env().getNumber('WEBGL_MAX_TEXTURE_SIZE'), blockRows);
  if (pass === null) return null;
  // Targets first: when they cannot be made, no input has been converted for nothing. Where
  // pass 1 splits the reduction, SumTargetSplitsProgram adds each target's splits into a target
  // of one split's size before the arrangement reads them.
  const {targetCount} = pass.location;
  const splits = pass.targetSplits.splits;
  const targets = makeTargets(webgl, targetCount, ...splitGridShape(pass.targetSplits));
  if (targets === null) return null;
  const summed = splits > 1 ? makeTargets(webgl, targetCount, pass.targetSplits.blockRows, pass.targetSplits.blockColumns) : [];
  if (summed === null) {
    for (const target of targets) webgl.disposeIntermediateTensorInfo(target);
    return null;
  }
  const src = pass.srcColumns !== undefined ? pairedPositionsView(webgl, srcInput) :
      blockRows.src > 0 ? {view: paddedBlocksView(srcInput, blockRows.src)} : matrixView(webgl, srcInput, true);
  const diffDst = blockRows.diffDst > 0 ? {view: paddedBlocksView(diffDstInput, blockRows.diffDst)} :
                                          matrixView(webgl, diffDstInput, true);
  try {
    const srcLayout = textureLayout(webgl, src.view, true, pass.srcColumns !== undefined ? 0 : blockRows.src);
    const diffDstLayout = textureLayout(webgl, diffDst.view, true, blockRows.diffDst);
    if (srcLayout === null || diffDstLayout === null) return null;
    const texture = (view: TensorInfo, layout: 'rowMajor' | 'folded', rows: number): PackedTexture =>
        ({texShape: webgl.texData.get(view.dataId).texShape!, columns: view.shape[1], folded: layout === 'folded', blockRows: rows});
    const program = pass.program({src: texture(src.view, srcLayout, pass.srcColumns !== undefined ? 0 : blockRows.src),
                                  diffDst: texture(diffDst.view, diffDstLayout, blockRows.diffDst)});
    reportPath(geometry, `${pass.name} splits=${splits}`);
    runMultiTarget(webgl, program, [src.view, diffDst.view], targets);
    if (splits > 1) runMultiTarget(webgl, sumTargetSplitsProgram(targetCount, pass.targetSplits), targets, summed);
    const arrange = pass.channelTexels && channelsInnermost(geometry) ?
        new ArrangeChannelTexelsProgram(geometry, pass.location) : new ArrangeTargetsProgram(geometry, pass.location);
    return webgl.runWebGLProgram(arrange, splits > 1 ? summed : targets, 'float32', arrange.uniforms());
  } finally {
    for (const temporary of [...targets, ...summed, src.temporary, diffDst.temporary]) {
      if (temporary !== undefined) webgl.disposeIntermediateTensorInfo(temporary);
    }
  }
}

/**
 * The rows per block of a channels-last tensor's packed texture when that number is odd and
 * the multi-target programs can read the texture in place (see PackedTexture.blockRows): tfjs
 * packed it for a shape with the tensor's channels last and an odd second-last size, whose
 * blocks are whole runs of the tensor's positions along its inner spatial axes (W, H·W, …);
 * 0 otherwise (even blocks, unpacked, not on the GPU, or blocks that cut across rows: those
 * take matrixView's conversions).
 */
function oddBlockRows(backend: MathBackendWebGL, tensor: TensorInfo): number {
  const data = backend.texData.get(tensor.dataId);
  const packedShape = data.shape;
  if (data.texture == null || data.isPacked !== true || packedShape.length < 3) return 0;
  const columns = tensor.shape[tensor.shape.length - 1];
  const blockRows = packedShape[packedShape.length - 2];
  if (packedShape[packedShape.length - 1] !== columns || blockRows % 2 === 0) return 0;
  let positions = 1;
  for (let axis = tensor.shape.length - 2; axis >= 0; axis--) {
    positions *= tensor.shape[axis];
    if (positions === blockRows) return blockRows;
  }
  return 0;
}

/** The padded 2-D view [blocks · (blockRows + 1), columns] of a tensor packed in blocks of an odd number of rows. */
function paddedBlocksView(tensor: TensorInfo, blockRows: number): TensorInfo {
  const columns = tensor.shape[tensor.shape.length - 1];
  const rows = tensor.shape.reduce((a, b) => a * b, 1) / columns;
  return {dataId: tensor.dataId, shape: [rows / blockRows * (blockRows + 1), columns], dtype: tensor.dtype};
}

/**
 * The packed view [positions / 2, 2] of a tensor of one channel that thin rows read (four
 * positions a texel, in order). An unpacked tensor, or one not on the GPU yet, is packed for it
 * as matrixView packs views; a packed one (tfjs packed it as [positions, 1]: two positions and
 * two empty lanes a texel) is reshaped by tfjs's webgl Reshape kernel, one pass.
 */
function pairedPositionsView(backend: MathBackendWebGL, tensor: TensorInfo): {view: TensorInfo; temporary?: TensorInfo} {
  const data = backend.texData.get(tensor.dataId);
  if (data.texture == null || !data.isPacked) return matrixView(backend, tensor, true, THIN_ROWS_SRC_COLUMNS);
  const shape = [tensor.shape.reduce((a, b) => a * b, 1) / THIN_ROWS_SRC_COLUMNS, THIN_ROWS_SRC_COLUMNS];
  const reshape = getKernel('Reshape', 'webgl');
  if (reshape === undefined) return matrixView(backend, tensor, true, THIN_ROWS_SRC_COLUMNS);
  const view = reshape.kernelFunc({inputs: {x: tensor}, backend, attrs: {shape}}) as TensorInfo;
  return {view, temporary: view};
}

/**
 * The 2-D view [elements / last axis, last axis] of a tensor. Unpacked, it is the shape tfjs
 * gives an unpacked texture whenever that fits, which lets the shader read it without integer
 * division (tfjs falls back to flat indexing by itself when the texture had to be reshaped);
 * packed tensors are then unpacked first (returned as `temporary`, for the caller to dispose).
 * Packed ('packedTiles'), an unpacked texture is packed for the view here (a temporary, as
 * tfjs would make inside runWebGLProgram), so its texture's shape is known before the program
 * is made (see textureLayout), and a packed texture laid out for other blocks than the view's
 * rows is re-packed (unpacked, then packed for the view); a tensor not on the GPU yet, or
 * packed for the view already, is handed over as it is.
 */
function matrixView(backend: MathBackendWebGL, tensor: TensorInfo, packed: boolean,
                    columns = tensor.shape[tensor.shape.length - 1]): {view: TensorInfo; temporary?: TensorInfo} {
  const shape = [tensor.shape.reduce((a, b) => a * b, 1) / columns, columns];
  const data = backend.texData.get(tensor.dataId);
  const view = {dataId: tensor.dataId, shape, dtype: tensor.dtype};
  if (packed && data.texture != null && !data.isPacked) {
    const packedView = backend.packTensor(view);
    return {view: packedView, temporary: packedView};
  }
  if (packed && data.texture != null && !packsLikeView(data.shape, shape)) {
    // Packed for blocks of an odd number of rows (e.g. NHWC with odd W): texels pair positions
    // across blocks differently. Re-pack for the view, so it is read directly.
    const unpacked = backend.unpackTensor(tensor);
    const packedView = backend.packTensor({dataId: unpacked.dataId, shape, dtype: tensor.dtype});
    backend.disposeIntermediateTensorInfo(unpacked);
    return {view: packedView, temporary: packedView};
  }
  if (packed || !data.isPacked) return {view};
  const unpacked = backend.unpackTensor(tensor);
  return {view: {dataId: unpacked.dataId, shape, dtype: tensor.dtype}, temporary: unpacked};
}

/**
 * Whether a packed texture made for `shape` holds the 2-D view [rows, columns] of it in the
 * view's own texel order: the same matrix, or batches of matrices with the view's columns and
 * an even number of rows (so no texel pairs rows of two batches).
 */
function packsLikeView(shape: readonly number[], [rows, columns]: readonly number[]): boolean {
  return shape.length === 2 ? shape[0] === rows && shape[1] === columns :
                              shape[shape.length - 1] === columns && shape[shape.length - 2] % 2 === 0;
}

/**
 * How the texture behind a 2-D view [rows, columns] holds it, when the shader can read it
 * without tfjs's samplers (see readFunctions in filter_gradient_program.ts) because tfjs will
 * hand the texture to the program as it is: 'rowMajor', texel (row, col) — for packed textures
 * the texel of 2 × 2 holding it, at (row/2, col/2); 'folded' (packed only), the same texels in
 * order but wrapped at the texture's width, because a side exceeded WEBGL_MAX_TEXTURE_SIZE;
 * null when neither. Unpacked views are uploaded here if they are not on the GPU yet (which
 * also keeps tfjs from passing a tiny tensor as a uniform array), packed ones packed for the
 * view; a packed texture made for another shape must have the same columns and an even number
 * of rows per block, else tfjs re-packs it inside runWebGLProgram and the program keeps tfjs's
 * samplers. Unpacked folded textures are not read directly.
 */
function textureLayout(backend: MathBackendWebGL, view: TensorInfo, packed: boolean, blockRows = 0):
    'rowMajor' | 'folded' | null {
  const [rows, columns] = view.shape;
  const data = backend.texData.get(view.dataId);
  if (!packed) {
    if (data.isPacked) return null;
    if (data.texture == null) backend.uploadToGPU(view.dataId);
    return data.texShape?.[0] === rows && data.texShape?.[1] === columns ? 'rowMajor' : null;
  }
  if (data.texture == null) {  // upload it packed for the view, as runWebGLProgram would for a packed program
    data.isPacked = true;
    data.shape = view.shape;
    backend.uploadToGPU(view.dataId);
  }
  if (data.isPacked !== true || data.texture == null) return null;
  if (blockRows === 0 && !packsLikeView(data.shape, view.shape)) return null;
  return data.texShape?.[0] === rows + rows % 2 && data.texShape?.[1] === columns + columns % 2 ? 'rowMajor' : 'folded';
}

/**
 * The webgl kernel of either op: geometry once, pass 1 (partial sums over splits of the
 * reduction, per 2×2 channel tile, 4 kernel taps or filter element), pass 2 (sum of the splits, and for
 * tiles the filter layout) when needed, and the result — an unpacked, row-major texture, or
 * packed for the filter's shape where ArrangeChannelTexelsProgram wrote it — handed out under
 * the filter's shape without a copy.
 */
function filterGradientKernel(op: OpName): KernelFunc {
  return ({inputs, backend, attrs}): TensorInfo => {
    const webgl = backend as MathBackendWebGL;
    const geometry = geometryOfKernelCall(op, inputs, webgl, attrs);
    const filterShape = [...geometry.filterShape];
    if (geometry.batch === 0) {
      reportPath(geometry, 'zeros');
      return webgl.makeTensorInfo(filterShape, 'float32', new Float32Array(geometry.filterSize));
    }
    const webgl2 = env().getNumber('WEBGL_VERSION') === 2;
    if (webgl2 && env().getBool(CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET)) {
      const result = runMultiTargetPasses(webgl, geometry, inputs);
      if (result !== null) return {dataId: result.dataId, shape: filterShape, dtype: 'float32'};
    }
    const plan = planReduction(geometry);
    reportPath(geometry, `single target ${plan.mode} splits=${plan.splits}`);
    const packed = plan.mode === 'packedTiles';
    const src = matrixView(webgl, inputs[geometry.src.name]!, packed);
    const diffDst = matrixView(webgl, inputs[geometry.diffDst.name]!, packed);
    const temporaries = [src.temporary, diffDst.temporary];
    try {
      const srcLayout = webgl2 ? textureLayout(webgl, src.view, packed) : null;
      const diffDstLayout = webgl2 ? textureLayout(webgl, diffDst.view, packed) : null;
      const directReads = srcLayout === 'rowMajor' && diffDstLayout === 'rowMajor';
      const partialProgram = new FilterGradientProgram(geometry, plan, webgl2, directReads);
      const partial =
          webgl.runWebGLProgram(partialProgram, [src.view, diffDst.view], 'float32', partialProgram.uniforms());
      let result = partial;
      if (plan.mode !== 'single' || plan.splits > 1) {
        temporaries.push(partial);
        const finish = plan.mode !== 'single' ? new ArrangeTilesProgram(geometry, plan, webgl2) :
                                                new SumSplitsProgram(geometry.filterSize, plan.splits, webgl2);
        result = webgl.runWebGLProgram(finish, [partial], 'float32', finish.uniforms());
      }
      return {dataId: result.dataId, shape: filterShape, dtype: 'float32'};
    } finally {
      for (const temporary of temporaries) {
        if (temporary !== undefined) webgl.disposeIntermediateTensorInfo(temporary);
      }
    }
  };
}

/** Kernel configs of `op` under each of its names for the webgl backend. */
export function webglKernelConfigs(op: OpName): KernelConfig[] {
  return kernelConfigsFor(op, 'webgl', filterGradientKernel(op));
}

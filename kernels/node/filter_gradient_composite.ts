import * as tf from '@tensorflow/tfjs-core';
import type {TensorInfo} from '@tensorflow/tfjs-core';

import type {FilterGradientGeometry} from '../../src/geometry';
import {CompositeChunk, planChunks} from './chunk_plan';

/**
 * The canonical filter gradient (see FilterGradientGeometry) composed of tfjs ops that every
 * backend runs natively — slice, pad, reshape, transpose, concat, batched matMul — for the node
 * (`tensorflow`) and `wasm` backends:
 *
 *   dW[g][dc][sc][k] = Σ_n Σ_p diffDst[n][g·DC + dc][p] · src[n][g·SC + sc][p·s − pb + k·d]
 *
 * Per chunk (a range of samples; and of diffDst's outermost rows when one sample alone is over
 * the memory budget, see chunk_plan.ts):
 *
 * 1. src → the chunk's window frame [φ…, C, n, q…]: the src rows the chunk reads (from the
 *    positions and kernel offsets that read any src value: see windowFrame), cropped and
 *    zero-padded so that each spatial axis is Q·s long, channels moved first, and each strided
 *    axis split into s phases of Q (u = q·s + φ) with the phases moved ahead. Tap (p, k) reads
 *    u = p·s + k·d, i.e. phase (k·d) mod s at q = p + ⌊k·d / s⌋: for a fixed kernel offset k
 *    the windows of all positions are ONE contiguous unit-stride slice of the frame, whatever
 *    the strides and dilations. Phases no tap reads are dropped (a 1×1 kernel with stride 2
 *    keeps a quarter of a 2-D src).
 * 2. The K slices (one per kernel offset kept), each [G, SC, n·P], are concatenated into the window
 *    matrix [G, K·SC, n·P] — channel-major, so the concat is K contiguous copies.
 * 3. One batched matMul, the groups as its batch: [G, K·SC, n·P] · [G, n·P, DC] → [G, K·SC, DC].
 *    For G = 1 it is a plain product with no transpose flag, the shape wasm's XNNPACK path
 *    (and every backend's fastest path) takes; the operand it repacks is diffDst, the small one.
 *
 * The small [G, K·SC, DC] result is read back and added (float64) into the filter in
 * `filterFormat`, whose element strides the geometry gives: no transpose of the result.
 *
 * Transposes: only of tensors the size of the chunk's src and diffDst, never of the K-times
 * larger windows; a transpose that moves only unit axes is a reshape, and axes that stay
 * together are merged first, so every transpose is of rank ≤ 4 (wasm's fast kernels).
 * - src, NXC [n·X, C] → [C, n·X]: one 2-D transpose (channels must lead the window rows).
 *   NCX [n, C, X] → [C, n, X]: free for one sample.
 * - src, per strided axis whose taps read several phases: [rows, Q, s, rest] → [s, rows, Q,
 *   rest]. An axis whose taps read one phase (1×1 kernels, dilation a multiple of the stride)
 *   is instead subsampled by a slice before the channel transpose, while its runs are long.
 * - diffDst, NXC [n·P, G, DC] → [G, n·P, DC]: free for groups 1. NCX [n, G, DC, P] →
 *   [G, n, P, DC]: always (the alternative, a transposed-operand matMul, leaves wasm's fast path).
 *
 * `src` and `diffDst` are the kernel's input TensorInfos; the caller's tensors are never
 * disposed or aliased: they enter the computation through a Reshape kernel (which takes its
 * own reference on every backend), and everything made here is disposed before returning.
 */
export function compositeFilterGradient(
    geometry: FilterGradientGeometry, src: TensorInfo, diffDst: TensorInfo, budgetBytes: number): Float32Array {
  const sums = new Float64Array(geometry.filterSize);
  const plan = planChunks(geometry, budgetBytes);
  for (const chunk of plan.chunks) {
    const frame = windowFrame(geometry, chunk);
    if (frame === undefined) continue;  // every tap of this chunk reads padding: it adds nothing
    const partial = tf.tidy(() => chunkProduct(geometry, src, diffDst, chunk, frame));
    const values = partial.dataSync();
    partial.dispose();
    accumulate(geometry, values, frame.taps.map(tap => tap.filterOffset), sums);
  }
  return Float32Array.from(sums);
}

/** How one spatial axis of a chunk's src becomes its window frame. */
export interface FrameAxis {
  /**
   * The diffDst positions of the chunk along this axis that read some src value,
   * [firstPosition, firstPosition + positions); the others add nothing and are left out.
   */
  readonly firstPosition: number;
  readonly positions: number;
  /** The kernel offsets that read some src value from those positions, [firstTap, firstTap + tapCount). */
  readonly firstTap: number;
  readonly tapCount: number;
  /** The src range read, [srcBegin, srcBegin + srcCount), and the zeros around it. */
  readonly srcBegin: number;
  readonly srcCount: number;
  readonly padBefore: number;
  readonly padAfter: number;
  /**
   * The frame's stride s (the geometry's, or 1 when one position is left: a single window has
   * no stride to honour) and the phase length Q: srcCount + pads = Q · s.
   */
  readonly stride: number;
  readonly length: number;
  /** The phases some kernel offset reads, [phaseBegin, phaseBegin + phaseCount) of the s. */
  readonly phaseBegin: number;
  readonly phaseCount: number;
}

export interface WindowFrame {
  readonly axes: readonly FrameAxis[];
  /**
   * Per kernel offset the frame keeps (outermost axis first): its phase (flat over the kept
   * phases of every axis), its offset q along each axis, and its offset in the result (Σ k_a ·
   * the filter's stride along axis a). Offsets left out read only padding: their gradient is 0.
   */
  readonly taps: ReadonlyArray<{readonly phase: number; readonly offsets: readonly number[]; readonly filterOffset: number}>;
}

/**
 * The frame of one chunk, from the geometry alone. Undefined when the chunk's windows lie
 * entirely in the padding along some axis (its contribution is zero).
 *
 * The frame covers only what is read: the positions and kernel offsets that read no src value
 * along an axis are cut off first. Otherwise a stride or dilation far larger than src (valid
 * with large pads, or a stride past the input: strides [2^30] on 5 elements) would make a frame
 * of Q·s zeros, 2^30 of them for one value read (wasm: "memory access out of bounds").
 * With both cut, a frame axis is at most (positions + ⌊(K − 1)·d / s⌋)·s long, and a position
 * (or kernel offset) is kept only if it reads src, which bounds s (or d) by src's size plus
 * the other's reach.
 */
export function windowFrame(geometry: FilterGradientGeometry, chunk: CompositeChunk): WindowFrame | undefined {
  const axes: FrameAxis[] = [];
  for (let a = 0; a < geometry.axes.length; a++) {
    const axis = geometry.axes[a];
    const {stride: s, dilation: d, padBegin, kernelSize, srcSize} = axis;
    const chunkBegin = a === 0 ? chunk.rowBegin : 0;
    const chunkEnd = a === 0 ? chunk.rowBegin + chunk.rowCount : axis.diffDstSize;
    // Position p reads src[p·s − pb + k·d] for k in [0, K); kernel offset k the same over p.
    const positionReads = (p: number) => readsSrc(p * s - padBegin, d, 0, kernelSize, srcSize);
    let firstPosition = chunkBegin;
    while (firstPosition < chunkEnd && !positionReads(firstPosition)) firstPosition++;
    if (firstPosition === chunkEnd) return undefined;
    let lastPosition = chunkEnd - 1;
    while (!positionReads(lastPosition)) lastPosition--;
    const tapReads = (k: number) => readsSrc(k * d - padBegin, s, firstPosition, lastPosition + 1, srcSize);
    let firstTap = 0;
    while (!tapReads(firstTap)) firstTap++;
    let lastTap = kernelSize - 1;
    while (!tapReads(lastTap)) lastTap--;

    const positions = lastPosition - firstPosition + 1;
    const tapCount = lastTap - firstTap + 1;
    const stride = positions === 1 ? 1 : s;
    const length = positions + Math.floor(((tapCount - 1) * d) / stride);
    const origin = firstPosition * s - padBegin + firstTap * d;  // the src index of u = 0
    const extent = length * stride;
    const srcBegin = Math.max(0, origin);
    const srcEnd = Math.min(srcSize, origin + extent);
    const padBefore = srcBegin - origin;
    const phases = Array.from({length: tapCount}, (_, k) => (k * d) % stride);
    const phaseBegin = Math.min(...phases);
    axes.push({
      firstPosition, positions, firstTap, tapCount, srcBegin, srcCount: srcEnd - srcBegin, padBefore,
      padAfter: extent - padBefore - (srcEnd - srcBegin), stride, length, phaseBegin,
      phaseCount: Math.max(...phases) - phaseBegin + 1,
    });
  }
  let taps: Array<{phase: number; offsets: number[]; filterOffset: number}> = [{phase: 0, offsets: [], filterOffset: 0}];
  geometry.axes.forEach((axis, a) => {
    const {phaseBegin, phaseCount, stride, firstTap, tapCount} = axes[a];
    taps = taps.flatMap(tap => Array.from({length: tapCount}, (_, k) => ({
      phase: tap.phase * phaseCount + ((k * axis.dilation) % stride) - phaseBegin,
      offsets: [...tap.offsets, Math.floor((k * axis.dilation) / stride)],
      filterOffset: tap.filterOffset + (firstTap + k) * axis.filterStride,
    })));
  });
  return {axes, taps};
}

/** Whether base + j·step lies in [0, size) for some j in [jBegin, jEnd). */
function readsSrc(base: number, step: number, jBegin: number, jEnd: number, size: number): boolean {
  const low = Math.max(jBegin, Math.ceil(-base / step));
  const high = Math.min(jEnd - 1, Math.floor((size - 1 - base) / step));
  return low <= high;
}

/** One chunk's partial gradient [G, K·SC, DC] from tfjs ops (see compositeFilterGradient). */
function chunkProduct(
    geometry: FilterGradientGeometry, srcInfo: TensorInfo, diffDstInfo: TensorInfo, chunk: CompositeChunk,
    frame: WindowFrame): tf.Tensor {
  const {groups, dataFormat} = geometry;
  const nxc = dataFormat === 'NXC';
  const r = frame.axes.length;
  const samples = chunk.batchSize;
  const rows = geometry.src.channels * samples;  // the frame's rows: (c, n)
  const positions = frame.axes.reduce((v, a) => v * a.positions, 1);
  // Each step disposes the tensor it replaces, so at most two copies of the chunk's src live at once.
  let x = asTensor(srcInfo);
  const step = (next: tf.Tensor) => {
    if (next !== x) x.dispose();
    x = next;
  };

  // 1. The src the chunk reads, cropped and zero-padded to Q·s per axis.
  const spatialAxis = (a: number) => nxc ? 1 + a : 2 + a;
  step(sliceAxes(x, [
    [0, chunk.batchBegin, samples],
    ...frame.axes.map((f, a): [number, number, number] => [spatialAxis(a), f.srcBegin, f.srcCount]),
  ]));
  if (frame.axes.some(f => f.padBefore > 0 || f.padAfter > 0)) {
    const paddings = x.shape.map((): [number, number] => [0, 0]);
    frame.axes.forEach((f, a) => paddings[spatialAxis(a)] = [f.padBefore, f.padAfter]);
    step(tf.pad(x, paddings));
  }
  // 2. An axis whose taps all read one phase (1×1 kernels with strides, say) is subsampled
  //    now, while its elements still come in long runs (NXC: at least the C channels).
  const spatial = frame.axes.map(f => f.length * f.stride);  // current sizes: L, or Q once subsampled
  const strided = frame.axes.map(f => f.stride > 1);
  frame.axes.forEach((f, a) => {
    const inner = x.shape.slice(spatialAxis(a) + 1).reduce((v, size) => v * size, 1);
    if (!strided[a] || f.phaseCount > 1 || inner < MIN_RUN) return;
    const outer = x.shape.slice(0, spatialAxis(a)).reduce((v, size) => v * size, 1);
    const shape = [...x.shape];
    shape[spatialAxis(a)] = f.length;
    step(tf.reshape(
        sliceMerged(tf.reshape(x, [outer, f.length, f.stride, inner]), [0, 0, f.phaseBegin, 0], [outer, f.length, 1, inner]),
        shape));
    strided[a] = false;
    spatial[a] = f.length;
  });
  // 3. Channels first: [C·n, L…] (NXC [n·L, C] → [C, n·L]; NCX [n, C, L] → [C, n, L]).
  step(nxc ? transposeMerged(x, [r + 1, 0, ...frame.axes.map((_, a) => 1 + a)]) :
             transposeMerged(x, [1, 0, ...frame.axes.map((_, a) => 2 + a)]));
  // 4. Per remaining strided axis: split L = (Q, s), move s ahead of the rows, keep the phases
  //    some tap reads. Each is a transpose of rank ≤ 4 after merging (what wasm's fast paths take).
  let phases = 1;
  for (let a = 0; a < r; a++) {
    const f = frame.axes[a];
    if (!strided[a]) continue;
    const outer = rows * spatial.slice(0, a).reduce((v, size) => v * size, 1);
    const inner = spatial.slice(a + 1).reduce((v, size) => v * size, 1);
    step(transposeMerged(tf.reshape(x, [phases, outer, f.length, f.stride, inner]), [0, 3, 1, 2, 4]));
    if (f.phaseCount < f.stride) {
      const rest = outer * f.length * inner;
      step(sliceMerged(tf.reshape(x, [phases, f.stride, rest]), [0, f.phaseBegin, 0], [phases, f.phaseCount, rest]));
    }
    phases *= f.phaseCount;
    spatial[a] = f.length;
  }
  step(tf.reshape(x, [phases * rows, ...frame.axes.map(f => f.length)]));

  // 5. One unit-stride slice per kernel offset, concatenated into the windows [G, K·SC, n·P].
  const windowShape = [groups, geometry.src.channelsPerGroup, samples * positions];
  const slices = frame.taps.map(
      tap => tf.reshape(
          sliceMerged(x, [tap.phase * rows, ...tap.offsets], [rows, ...frame.axes.map(f => f.positions)]), windowShape));
  x.dispose();
  const windows = slices.length === 1 ? slices[0] : tf.concat(slices, 1);
  tf.dispose(slices.filter(slice => slice !== windows));

  // 6. diffDst as [G, n·P, DC], and the product.
  const diffDstPerGroup = geometry.diffDst.channelsPerGroup;
  const dy = sliceAxes(asTensor(diffDstInfo), [
    [0, chunk.batchBegin, samples],
    ...frame.axes.map((f, a): [number, number, number] => [spatialAxis(a), f.firstPosition, f.positions]),
  ]);
  const dyRows = nxc ?
      transposeMerged(tf.reshape(dy, [samples * positions, groups, diffDstPerGroup]), [1, 0, 2]) :
      transposeMerged(tf.reshape(dy, [samples, groups, diffDstPerGroup, positions]), [1, 0, 3, 2]);
  return tf.matMul(windows, tf.reshape(dyRows, [groups, samples * positions, diffDstPerGroup]));
}

/** Runs shorter than this many elements make slices slow on wasm (one copy call per run). */
const MIN_RUN = 8;

/**
 * A tensor on the kernel's input data, holding its own reference (the Reshape kernel takes one
 * on every backend), so disposing it leaves the caller's tensor intact.
 */
function asTensor(info: TensorInfo): tf.Tensor {
  return tf.engine().runKernel('Reshape', {x: info} as unknown as tf.NamedTensorMap, {shape: [...info.shape]}) as
      tf.Tensor;
}

/** Slices [begin, begin + size) along the given axes; no op when that is everything. */
function sliceAxes(x: tf.Tensor, ranges: ReadonlyArray<readonly [number, number, number]>): tf.Tensor {
  if (ranges.every(([axis, begin, size]) => begin === 0 && size === x.shape[axis])) return x;
  const begin = x.shape.map(() => 0);
  const size = [...x.shape];
  for (const [axis, b, s] of ranges) {
    begin[axis] = b;
    size[axis] = s;
  }
  return sliceMerged(x, begin, size);
}

/**
 * tf.slice on a lower-rank view: an axis taken whole merges into the axis before it, and so
 * does any axis after one of which a single index is taken. The slice's runs get longer and
 * its rank lower (wasm slices rank ≤ 4 by runs, higher ranks element by element).
 */
export function sliceMerged(x: tf.Tensor, begin: readonly number[], size: readonly number[]): tf.Tensor {
  const merged: Array<{dim: number; begin: number; size: number}> = [];
  x.shape.forEach((dim, axis) => {
    const last = merged[merged.length - 1];
    if (last !== undefined && begin[axis] === 0 && size[axis] === dim) {
      merged[merged.length - 1] = {dim: last.dim * dim, begin: last.begin * dim, size: last.size * dim};
    } else if (last !== undefined && last.size === 1) {
      merged[merged.length - 1] = {dim: last.dim * dim, begin: last.begin * dim + begin[axis], size: size[axis]};
    } else {
      merged.push({dim, begin: begin[axis], size: size[axis]});
    }
  });
  const view = tf.reshape(x, merged.map(m => m.dim));
  return tf.reshape(tf.slice(view, merged.map(m => m.begin), merged.map(m => m.size)), [...size]);
}

/**
 * tf.transpose with unit axes dropped and runs of axes that stay adjacent merged first (a
 * lower-rank transpose, or none at all: then it is a reshape).
 */
export function transposeMerged(x: tf.Tensor, perm: readonly number[]): tf.Tensor {
  const outShape = perm.map(axis => x.shape[axis]);
  const kept = perm.filter(axis => x.shape[axis] !== 1);
  // Runs of consecutive input axes in output order.
  const runs: number[][] = [];
  for (const axis of kept) {
    const last = runs[runs.length - 1];
    if (last !== undefined && last[last.length - 1] + 1 === axis) last.push(axis);
    else runs.push([axis]);
  }
  if (runs.length <= 1 || runs.every((run, i) => i === 0 || run[0] > runs[i - 1][0])) {
    return tf.reshape(x, outShape);  // only unit axes move
  }
  const byInputOrder = [...runs].sort((a, b) => a[0] - b[0]);
  const mergedShape = byInputOrder.map(run => run.reduce((v, axis) => v * x.shape[axis], 1));
  const mergedPerm = runs.map(run => byInputOrder.indexOf(run));
  return tf.reshape(tf.transpose(tf.reshape(x, mergedShape), mergedPerm), outShape);
}

/**
 * Adds a chunk's partial product [G][T][SC][DC] (T: the frame's taps) into the result, laid out
 * by the geometry's filter strides; `tapOffsets` holds each tap's offset in the result.
 */
function accumulate(
    geometry: FilterGradientGeometry, partial: ArrayLike<number>, tapOffsets: readonly number[], sums: Float64Array) {
  const {groups, filterStrides} = geometry;
  const srcPerGroup = geometry.src.channelsPerGroup;
  const diffDstPerGroup = geometry.diffDst.channelsPerGroup;
  let i = 0;
  for (let g = 0; g < groups; g++) {
    for (const tapOffset of tapOffsets) {
      for (let sc = 0; sc < srcPerGroup; sc++) {
        const base = g * filterStrides.group + tapOffset + sc * filterStrides.srcChannel;
        for (let dc = 0; dc < diffDstPerGroup; dc++) sums[base + dc * filterStrides.diffDstChannel] += partial[i++];
      }
    }
  }
}

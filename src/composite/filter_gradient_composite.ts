import * as tf from '@tensorflow/tfjs-core';
import type {TensorInfo} from '@tensorflow/tfjs-core';

import type {FilterGradientGeometry} from '../geometry';
import {CompositeChunk, planChunks} from './chunk_plan';

/**
 * The canonical filter gradient (see FilterGradientGeometry) composed of tfjs ops that every
 * backend runs natively — slice, pad, reshape, transpose, concat, gather, batched matMul, add —
 * for the node (`tensorflow`) backend, and for the op functions and drop-in gradients on any
 * backend this package has no kernel for:
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
 * 2. Per kernel offset k, only the box of positions whose reads fall inside src (per axis the
 *    range of p with 0 ≤ p·s − pb + k·d < src size) is sliced: the frame's zeros are never read,
 *    so no product of a padding zero with diffDst exists, and ±Infinity and NaN in diffDst give
 *    exactly the sums of DESIGN.md §2 (a padded window matrix would turn 0·Infinity into NaN).
 * 3. The kernel offsets with the same box share one batched matMul, the groups as its batch:
 *    their slices, each [G, SC, n·P], concatenated channel-major into [G, T·SC, n·P], times
 *    diffDst's box [G, n·P, DC] → [G, T·SC, DC]. Without padding every offset has the full box:
 *    one matMul. For G = 1 it is a plain product with no transpose flag, the shape wasm's
 *    XNNPACK path (and every backend's fastest path) takes; the operand it repacks is diffDst.
 * 4. The products of the chunk are gathered into kernel order [G, K, SC, DC] (zeros for the
 *    offsets that read only padding) and added to the chunks before.
 *
 * The sum is transposed once into `filterFormat` and returned as a tensor of the backend: no
 * value leaves the device.
 *
 * Transposes: only of tensors the size of the chunk's src and diffDst (once each), never of the
 * K-times larger windows; a transpose that moves only unit axes is a reshape, and axes that stay
 * together are merged first, so every transpose is of rank ≤ 4 (wasm's fast kernels).
 * - src, NXC [n·X, C] → [C, n·X]: one 2-D transpose (channels must lead the window rows).
 *   NCX [n, C, X] → [C, n, X]: free for one sample.
 * - src, per strided axis whose taps read several phases: [rows, Q, s, rest] → [s, rows, Q,
 *   rest]. An axis whose taps read one phase (1×1 kernels, dilation a multiple of the stride)
 *   is instead subsampled by a slice before the channel transpose, while its runs are long.
 * - diffDst, NXC [n, P, G, DC] → [G, n, P, DC]: free for groups 1. NCX [n, G, DC, P] →
 *   [G, n, P, DC]: always (the alternative, a transposed-operand matMul, leaves wasm's fast path).
 *
 * `src` and `diffDst` are TensorInfos of the current backend; the caller's tensors are never
 * disposed or aliased: they enter the computation through a Reshape kernel (which takes its
 * own reference on every backend), and everything made here but the result is disposed.
 */
export function compositeFilterGradient(
    geometry: FilterGradientGeometry, src: TensorInfo, diffDst: TensorInfo, budgetBytes: number): tf.Tensor {
  const plan = planChunks(geometry, budgetBytes);
  let sum: tf.Tensor | undefined;  // [G, K, SC, DC]
  for (const chunk of plan.chunks) {
    const frame = windowFrame(geometry, chunk);
    if (frame === undefined) continue;  // every tap of this chunk reads padding: it adds nothing
    const partial = tf.tidy(() => chunkProduct(geometry, src, diffDst, chunk, frame));
    if (sum === undefined) {
      sum = partial;
    } else {
      const next = tf.add(sum, partial);
      tf.dispose([sum, partial]);
      sum = next;
    }
  }
  const canonical = sum ?? tf.zeros(canonicalShape(geometry));
  const result = tf.tidy(() => toFilterFormat(geometry, canonical));
  canonical.dispose();
  return result;
}

function kernelVolume(geometry: FilterGradientGeometry): number {
  return geometry.axes.reduce((v, axis) => v * axis.kernelSize, 1);
}

/** The shape the chunks sum in: [G, K, SC, DC], K the kernel offsets in row-major order. */
function canonicalShape(geometry: FilterGradientGeometry): number[] {
  return [geometry.groups, kernelVolume(geometry), geometry.src.channelsPerGroup, geometry.diffDst.channelsPerGroup];
}

/**
 * [G, K, SC, DC] → the result in `filterFormat`: its axes ordered by the geometry's element
 * strides (the group and diffDst-channel axes are adjacent in every format, as are the kernel
 * axes), one transpose of the small filter and a reshape.
 */
function toFilterFormat(geometry: FilterGradientGeometry, canonical: tf.Tensor): tf.Tensor {
  const {filterStrides} = geometry;
  const innermostKernelStride = geometry.axes[geometry.axes.length - 1].filterStride;
  // [axis of the canonical tensor, its element stride in the result]; unit axes may go anywhere.
  const strides: Array<[number, number]> = [
    [0, filterStrides.group], [1, innermostKernelStride], [2, filterStrides.srcChannel],
    [3, filterStrides.diffDstChannel],
  ];
  const perm = strides.filter(([axis]) => canonical.shape[axis] > 1)
                   .sort((a, b) => b[1] - a[1])
                   .map(([axis]) => axis);
  for (let axis = 0; axis < 4; axis++) if (canonical.shape[axis] === 1) perm.push(axis);
  return tf.reshape(transposeMerged(canonical, perm), [...geometry.filterShape]);
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
  /** The kernel offsets the frame keeps, outermost axis first; the others read only padding (gradient 0). */
  readonly taps: readonly FrameTap[];
}

export interface FrameTap {
  /** The kernel offset k along each axis, and its index in row-major kernel order. */
  readonly kernel: readonly number[];
  readonly kernelIndex: number;
  /** Its phase (flat over the kept phases of every axis) and its offset q along each axis in the frame. */
  readonly phase: number;
  readonly offsets: readonly number[];
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
  let taps: FrameTap[] = [{kernel: [], kernelIndex: 0, phase: 0, offsets: []}];
  geometry.axes.forEach((axis, a) => {
    const {phaseBegin, phaseCount, stride, firstTap, tapCount} = axes[a];
    taps = taps.flatMap(tap => Array.from({length: tapCount}, (_, k) => ({
      kernel: [...tap.kernel, firstTap + k],
      kernelIndex: tap.kernelIndex * axis.kernelSize + firstTap + k,
      phase: tap.phase * phaseCount + ((k * axis.dilation) % stride) - phaseBegin,
      offsets: [...tap.offsets, Math.floor((k * axis.dilation) / stride)],
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

/** One chunk's partial gradient [G, K, SC, DC] from tfjs ops (see compositeFilterGradient). */
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

  // 5. diffDst's positions of the frame as [G, n, P…, DC], once (free for NXC with one group).
  const diffDstPerGroup = geometry.diffDst.channelsPerGroup;
  const dy = sliceAxes(asTensor(diffDstInfo), [
    [0, chunk.batchBegin, samples],
    ...frame.axes.map((f, a): [number, number, number] => [spatialAxis(a), f.firstPosition, f.positions]),
  ]);
  const framePositions = frame.axes.map(f => f.positions);
  const dyRows = nxc ?
      transposeMerged(tf.reshape(dy, [samples, ...framePositions, groups, diffDstPerGroup]), [r + 1, 0, ...frame.axes.map((_, a) => 1 + a), r + 2]) :
      transposeMerged(tf.reshape(dy, [samples, groups, diffDstPerGroup, positions]), [1, 0, 3, 2]);
  const dyFrame = tf.reshape(dyRows, [groups, samples, ...framePositions, diffDstPerGroup]);

  // 6. Per box of positions (the kernel offsets whose reads stay inside src there), one slice of
  //    the frame per offset, concatenated into [G, T·SC, n·P], times diffDst's box [G, n·P, DC].
  const products: tf.Tensor[] = [];
  const order: number[] = [];  // kernel index of each row block of the concatenated products
  for (const {box, taps} of tapsByBox(geometry, frame)) {
    const boxPositions = box.reduce((v, [, count]) => v * count, 1);
    products.push(tf.tidy(() => {
      const windowShape = [groups, geometry.src.channelsPerGroup, samples * boxPositions];
      const slices = taps.map(tap => tf.reshape(
          sliceMerged(x, [tap.phase * rows, ...tap.offsets.map((q, a) => q + box[a][0])], [rows, ...box.map(([, count]) => count)]),
          windowShape));
      const windows = slices.length === 1 ? slices[0] : tf.concat(slices, 1);
      const dyBox = sliceAxes(dyFrame, box.map(([begin, count], a): [number, number, number] => [2 + a, begin, count]));
      const product = tf.matMul(windows, tf.reshape(dyBox, [groups, samples * boxPositions, diffDstPerGroup]));
      return tf.reshape(product, [groups, taps.length, geometry.src.channelsPerGroup, diffDstPerGroup]);
    }));
    order.push(...taps.map(tap => tap.kernelIndex));
  }
  x.dispose();

  // 7. Into kernel order [G, K, SC, DC], zeros for the offsets that read only padding.
  const volume = kernelVolume(geometry);
  const blocks = products.length === 1 ? products[0] : tf.concat(products, 1);
  if (order.length === volume && order.every((kernelIndex, i) => kernelIndex === i)) return blocks;
  const zero = tf.zeros([groups, 1, geometry.src.channelsPerGroup, diffDstPerGroup]);
  const withZero = tf.concat([blocks, zero], 1);
  const indices = new Int32Array(volume).fill(order.length);
  order.forEach((kernelIndex, i) => indices[kernelIndex] = i);
  return tf.gather(withZero, tf.tensor1d(indices, 'int32'), 1);
}

/** A box of frame positions: per axis [begin, count), relative to the frame's first position. */
type Box = Array<[number, number]>;

/**
 * The frame's taps grouped by their box: per axis the positions p of the frame for which
 * p·s − pb + k·d lies in [0, src size). Every tap the frame keeps reads src at some position on
 * every axis, so no box is empty.
 */
function tapsByBox(geometry: FilterGradientGeometry, frame: WindowFrame): Array<{box: Box; taps: FrameTap[]}> {
  const groups = new Map<string, {box: Box; taps: FrameTap[]}>();
  for (const tap of frame.taps) {
    const box = frame.axes.map((f, a): [number, number] => {
      const {stride: s, dilation: d, padBegin, srcSize} = geometry.axes[a];
      const base = tap.kernel[a] * d - padBegin;  // p·s + base is the src index read
      const low = Math.max(f.firstPosition, Math.ceil(-base / s));
      const high = Math.min(f.firstPosition + f.positions - 1, Math.floor((srcSize - 1 - base) / s));
      return [low - f.firstPosition, high - low + 1];
    });
    const key = box.join();
    const group = groups.get(key);
    if (group === undefined) groups.set(key, {box, taps: [tap]});
    else group.taps.push(tap);
  }
  return [...groups.values()];
}

/** Runs shorter than this many elements make slices slow on wasm (one copy call per run). */
const MIN_RUN = 8;

/**
 * A tensor on the kernel's input data, holding its own reference (the Reshape kernel takes one
 * on every backend), so disposing it leaves the caller's tensor intact.
 */
export function asTensor(info: TensorInfo): tf.Tensor {
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

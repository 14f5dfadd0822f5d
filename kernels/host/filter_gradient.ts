import {FilterGradientGeometry, SpatialAxis, spatialAxesAs3d} from '../../src/geometry';

/**
 * The one canonical filter-gradient loop nest over typed arrays (see FilterGradientGeometry),
 * shared by the cpu and wasm kernels:
 *
 *   dW[g][dc][sc][k] = Σ_n Σ_p diffDst[n][g·DC + dc][p] · src[n][g·SC + sc][p·s − pb + k·d]
 *
 * Work is split into channel tiles. A tile keeps its sums in local variables (float64) for the
 * whole reduction over batch and positions, so every result element is written exactly once,
 * rounded to float32 once. For each kernel offset the range of positions whose window stays
 * inside src is computed up front, so the inner loop has no bounds checks. Kernel offsets are
 * the innermost tile loop: the same few channel columns of src and diffDst are swept K times
 * while they are still in cache.
 *
 * The gradient is written into `into` (geometry.filterSize elements, e.g. a view on the wasm
 * backend's heap; every element is overwritten) or into a new array.
 */
export function computeFilterGradient(
    geometry: FilterGradientGeometry, src: Float32Array, diffDst: Float32Array,
    into?: Float32Array): Float32Array {
  const result = into ?? new Float32Array(geometry.filterSize);
  if (into !== undefined) into.fill(0);  // offsets whose window never meets src keep a zero gradient
  if (geometry.batch === 0) return result;
  // 1-D and 2-D problems run as 3-D ones with leading unit axes: one loop nest.
  const [depth, height, width] = spatialAxesAs3d(geometry.axes);
  const depthRanges = kernelRanges(depth);
  const heightRanges = kernelRanges(height);
  const widthRanges = kernelRanges(width);
  const sweep: Sweep = {
    batch: geometry.batch,
    srcBatchStride: geometry.src.batchStride,
    diffDstBatchStride: geometry.diffDst.batchStride,
    srcBase: 0,
    diffDstBase: 0,
    countD: 0,
    countH: 0,
    countW: 0,
    srcStepD: depth.stride * depth.srcStride,
    srcStepH: height.stride * height.srcStride,
    srcStepW: width.stride * width.srcStride,
    diffDstStepD: depth.diffDstStride,
    diffDstStepH: height.diffDstStride,
    diffDstStepW: width.diffDstStride,
  };
  const sums = new Float64Array(TILE * TILE);
  for (const tile of channelTiles(geometry)) {
    for (const rd of depthRanges) {
      for (const rh of heightRanges) {
        for (const rw of widthRanges) {
          sweep.countD = rd.count;
          sweep.countH = rh.count;
          sweep.countW = rw.count;
          if (rd.count === 0 || rh.count === 0 || rw.count === 0) continue;  // the gradient stays 0
          sweep.srcBase = rd.srcOffset + rh.srcOffset + rw.srcOffset;
          sweep.diffDstBase = rd.diffDstOffset + rh.diffDstOffset + rw.diffDstOffset;
          const [s0, s1, s2, s3] = tile.srcOffsets;
          const [d0, d1, d2, d3] = tile.diffDstOffsets;
          if (tile.dense) {
            sweepDense(src, diffDst, sweep, s0, s1, s2, s3, d0, d1, d2, d3, sums);
          } else {
            sweepLanes(src, diffDst, sweep, s0, s1, s2, s3, d0, d1, d2, d3, sums);
          }
          const filterBase = rd.filterOffset + rh.filterOffset + rw.filterOffset;
          tile.filterOffsets.forEach((offset, i) => {
            if (offset >= 0) result[filterBase + offset] = sums[i];
          });
        }
      }
    }
  }
  return result;
}

const TILE = 4;

interface KernelRange {
  /** How many diffDst positions p along the axis read src inside [0, srcSize) at this offset. */
  count: number;
  /** Element offsets of the first such position in src and diffDst, and of the offset in dW. */
  srcOffset: number;
  diffDstOffset: number;
  filterOffset: number;
}

/** For each kernel offset k: the positions p with 0 ≤ p·s − pb + k·d < srcSize. */
function kernelRanges(axis: SpatialAxis): KernelRange[] {
  return windowRanges(axis).map(({first, end, shift}, k) => ({
    count: end - first,
    srcOffset: (first * axis.stride + shift) * axis.srcStride,
    diffDstOffset: first * axis.diffDstStride,
    filterOffset: k * axis.filterStride,
  }));
}

/**
 * For each kernel offset k of an axis: the diffDst positions [first, end) whose window tap
 * p·stride + shift (shift = k·dilation − padBegin) lies inside src; end = first when none does.
 */
export function windowRanges(axis: SpatialAxis): Array<{first: number; end: number; shift: number}> {
  const ranges = [];
  for (let k = 0; k < axis.kernelSize; k++) {
    const shift = k * axis.dilation - axis.padBegin;
    const first = Math.max(0, Math.ceil(-shift / axis.stride));
    const end = Math.min(axis.diffDstSize, Math.floor((axis.srcSize - 1 - shift) / axis.stride) + 1);
    ranges.push({first, end: Math.max(first, end), shift});
  }
  return ranges;
}

interface Sweep {
  batch: number;
  srcBatchStride: number;
  diffDstBatchStride: number;
  srcBase: number;
  diffDstBase: number;
  countD: number;
  countH: number;
  countW: number;
  srcStepD: number;
  srcStepH: number;
  srcStepW: number;
  diffDstStepD: number;
  diffDstStepH: number;
  diffDstStepW: number;
}

interface ChannelTile {
  /** Dense: sums[4·i + j] = Σ src channel i × diffDst channel j. Lanes: sums[i] = src i × diffDst i. */
  readonly dense: boolean;
  readonly srcOffsets: readonly number[];
  readonly diffDstOffsets: readonly number[];
  /** Where each sum goes in dW (before the kernel offset), or −1 for padding lanes. */
  readonly filterOffsets: readonly number[];
}

/**
 * Dense 4×4 tiles of (src channel, diffDst channel) within a group when the groups have enough
 * channels to fill them; otherwise (depthwise and other thin groups) lanes of 4 independent
 * pairs, which waste nothing. Ragged edges repeat the last channel and are not stored.
 */
function channelTiles(geometry: FilterGradientGeometry): ChannelTile[] {
  const {groups, src, diffDst, filterStrides} = geometry;
  const srcPerGroup = src.channelsPerGroup;
  const diffDstPerGroup = diffDst.channelsPerGroup;
  const srcOffset = (g: number, c: number) => (g * srcPerGroup + Math.min(c, srcPerGroup - 1)) * src.channelStride;
  const diffDstOffset = (g: number, c: number) =>
      (g * diffDstPerGroup + Math.min(c, diffDstPerGroup - 1)) * diffDst.channelStride;
  const filterOffset = (g: number, dc: number, sc: number) =>
      g * filterStrides.group + dc * filterStrides.diffDstChannel + sc * filterStrides.srcChannel;
  const roundUp = (n: number) => Math.ceil(n / TILE) * TILE;
  const denseUse = (srcPerGroup * diffDstPerGroup) / (roundUp(srcPerGroup) * roundUp(diffDstPerGroup));
  const tiles: ChannelTile[] = [];
  // A dense tile does 16 multiply-adds per 8 loads, a lane tile 4: dense wins above ~1/3 use.
  if (denseUse >= 1 / 3) {
    for (let g = 0; g < groups; g++) {
      for (let sc = 0; sc < srcPerGroup; sc += TILE) {
        for (let dc = 0; dc < diffDstPerGroup; dc += TILE) {
          const lanes = [0, 1, 2, 3];
          tiles.push({
            dense: true,
            srcOffsets: lanes.map(i => srcOffset(g, sc + i)),
            diffDstOffsets: lanes.map(j => diffDstOffset(g, dc + j)),
            filterOffsets: lanes.flatMap(
                i => lanes.map(
                    j => sc + i < srcPerGroup && dc + j < diffDstPerGroup ? filterOffset(g, dc + j, sc + i) : -1)),
          });
        }
      }
    }
    return tiles;
  }
  const pairs: Array<[number, number, number]> = [];
  for (let g = 0; g < groups; g++) {
    for (let dc = 0; dc < diffDstPerGroup; dc++) {
      for (let sc = 0; sc < srcPerGroup; sc++) pairs.push([g, dc, sc]);
    }
  }
  for (let first = 0; first < pairs.length; first += TILE) {
    const lanePairs = [0, 1, 2, 3].map(i => pairs[Math.min(first + i, pairs.length - 1)]);
    tiles.push({
      dense: false,
      srcOffsets: lanePairs.map(([g, , sc]) => srcOffset(g, sc)),
      diffDstOffsets: lanePairs.map(([g, dc]) => diffDstOffset(g, dc)),
      filterOffsets: lanePairs.map(([g, dc, sc], i) => first + i < pairs.length ? filterOffset(g, dc, sc) : -1),
    });
  }
  return tiles;
}

/** The hot loop: a 4×4 block of sums over the whole reduction, held in locals. */
function sweepDense(
    src: Float32Array, diffDst: Float32Array, w: Sweep, s0: number, s1: number, s2: number, s3: number, d0: number,
    d1: number, d2: number, d3: number, sums: Float64Array) {
  let a00 = 0, a01 = 0, a02 = 0, a03 = 0, a10 = 0, a11 = 0, a12 = 0, a13 = 0;
  let a20 = 0, a21 = 0, a22 = 0, a23 = 0, a30 = 0, a31 = 0, a32 = 0, a33 = 0;
  const {countD, countH, countW, srcStepD, srcStepH, srcStepW, diffDstStepD, diffDstStepH, diffDstStepW} = w;
  for (let n = 0; n < w.batch; n++) {
    let srcD = w.srcBase + n * w.srcBatchStride;
    let diffDstD = w.diffDstBase + n * w.diffDstBatchStride;
    for (let pd = 0; pd < countD; pd++, srcD += srcStepD, diffDstD += diffDstStepD) {
      let srcH = srcD;
      let diffDstH = diffDstD;
      for (let ph = 0; ph < countH; ph++, srcH += srcStepH, diffDstH += diffDstStepH) {
        let si = srcH;
        let di = diffDstH;
        for (let pw = 0; pw < countW; pw++, si += srcStepW, di += diffDstStepW) {
          const x0 = src[si + s0], x1 = src[si + s1], x2 = src[si + s2], x3 = src[si + s3];
          const y0 = diffDst[di + d0], y1 = diffDst[di + d1], y2 = diffDst[di + d2], y3 = diffDst[di + d3];
          a00 += x0 * y0; a01 += x0 * y1; a02 += x0 * y2; a03 += x0 * y3;
          a10 += x1 * y0; a11 += x1 * y1; a12 += x1 * y2; a13 += x1 * y3;
          a20 += x2 * y0; a21 += x2 * y1; a22 += x2 * y2; a23 += x2 * y3;
          a30 += x3 * y0; a31 += x3 * y1; a32 += x3 * y2; a33 += x3 * y3;
        }
      }
    }
  }
  sums[0] = a00; sums[1] = a01; sums[2] = a02; sums[3] = a03;
  sums[4] = a10; sums[5] = a11; sums[6] = a12; sums[7] = a13;
  sums[8] = a20; sums[9] = a21; sums[10] = a22; sums[11] = a23;
  sums[12] = a30; sums[13] = a31; sums[14] = a32; sums[15] = a33;
}

/** Four independent (src channel, diffDst channel) pairs, for depthwise and thin groups. */
function sweepLanes(
    src: Float32Array, diffDst: Float32Array, w: Sweep, s0: number, s1: number, s2: number, s3: number, d0: number,
    d1: number, d2: number, d3: number, sums: Float64Array) {
  let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  const {countD, countH, countW, srcStepD, srcStepH, srcStepW, diffDstStepD, diffDstStepH, diffDstStepW} = w;
  for (let n = 0; n < w.batch; n++) {
    let srcD = w.srcBase + n * w.srcBatchStride;
    let diffDstD = w.diffDstBase + n * w.diffDstBatchStride;
    for (let pd = 0; pd < countD; pd++, srcD += srcStepD, diffDstD += diffDstStepD) {
      let srcH = srcD;
      let diffDstH = diffDstD;
      for (let ph = 0; ph < countH; ph++, srcH += srcStepH, diffDstH += diffDstStepH) {
        let si = srcH;
        let di = diffDstH;
        for (let pw = 0; pw < countW; pw++, si += srcStepW, di += diffDstStepW) {
          a0 += src[si + s0] * diffDst[di + d0];
          a1 += src[si + s1] * diffDst[di + d1];
          a2 += src[si + s2] * diffDst[di + d2];
          a3 += src[si + s3] * diffDst[di + d3];
        }
      }
    }
  }
  sums[0] = a0; sums[1] = a1; sums[2] = a2; sums[3] = a3;
}

// AssemblyScript source of the WebAssembly SIMD path of the cpu and wasm kernels, compiled by
// scripts/build_wasm.mjs into micro_kernels_wasm.generated.ts (embedded bytes, no loader).
//
// JavaScript (../simd_filter_gradient.ts) copies samples of src and diffDst into this module's
// memory channels-last, with each group's channels contiguous, writes a job (the problem and a
// table of tasks) and calls runTask for each task, on the calling thread and on worker threads
// sharing the memory (../thread_pool.ts); the first task on each set of sums zeroes them, the
// last writes them into the filter in the filter's own layout. The filter gradient is, for each
// group g and kernel offset k, a small matrix product over the positions p:
//
//   acc[g][k][b][v] += Σ_p  B[p][g][b] · V[window(p, k)][g][v]     (dense groups)
//   acc[k][g]       += Σ_p  diffDst[p][g] · src[window(p, k)][g]   (depthwise: one channel each)
//
// V is the side whose groups have more channels (padded to a multiple of 4 with zeros so it
// loads as f32x4 vectors), B the other (read one scalar at a time, broadcast). Only src is read
// through the window; which of V and B it is only changes the pointer steps, so one set of
// micro-kernels serves both. Positions are walked in blocks small enough for L1, and every
// kernel offset and channel tile sweeps the block while it is there. Sums run in f32x4
// registers over one block and are added into float64 accumulators after it, so rounding
// error grows with the block (≤ ~1000 terms), not with the whole reduction.
//
// scripts/build_wasm.mjs compiles this file four times: with plain or relaxed SIMD (madd below;
// chainedMadd is the same in both), and importing a plain or a shared memory (for worker
// threads); the code is otherwise the same.

const F32 = 4;
const F64 = 8;

// The job block JavaScript writes (i32 fields, byte offsets), shared by every task of a job.
const JOB_SRC = 0;                // packed src of the first sample of the chunk
const JOB_DIFF_DST = 4;           // packed diffDst of the first sample of the chunk
const JOB_SRC_SAMPLE_BYTES = 8;   // bytes between consecutive packed samples
const JOB_DST_SAMPLE_BYTES = 12;
const JOB_RANGES = 16;
const JOB_DEPTHWISE = 20;
const JOB_SRC_IS_VECTOR = 24;
const JOB_GROUPS = 28;
const JOB_VECTOR_CHANNELS = 32;
const JOB_BROADCAST_CHANNELS = 36;
const JOB_SRC_HEIGHT = 40;
const JOB_SRC_WIDTH = 44;
const JOB_DST_DEPTH = 48;
const JOB_DST_HEIGHT = 52;
const JOB_DST_WIDTH = 56;
const JOB_KERNEL_DEPTH = 60;
const JOB_KERNEL_HEIGHT = 64;
const JOB_KERNEL_WIDTH = 68;
const JOB_STRIDE_DEPTH = 72;
const JOB_STRIDE_HEIGHT = 76;
const JOB_STRIDE_WIDTH = 80;
const JOB_BLOCK_ROWS = 84;
const JOB_BLOCK_COLUMNS = 88;
const JOB_TASKS = 92;             // the task table: TASK_BYTES per task
// Where the units' sums go (storeUnits): the float32 filter and its element strides.
const JOB_FILTER = 96;            // the filter, in the filter's own layout
const JOB_FILTER_GROUP = 100;     // between groups
const JOB_FILTER_VECTOR = 104;    // between vector channels
const JOB_FILTER_BROADCAST = 108; // between broadcast channels
const JOB_FILTER_DEPTH = 112;     // between kernel offsets along D, H, W
const JOB_FILTER_HEIGHT = 116;
const JOB_FILTER_WIDTH = 120;
const JOB_VECTOR_PER_GROUP = 124; // the vector channels a group has (without the padding to 4)
const JOB_FILTER_GROUPS = 128;    // the groups the filter has (depthwise: without the lanes' padding to 4)
// One task: its float64 sums, its output units [first, end), its reduction rows [first, end) and
// flags: TASK_ZEROES, the first task on its units' sums sets them to zero before it adds its
// rows; TASK_STORES, the last one writes them into the filter after.
const TASK_BYTES = 24;
const TASK_SUMS = 0;
const TASK_UNIT_FIRST = 4;
const TASK_UNIT_END = 8;
const TASK_ROW_FIRST = 12;
const TASK_ROW_END = 16;
const TASK_FLAGS = 20;
const TASK_ZEROES = 1;
const TASK_STORES = 2;

/**
 * Runs task `task` of the job at `job`: adds into the task's sums the terms of its output units
 * over its reduction rows.
 *
 * Output units: for each kernel offset k (outermost), group g, vector tile (8 channels, the last
 * maybe 4) and broadcast chunk (4 channels, the last one with the remaining 1–3 too), or for
 * depthwise for each k and 4 lanes. Reduction rows: for each sample of the chunk (outermost),
 * each diffDst depth position and each block of `blockRows` diffDst rows. Every sum sees its
 * blocks of positions in the same order and each block summed the same way, however the units
 * and rows are split into tasks, so the result does not depend on how tasks are spread over
 * threads. `ranges` holds, for the axes D, H, W in turn and each kernel offset of that axis,
 * three i32: the first and end diffDst position whose window stays inside src, and the src
 * coordinate of position 0 (k·dilation − padBegin).
 */
export function runTask(job: usize, task: i32): void {
  const at = <usize>load<i32>(job, JOB_TASKS) + <usize>(task * TASK_BYTES);
  const sums = <usize>load<i32>(at, TASK_SUMS);
  const unitFirst = load<i32>(at, TASK_UNIT_FIRST);
  const unitEnd = load<i32>(at, TASK_UNIT_END);
  const rowFirst = load<i32>(at, TASK_ROW_FIRST);
  const rowEnd = load<i32>(at, TASK_ROW_END);
  const rowsPerSample = load<i32>(job, JOB_DST_DEPTH) *
      ((load<i32>(job, JOB_DST_HEIGHT) + load<i32>(job, JOB_BLOCK_ROWS) - 1) / load<i32>(job, JOB_BLOCK_ROWS));
  const srcSampleBytes = <usize>load<i32>(job, JOB_SRC_SAMPLE_BYTES);
  const dstSampleBytes = <usize>load<i32>(job, JOB_DST_SAMPLE_BYTES);
  const flags = load<i32>(at, TASK_FLAGS);
  if (flags & TASK_ZEROES) eachUnit(job, sums, unitFirst, unitEnd, false);
  let row = rowFirst;
  while (row < rowEnd) {
    const n = row / rowsPerSample;
    const first = row - n * rowsPerSample;
    const end = min(rowsPerSample, first + rowEnd - row);
    accumulateRows(
        job, <usize>load<i32>(job, JOB_SRC) + <usize>n * srcSampleBytes,
        <usize>load<i32>(job, JOB_DIFF_DST) + <usize>n * dstSampleBytes, sums, first, end, unitFirst, unitEnd);
    row += end - first;
  }
  if (flags & TASK_STORES) eachUnit(job, sums, unitFirst, unitEnd, true);
}

/** Writes the sums of output units [unitFirst, unitEnd) into the job's filter (see eachUnit). */
export function storeUnits(job: usize, acc: usize, unitFirst: i32, unitEnd: i32): void {
  eachUnit(job, acc, unitFirst, unitEnd, true);
}

/**
 * `toFilter`: writes the float64 sums `acc` of output units [unitFirst, unitEnd) (numbered as in
 * runTask) into the job's float32 filter, each rounded to the nearest float32, at the filter's
 * own strides; the padding channels and lanes of the packed layout are not written. Every filter
 * element belongs to exactly one unit, so tasks storing disjoint units write disjoint elements.
 * Otherwise: sets those units' sums to zero, padding included.
 */
// @ts-ignore: decorator
@inline function eachUnit(job: usize, acc: usize, unitFirst: i32, unitEnd: i32, toFilter: bool): void {
  const depthwise = load<i32>(job, JOB_DEPTHWISE) != 0;
  const groups = load<i32>(job, JOB_GROUPS);
  const vectorChannels = load<i32>(job, JOB_VECTOR_CHANNELS);
  const broadcastChannels = load<i32>(job, JOB_BROADCAST_CHANNELS);
  const kernelHeight = load<i32>(job, JOB_KERNEL_HEIGHT);
  const kernelWidth = load<i32>(job, JOB_KERNEL_WIDTH);
  const kernelVolume = load<i32>(job, JOB_KERNEL_DEPTH) * kernelHeight * kernelWidth;
  const filter = <usize>load<i32>(job, JOB_FILTER);
  const groupStride = load<i32>(job, JOB_FILTER_GROUP);
  const vectorStride = <usize>load<i32>(job, JOB_FILTER_VECTOR) * F32;
  const broadcastStride = <usize>load<i32>(job, JOB_FILTER_BROADCAST) * F32;
  const depthStride = load<i32>(job, JOB_FILTER_DEPTH);
  const heightStride = load<i32>(job, JOB_FILTER_HEIGHT);
  const widthStride = load<i32>(job, JOB_FILTER_WIDTH);
  const vectorPerGroup = load<i32>(job, JOB_VECTOR_PER_GROUP);
  const filterGroups = load<i32>(job, JOB_FILTER_GROUPS);
  const vectorTiles = (vectorChannels + 7) / 8;
  const broadcastChunks = max(1, broadcastChannels / 4);
  const unitsPerOffset = depthwise ? groups / 4 : groups * vectorTiles * broadcastChunks;
  for (let unit = unitFirst; unit < unitEnd; unit++) {
    const k = unit / unitsPerOffset;
    const kw = k % kernelWidth;
    const kh = (k / kernelWidth) % kernelHeight;
    const kd = k / (kernelWidth * kernelHeight);
    const offset = kd * depthStride + kh * heightStride + kw * widthStride;
    let rest = unit - k * unitsPerOffset;
    if (depthwise) {
      if (!toFilter) {
        v128.store(acc + <usize>((k * groups + rest * 4) * F64), f64x2.splat(0));
        v128.store(acc + <usize>((k * groups + rest * 4) * F64), f64x2.splat(0), 16);
        continue;
      }
      const laneEnd = min(filterGroups, rest * 4 + 4);
      for (let g = rest * 4; g < laneEnd; g++) {
        store<f32>(filter + <usize>((g * groupStride + offset) * F32), <f32>load<f64>(acc + <usize>((k * groups + g) * F64)));
      }
      continue;
    }
    const unitsPerGroup = vectorTiles * broadcastChunks;
    const g = rest / unitsPerGroup;
    rest -= g * unitsPerGroup;
    const vectorTile = rest / broadcastChunks;
    const chunk = rest - vectorTile * broadcastChunks;
    const vFirst = vectorTile * 8;
    const bFirst = chunk * 4;
    const bEnd = chunk == broadcastChunks - 1 ? broadcastChannels : bFirst + 4;
    const sums = acc + <usize>((g * kernelVolume + k) * broadcastChannels * vectorChannels) * F64;
    if (!toFilter) {
      // 8 or, in the last tile, 4 vector channels: 2 or 4 pairs of float64.
      const pairs = min(vectorChannels - vFirst, 8) / 2;
      for (let b = bFirst; b < bEnd; b++) {
        const from = sums + <usize>(b * vectorChannels + vFirst) * F64;
        for (let pair = 0; pair < pairs; pair++) v128.store(from + <usize>(pair * 16), f64x2.splat(0));
      }
      continue;
    }
    const vEnd = min(vectorPerGroup, vFirst + 8);
    const values = filter + <usize>(g * groupStride + offset) * F32;
    for (let b = bFirst; b < bEnd; b++) {
      let from = sums + <usize>(b * vectorChannels + vFirst) * F64;
      let to = values + <usize>b * broadcastStride + <usize>vFirst * vectorStride;
      for (let v = vFirst; v < vEnd; v++) {
        store<f32>(to, <f32>load<f64>(from));
        from += F64;
        to += vectorStride;
      }
    }
  }
}

/** One sample's reduction rows [rowFirst, rowEnd) for the output units [unitFirst, unitEnd). */
function accumulateRows(
    job: usize, src: usize, diffDst: usize, acc: usize, rowFirst: i32, rowEnd: i32, unitFirst: i32,
    unitEnd: i32): void {
  const ranges = <usize>load<i32>(job, JOB_RANGES);
  const depthwise = load<i32>(job, JOB_DEPTHWISE) != 0;
  const srcIsVector = load<i32>(job, JOB_SRC_IS_VECTOR) != 0;
  const groups = load<i32>(job, JOB_GROUPS);
  const vectorChannels = load<i32>(job, JOB_VECTOR_CHANNELS);
  const broadcastChannels = load<i32>(job, JOB_BROADCAST_CHANNELS);
  const srcHeight = load<i32>(job, JOB_SRC_HEIGHT);
  const srcWidth = load<i32>(job, JOB_SRC_WIDTH);
  const dstHeight = load<i32>(job, JOB_DST_HEIGHT);
  const dstWidth = load<i32>(job, JOB_DST_WIDTH);
  const kernelDepth = load<i32>(job, JOB_KERNEL_DEPTH);
  const kernelHeight = load<i32>(job, JOB_KERNEL_HEIGHT);
  const kernelWidth = load<i32>(job, JOB_KERNEL_WIDTH);
  const strideDepth = load<i32>(job, JOB_STRIDE_DEPTH);
  const strideHeight = load<i32>(job, JOB_STRIDE_HEIGHT);
  const strideWidth = load<i32>(job, JOB_STRIDE_WIDTH);
  const blockRows = load<i32>(job, JOB_BLOCK_ROWS);
  const blockColumns = load<i32>(job, JOB_BLOCK_COLUMNS);
  const rangesH = ranges + <usize>(kernelDepth * 3 * 4);
  const rangesW = rangesH + <usize>(kernelHeight * 3 * 4);
  const kernelVolume = kernelDepth * kernelHeight * kernelWidth;
  const vectorTiles = (vectorChannels + 7) / 8;
  const broadcastChunks = max(1, broadcastChannels / 4);
  const unitsPerOffset = depthwise ? groups / 4 : groups * vectorTiles * broadcastChunks;
  const heightBlocks = (dstHeight + blockRows - 1) / blockRows;
  // Channels per position of each packed tensor.
  const vectorRow = groups * vectorChannels;
  const broadcastRow = depthwise ? vectorRow : groups * broadcastChannels;
  const srcRow = srcIsVector ? vectorRow : broadcastRow;
  const dstRow = srcIsVector ? broadcastRow : vectorRow;
  const srcStepW = <usize>(strideWidth * srcRow * F32);
  const srcStepH = <usize>(strideHeight * srcWidth * srcRow * F32);
  const dstStepW = <usize>(dstRow * F32);
  const dstStepH = <usize>(dstWidth * dstRow * F32);
  for (let row = rowFirst; row < rowEnd; row++) {
    const pd = row / heightBlocks;
    const h0 = (row - pd * heightBlocks) * blockRows;
    const h1 = min(dstHeight, h0 + blockRows);
    for (let w0 = 0; w0 < dstWidth; w0 += blockColumns) {
      const w1 = min(dstWidth, w0 + blockColumns);
      for (let kd = 0; kd < kernelDepth; kd++) {
        const rd = ranges + <usize>(kd * 12);
        if (pd < load<i32>(rd) || pd >= load<i32>(rd, 4)) continue;
        const sd = pd * strideDepth + load<i32>(rd, 8);
        for (let kh = 0; kh < kernelHeight; kh++) {
          const rh = rangesH + <usize>(kh * 12);
          const hLo = max(h0, load<i32>(rh));
          const hHi = min(h1, load<i32>(rh, 4));
          if (hLo >= hHi) continue;
          for (let kw = 0; kw < kernelWidth; kw++) {
            const k = (kd * kernelHeight + kh) * kernelWidth + kw;
            const unitLo = max(unitFirst, k * unitsPerOffset) - k * unitsPerOffset;
            const unitHi = min(unitEnd, (k + 1) * unitsPerOffset) - k * unitsPerOffset;
            if (unitLo >= unitHi) continue;
            const rw = rangesW + <usize>(kw * 12);
            const wLo = max(w0, load<i32>(rw));
            const wHi = min(w1, load<i32>(rw, 4));
            if (wLo >= wHi) continue;
            const srcPosition = (sd * srcHeight + hLo * strideHeight + load<i32>(rh, 8)) * srcWidth +
                wLo * strideWidth + load<i32>(rw, 8);
            const dstPosition = (pd * dstHeight + hLo) * dstWidth + wLo;
            const srcAt = src + <usize>(srcPosition * srcRow * F32);
            const dstAt = diffDst + <usize>(dstPosition * dstRow * F32);
            const rows = hHi - hLo;
            const columns = wHi - wLo;
            if (depthwise) {
              sweepDepthwise(
                  srcAt, srcStepW, srcStepH, dstAt, dstStepW, dstStepH, rows, columns, unitLo * 4, unitHi * 4,
                  acc + <usize>(k * vectorRow * F64));
              continue;
            }
            // Units [unitLo, unitHi) of this offset: a run of broadcast chunks per (group, vector tile).
            const unitsPerGroup = vectorTiles * broadcastChunks;
            let g = unitLo / unitsPerGroup;
            let vectorTile = (unitLo - g * unitsPerGroup) / broadcastChunks;
            let chunk = unitLo - g * unitsPerGroup - vectorTile * broadcastChunks;
            let unit = unitLo;
            while (unit < unitHi) {
              const chunkEnd = min(broadcastChunks, chunk + unitHi - unit);
              const vectorAt = srcIsVector ? srcAt + <usize>(g * vectorChannels * F32) :
                                             dstAt + <usize>(g * vectorChannels * F32);
              const broadcastAt = srcIsVector ? dstAt + <usize>(g * broadcastChannels * F32) :
                                                srcAt + <usize>(g * broadcastChannels * F32);
              sweepDense(
                  vectorAt, srcIsVector ? srcStepW : dstStepW, srcIsVector ? srcStepH : dstStepH, broadcastAt,
                  srcIsVector ? dstStepW : srcStepW, srcIsVector ? dstStepH : srcStepH, rows, columns,
                  vectorChannels, broadcastChannels, vectorTile * 8, chunk * 4,
                  chunkEnd == broadcastChunks ? broadcastChannels : chunkEnd * 4,
                  acc + <usize>((g * kernelVolume + k) * broadcastChannels * vectorChannels * F64));
              unit += chunkEnd - chunk;
              chunk = 0;
              if (++vectorTile == vectorTiles) {
                vectorTile = 0;
                g++;
              }
            }
          }
        }
      }
    }
  }
}

/**
 * One vector tile (8 channels from `vt`, or the last 4) against broadcast channels
 * [bFirst, bEnd) of one group over one block: 8×4 or 4×4 tiles, then single broadcast scalars.
 */
function sweepDense(
    v: usize, vStepW: usize, vStepH: usize, b: usize, bStepW: usize, bStepH: usize, rows: i32, columns: i32,
    vectorChannels: i32, broadcastChannels: i32, vt: i32, bFirst: i32, bEnd: i32, acc: usize): void {
  const accRow = <usize>(vectorChannels * F64);
  const wide = vt + 8 <= vectorChannels;
  const vAt = v + <usize>(vt * F32);
  let bt = bFirst;
  for (; bt + 4 <= bEnd; bt += 4) {
    const bAt = b + <usize>(bt * F32);
    const accAt = acc + <usize>(bt * vectorChannels + vt) * F64;
    if (wide) tile8x4(vAt, vStepW, vStepH, bAt, bStepW, bStepH, rows, columns, accAt, accRow);
    else tile4x4(vAt, vStepW, vStepH, bAt, bStepW, bStepH, rows, columns, accAt, accRow);
  }
  for (; bt < bEnd; bt++) {
    const bAt = b + <usize>(bt * F32);
    const accAt = acc + <usize>(bt * vectorChannels + vt) * F64;
    if (wide) tile8x1(vAt, vStepW, vStepH, bAt, bStepW, bStepH, rows, columns, accAt);
    else tile4x1(vAt, vStepW, vStepH, bAt, bStepW, bStepH, rows, columns, accAt);
  }
}

/**
 * sum + x·y in loops that keep four or more independent sums: the relaxed-SIMD build multiplies
 * and adds in one step where the CPU has FMA (one rounding, half the instructions).
 */
// @ts-ignore: decorator
@inline function madd(sum: v128, x: v128, y: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_madd(x, y, sum);
  return f32x4.add(sum, f32x4.mul(x, y));
}

/**
 * sum + x·y, a multiply then an add in every build, in loops of one or two sums: there each step
 * waits for the sum of the step before, and a fused multiply-add takes longer to give it (4
 * cycles on recent x86) than an add (3), while a separate multiply stays off that chain.
 */
// @ts-ignore: decorator
@inline function chainedMadd(sum: v128, x: v128, y: v128): v128 {
  return f32x4.add(sum, f32x4.mul(x, y));
}

/** acc[0..4) (float64) += the four lanes of `sum`. */
// @ts-ignore: decorator
@inline function flush(acc: usize, sum: v128): void {
  const low = f64x2.promote_low_f32x4(sum);
  const high = f64x2.promote_low_f32x4(v128.shuffle<f32>(sum, sum, 2, 3, 0, 1));
  v128.store(acc, f64x2.add(v128.load(acc), low));
  v128.store(acc, f64x2.add(v128.load(acc, 16), high), 16);
}

/** The hot loop: 8 vector channels × 4 broadcast channels, eight f32x4 sums in registers. */
function tile8x4(
    v: usize, vStepW: usize, vStepH: usize, b: usize, bStepW: usize, bStepH: usize, rows: i32, columns: i32,
    acc: usize, accRow: usize): void {
  let s00 = f32x4.splat(0), s01 = f32x4.splat(0), s10 = f32x4.splat(0), s11 = f32x4.splat(0);
  let s20 = f32x4.splat(0), s21 = f32x4.splat(0), s30 = f32x4.splat(0), s31 = f32x4.splat(0);
  for (let r = 0; r < rows; r++) {
    let vp = v + <usize>r * vStepH;
    let bp = b + <usize>r * bStepH;
    for (let c = 0; c < columns; c++) {
      const x0 = v128.load(vp);
      const x1 = v128.load(vp, 16);
      let y = v128.load32_splat(bp);
      s00 = madd(s00, x0, y); s01 = madd(s01, x1, y);
      y = v128.load32_splat(bp, 4);
      s10 = madd(s10, x0, y); s11 = madd(s11, x1, y);
      y = v128.load32_splat(bp, 8);
      s20 = madd(s20, x0, y); s21 = madd(s21, x1, y);
      y = v128.load32_splat(bp, 12);
      s30 = madd(s30, x0, y); s31 = madd(s31, x1, y);
      vp += vStepW;
      bp += bStepW;
    }
  }
  flush(acc, s00); flush(acc + 32, s01);
  flush(acc + accRow, s10); flush(acc + accRow + 32, s11);
  flush(acc + 2 * accRow, s20); flush(acc + 2 * accRow + 32, s21);
  flush(acc + 3 * accRow, s30); flush(acc + 3 * accRow + 32, s31);
}

function tile4x4(
    v: usize, vStepW: usize, vStepH: usize, b: usize, bStepW: usize, bStepH: usize, rows: i32, columns: i32,
    acc: usize, accRow: usize): void {
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
  for (let r = 0; r < rows; r++) {
    let vp = v + <usize>r * vStepH;
    let bp = b + <usize>r * bStepH;
    for (let c = 0; c < columns; c++) {
      const x = v128.load(vp);
      s0 = madd(s0, x, v128.load32_splat(bp));
      s1 = madd(s1, x, v128.load32_splat(bp, 4));
      s2 = madd(s2, x, v128.load32_splat(bp, 8));
      s3 = madd(s3, x, v128.load32_splat(bp, 12));
      vp += vStepW;
      bp += bStepW;
    }
  }
  flush(acc, s0); flush(acc + accRow, s1); flush(acc + 2 * accRow, s2); flush(acc + 3 * accRow, s3);
}

function tile8x1(
    v: usize, vStepW: usize, vStepH: usize, b: usize, bStepW: usize, bStepH: usize, rows: i32, columns: i32,
    acc: usize): void {
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0);
  for (let r = 0; r < rows; r++) {
    let vp = v + <usize>r * vStepH;
    let bp = b + <usize>r * bStepH;
    for (let c = 0; c < columns; c++) {
      const y = v128.load32_splat(bp);
      s0 = chainedMadd(s0, v128.load(vp), y);
      s1 = chainedMadd(s1, v128.load(vp, 16), y);
      vp += vStepW;
      bp += bStepW;
    }
  }
  flush(acc, s0); flush(acc + 32, s1);
}

function tile4x1(
    v: usize, vStepW: usize, vStepH: usize, b: usize, bStepW: usize, bStepH: usize, rows: i32, columns: i32,
    acc: usize): void {
  let s0 = f32x4.splat(0);
  for (let r = 0; r < rows; r++) {
    let vp = v + <usize>r * vStepH;
    let bp = b + <usize>r * bStepH;
    for (let c = 0; c < columns; c++) {
      s0 = chainedMadd(s0, v128.load(vp), v128.load32_splat(bp));
      vp += vStepW;
      bp += bStepW;
    }
  }
  flush(acc, s0);
}

/**
 * Depthwise: src and diffDst both hold `row` (groups rounded up to 4) channels per position and
 * lane g of a vector pairs src channel g with diffDst channel g; lanes [first, end) (multiples
 * of 4), 16 per pass, then 4.
 */
function sweepDepthwise(
    src: usize, srcStepW: usize, srcStepH: usize, dst: usize, dstStepW: usize, dstStepH: usize, rows: i32,
    columns: i32, first: i32, end: i32, acc: usize): void {
  let g = first;
  for (; g + 16 <= end; g += 16) {
    let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
    for (let r = 0; r < rows; r++) {
      let sp = src + <usize>(g * F32) + <usize>r * srcStepH;
      let dp = dst + <usize>(g * F32) + <usize>r * dstStepH;
      for (let c = 0; c < columns; c++) {
        s0 = madd(s0, v128.load(sp), v128.load(dp));
        s1 = madd(s1, v128.load(sp, 16), v128.load(dp, 16));
        s2 = madd(s2, v128.load(sp, 32), v128.load(dp, 32));
        s3 = madd(s3, v128.load(sp, 48), v128.load(dp, 48));
        sp += srcStepW;
        dp += dstStepW;
      }
    }
    const at = acc + <usize>(g * F64);
    flush(at, s0); flush(at + 32, s1); flush(at + 64, s2); flush(at + 96, s3);
  }
  // Which lanes a task's passes take depends on its units, which depend on the thread count:
  // so every lane adds the way the 16-lane pass does (madd), for the same bits on 1 or N threads.
  for (; g < end; g += 4) {
    let s0 = f32x4.splat(0);
    for (let r = 0; r < rows; r++) {
      let sp = src + <usize>(g * F32) + <usize>r * srcStepH;
      let dp = dst + <usize>(g * F32) + <usize>r * dstStepH;
      for (let c = 0; c < columns; c++) {
        s0 = madd(s0, v128.load(sp), v128.load(dp));
        sp += srcStepW;
        dp += dstStepW;
      }
    }
    flush(acc + <usize>(g * F64), s0);
  }
}

/** Where JavaScript may start placing data (after this module's static data). */
export function heapBase(): usize {
  return __heap_base;
}

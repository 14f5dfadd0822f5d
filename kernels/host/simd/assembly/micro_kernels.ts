// AssemblyScript source of the WebAssembly SIMD path of the cpu and wasm kernels, compiled by
// scripts/build_wasm.mjs into micro_kernels_wasm.generated.ts (embedded bytes, no loader).
//
// JavaScript (../simd_filter_gradient.ts) copies one sample of src and diffDst into this
// module's memory channels-last, with each group's channels contiguous, and calls
// accumulateSample once per sample. The filter gradient is then, for each group g and kernel
// offset k, a small matrix product over the positions p:
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

const F32 = 4;
const F64 = 8;

/**
 * Accumulates one sample. `ranges` holds, for the axes D, H, W in turn and each kernel offset k
 * of that axis, three i32: the first and end diffDst position whose window stays inside src,
 * and the src coordinate of position 0 (k·dilation − padBegin).
 */
export function accumulateSample(
    src: usize, diffDst: usize, acc: usize, ranges: usize, depthwise: bool, srcIsVector: bool, groups: i32,
    vectorChannels: i32, broadcastChannels: i32, srcHeight: i32, srcWidth: i32, dstDepth: i32, dstHeight: i32,
    dstWidth: i32, kernelDepth: i32, kernelHeight: i32, kernelWidth: i32, strideDepth: i32, strideHeight: i32,
    strideWidth: i32, blockRows: i32, blockColumns: i32): void {
  const rangesH = ranges + <usize>(kernelDepth * 3 * 4);
  const rangesW = rangesH + <usize>(kernelHeight * 3 * 4);
  const kernelVolume = kernelDepth * kernelHeight * kernelWidth;
  // Channels per position of each packed tensor.
  const vectorRow = groups * vectorChannels;
  const broadcastRow = depthwise ? vectorRow : groups * broadcastChannels;
  const srcRow = srcIsVector ? vectorRow : broadcastRow;
  const dstRow = srcIsVector ? broadcastRow : vectorRow;
  const srcStepW = <usize>(strideWidth * srcRow * F32);
  const srcStepH = <usize>(strideHeight * srcWidth * srcRow * F32);
  const dstStepW = <usize>(dstRow * F32);
  const dstStepH = <usize>(dstWidth * dstRow * F32);
  for (let pd = 0; pd < dstDepth; pd++) {
    for (let h0 = 0; h0 < dstHeight; h0 += blockRows) {
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
              const rw = rangesW + <usize>(kw * 12);
              const wLo = max(w0, load<i32>(rw));
              const wHi = min(w1, load<i32>(rw, 4));
              if (wLo >= wHi) continue;
              const k = (kd * kernelHeight + kh) * kernelWidth + kw;
              const srcPosition = (sd * srcHeight + hLo * strideHeight + load<i32>(rh, 8)) * srcWidth +
                  wLo * strideWidth + load<i32>(rw, 8);
              const dstPosition = (pd * dstHeight + hLo) * dstWidth + wLo;
              const srcAt = src + <usize>(srcPosition * srcRow * F32);
              const dstAt = diffDst + <usize>(dstPosition * dstRow * F32);
              const rows = hHi - hLo;
              const columns = wHi - wLo;
              if (depthwise) {
                sweepDepthwise(
                    srcAt, srcStepW, srcStepH, dstAt, dstStepW, dstStepH, rows, columns, vectorRow,
                    acc + <usize>(k * vectorRow * F64));
                continue;
              }
              for (let g = 0; g < groups; g++) {
                const vectorAt = srcIsVector ? srcAt + <usize>(g * vectorChannels * F32) :
                                               dstAt + <usize>(g * vectorChannels * F32);
                const broadcastAt = srcIsVector ? dstAt + <usize>(g * broadcastChannels * F32) :
                                                  srcAt + <usize>(g * broadcastChannels * F32);
                sweepDense(
                    vectorAt, srcIsVector ? srcStepW : dstStepW, srcIsVector ? srcStepH : dstStepH, broadcastAt,
                    srcIsVector ? dstStepW : srcStepW, srcIsVector ? dstStepH : srcStepH, rows, columns,
                    vectorChannels, broadcastChannels,
                    acc + <usize>((g * kernelVolume + k) * broadcastChannels * vectorChannels * F64));
              }
            }
          }
        }
      }
    }
  }
}

/**
 * All (vector tile × broadcast tile) pairs of one group over one block: 8×4 tiles, with
 * 4-wide (vectorChannels is a multiple of 4, not always of 8) and single-scalar edges.
 */
function sweepDense(
    v: usize, vStepW: usize, vStepH: usize, b: usize, bStepW: usize, bStepH: usize, rows: i32, columns: i32,
    vectorChannels: i32, broadcastChannels: i32, acc: usize): void {
  const accRow = <usize>(vectorChannels * F64);
  for (let vt = 0; vt < vectorChannels; vt += 8) {
    const wide = vt + 8 <= vectorChannels;
    const vAt = v + <usize>(vt * F32);
    let bt = 0;
    for (; bt + 4 <= broadcastChannels; bt += 4) {
      const bAt = b + <usize>(bt * F32);
      const accAt = acc + <usize>(bt * vectorChannels + vt) * F64;
      if (wide) tile8x4(vAt, vStepW, vStepH, bAt, bStepW, bStepH, rows, columns, accAt, accRow);
      else tile4x4(vAt, vStepW, vStepH, bAt, bStepW, bStepH, rows, columns, accAt, accRow);
    }
    for (; bt < broadcastChannels; bt++) {
      const bAt = b + <usize>(bt * F32);
      const accAt = acc + <usize>(bt * vectorChannels + vt) * F64;
      if (wide) tile8x1(vAt, vStepW, vStepH, bAt, bStepW, bStepH, rows, columns, accAt);
      else tile4x1(vAt, vStepW, vStepH, bAt, bStepW, bStepH, rows, columns, accAt);
    }
  }
}

// @ts-ignore: decorator
@inline function madd(sum: v128, x: v128, y: v128): v128 {
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
      s0 = madd(s0, v128.load(vp), y);
      s1 = madd(s1, v128.load(vp, 16), y);
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
      s0 = madd(s0, v128.load(vp), v128.load32_splat(bp));
      vp += vStepW;
      bp += bStepW;
    }
  }
  flush(acc, s0);
}

/**
 * Depthwise: src and diffDst both hold `row` (groups rounded up to 4) channels per position and
 * lane g of a vector pairs src channel g with diffDst channel g; 16 channels per pass, then 4.
 */
function sweepDepthwise(
    src: usize, srcStepW: usize, srcStepH: usize, dst: usize, dstStepW: usize, dstStepH: usize, rows: i32,
    columns: i32, row: i32, acc: usize): void {
  let g = 0;
  for (; g + 16 <= row; g += 16) {
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
  for (; g < row; g += 4) {
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

import type {FilterGradientGeometry} from '../geometry';

/**
 * How the composite kernel splits one call into chunks whose intermediates stay under a memory
 * budget. A chunk is a range of samples and a range of rows of diffDst's outermost spatial axis
 * (all rows unless one sample alone is over budget). Pure arithmetic on the geometry.
 */
export interface CompositeChunk {
  readonly batchBegin: number;
  readonly batchSize: number;
  /** Rows of diffDst's outermost spatial axis (the positions p along it). */
  readonly rowBegin: number;
  readonly rowCount: number;
}

export interface CompositePlan {
  readonly chunks: readonly CompositeChunk[];
  /** Samples per chunk (the last may have fewer); 1 when rows are split. */
  readonly samplesPerChunk: number;
  /** Rows per chunk (the last may have fewer); all rows unless one sample is over budget. */
  readonly rowsPerChunk: number;
  /** The estimate for a full chunk, in bytes; above the budget only when one row of one sample is. */
  readonly chunkBytes: number;
  readonly budgetBytes: number;
}

const BYTES = 4;  // float32 elements

/**
 * Upper bound on the bytes alive at once while one chunk of `samples` × `rows` is computed (see
 * filter_gradient_composite.ts): two copies of the chunk's src frame (its rows cropped and
 * padded to Q·s per axis; each step of the crop/pad/transpose chain frees the one before), the
 * K slices and the window matrix they are concatenated into (K × C_s per position, twice),
 * diffDst's rows and their transpose, and the matMul's result (one filter). It counts every
 * position and kernel offset; windowFrame keeps only those that read src, never more.
 */
export function estimateChunkBytes(geometry: FilterGradientGeometry, samples: number, rows: number): number {
  const kernelVolume = geometry.axes.reduce((v, a) => v * a.kernelSize, 1);
  const frame = geometry.axes.reduce((v, axis, a) => {
    const positions = a === 0 ? rows : axis.diffDstSize;
    return v * (positions + Math.floor(((axis.kernelSize - 1) * axis.dilation) / axis.stride)) * axis.stride;
  }, samples * geometry.src.channels);
  const positions = geometry.axes.reduce((v, axis, a) => v * (a === 0 ? rows : axis.diffDstSize), samples);
  const window = positions * kernelVolume * geometry.src.channels;
  const diffDst = positions * geometry.diffDst.channels;
  return BYTES * (2 * frame + 2 * window + 2 * diffDst + geometry.filterSize);
}

/**
 * The chunks of a call: as many samples per chunk as fit the budget; if one sample does not,
 * one sample at a time in as many rows as fit (at least one). Chunks are balanced in size.
 */
export function planChunks(geometry: FilterGradientGeometry, budgetBytes: number): CompositePlan {
  const batch = geometry.batch;
  const totalRows = geometry.axes[0].diffDstSize;
  let samples = 1;
  let rows = totalRows;
  if (estimateChunkBytes(geometry, 1, totalRows) <= budgetBytes) {
    // The estimate is affine in the number of samples: solve for the most that fit.
    const fixed = estimateChunkBytes(geometry, 0, totalRows);
    const perSample = estimateChunkBytes(geometry, 1, totalRows) - fixed;
    samples = balance(batch, Math.max(1, Math.min(batch, Math.floor((budgetBytes - fixed) / perSample))));
  } else {
    // One sample is over budget: the most rows that fit (monotone in rows), at least one.
    let low = 1;
    let high = totalRows;
    while (high - low > 1) {
      const middle = (low + high) >> 1;
      if (estimateChunkBytes(geometry, 1, middle) <= budgetBytes) low = middle;
      else high = middle;
    }
    rows = balance(totalRows, low);
  }
  const chunks: CompositeChunk[] = [];
  for (let batchBegin = 0; batchBegin < batch; batchBegin += samples) {
    const batchSize = Math.min(samples, batch - batchBegin);
    for (let rowBegin = 0; rowBegin < totalRows; rowBegin += rows) {
      chunks.push(Object.freeze({batchBegin, batchSize, rowBegin, rowCount: Math.min(rows, totalRows - rowBegin)}));
    }
  }
  return Object.freeze({
    chunks: Object.freeze(chunks),
    samplesPerChunk: samples,
    rowsPerChunk: rows,
    chunkBytes: estimateChunkBytes(geometry, samples, rows),
    budgetBytes,
  });
}

/** The piece size for `total` in as few pieces of at most `most` as possible: 9 by at most 4 → 3 (not 4, 4, 1). */
function balance(total: number, most: number): number {
  if (total === 0) return most;
  const pieces = Math.ceil(total / most);
  return Math.ceil(total / pieces);
}

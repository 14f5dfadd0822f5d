/**
 * The test oracle: DESIGN.md §2 transcribed as literally as possible, element by element in
 * float64, with its own attribute handling. It shares no code with the package, so a mistake
 * in the geometry or the kernels cannot hide in both.
 */
export interface Dense {
  shape: number[];
  values: ArrayLike<number>;
}

export interface ReferenceAttrs {
  strides: number[];
  padsBegin?: number[];
  padsEnd?: number[];
  dilations?: number[];
  autoPad?: string;
  groups?: number;
  dataFormat?: 'NXC' | 'NCX';
  filterFormat?: 'XIO' | 'OIX' | 'IOX' | 'XOI';
  outputPadding?: number[];
  /** Spatial sizes of the filter (the reference needs nothing else). */
  kernel: number[];
}

/** Reads x[n][c][pos…] whatever the data format. */
function reader(t: Dense, format: 'NXC' | 'NCX') {
  const r = t.shape.length - 2;
  const channels = format === 'NXC' ? t.shape[r + 1] : t.shape[1];
  const spatial = format === 'NXC' ? t.shape.slice(1, r + 1) : t.shape.slice(2);
  return {
    channels,
    spatial,
    at(n: number, c: number, pos: number[]): number {
      const order = format === 'NXC' ? [n, ...pos, c] : [n, c, ...pos];
      let index = 0;
      for (let axis = 0; axis < order.length; axis++) index = index * t.shape[axis] + order[axis];
      return t.values[index];
    },
  };
}

function* positions(shape: number[]): Generator<number[]> {
  const total = shape.reduce((a, b) => a * b, 1);
  for (let flat = 0; flat < total; flat++) {
    const pos = new Array<number>(shape.length);
    let rest = flat;
    for (let axis = shape.length - 1; axis >= 0; axis--) {
      pos[axis] = rest % shape[axis];
      rest = Math.floor(rest / shape[axis]);
    }
    yield pos;
  }
}

/** Explicit begin pads per DESIGN.md §2 (auto_pad included). */
export function referencePadsBegin(transposed: boolean, inputSpatial: number[], a: ReferenceAttrs): number[] {
  const autoPad = (a.autoPad ?? 'none').toLowerCase();
  const r = inputSpatial.length;
  if (autoPad === 'none') return a.padsBegin ?? new Array(r).fill(0);
  if (autoPad === 'valid') return new Array(r).fill(0);
  return inputSpatial.map((size, i) => {
    const s = a.strides[i];
    const d = a.dilations?.[i] ?? 1;
    const extent = d * (a.kernel[i] - 1) + 1;
    const outputPadding = a.outputPadding?.[i] ?? 0;
    const total = Math.max(0, transposed ? extent + outputPadding - s : (Math.ceil(size / s) - 1) * s + extent - size);
    return autoPad === 'same_upper' ? Math.floor(total / 2) : Math.ceil(total / 2);
  });
}

/**
 * dW of ConvolutionBackpropFilters (transposed = false) or ConvTransposeBackpropFilters, laid
 * out in a.filterFormat (XIO by default).
 */
export function referenceFilterGradient(
    transposed: boolean, input: Dense, outputDelta: Dense, a: ReferenceAttrs): {shape: number[]; values: Float64Array} {
  const format = a.dataFormat ?? 'NXC';
  const x = reader(input, format);
  const dy = reader(outputDelta, format);
  const r = x.spatial.length;
  const G = a.groups ?? 1;
  const C = x.channels;
  const O = dy.channels;
  const N = input.shape[0];
  const s = a.strides;
  const d = a.dilations ?? new Array(r).fill(1);
  const pb = referencePadsBegin(transposed, x.spatial, a);
  // Named filter axes: conv O = O, I = C/G; transposed O = O/G, I = C (DESIGN.md §2).
  const sizeOf = transposed ? {O: O / G, I: C} : {O, I: C / G};
  const letters = (a.filterFormat ?? 'XIO').replace('X', 'X'.repeat(r)).split('');
  const shape = letters.map((l, i) => l === 'X' ? a.kernel[letters.slice(0, i).filter(m => m === 'X').length] :
                                                   sizeOf[l as 'O' | 'I']);
  const values = new Float64Array(shape.reduce((p, q) => p * q, 1));
  const store = (o: number, i: number, k: number[], v: number) => {
    let index = 0;
    let spatial = 0;
    letters.forEach((l, axis) => {
      index = index * shape[axis] + (l === 'O' ? o : l === 'I' ? i : k[spatial++]);
    });
    values[index] = v;
  };
  for (let o = 0; o < sizeOf.O; o++) {
    for (let i = 0; i < sizeOf.I; i++) {
      for (const k of positions(a.kernel)) {
        let sum = 0;
        if (!transposed) {
          // dW[g·O/G + o][c][k] = Σ_n Σ_p outputDelta[n][g·O/G + o][p] · input[n][g·C/G + c][p·s − pb + k·d]
          const g = Math.floor(o / (O / G));
          for (let n = 0; n < N; n++) {
            for (const p of positions(dy.spatial)) {
              const at = p.map((pj, j) => pj * s[j] - pb[j] + k[j] * d[j]);
              if (at.some((v, j) => v < 0 || v >= x.spatial[j])) continue;
              sum += dy.at(n, o, p) * x.at(n, g * (C / G) + i, at);
            }
          }
        } else {
          // dW[o][g·C/G + c][k] = Σ_n Σ_i input[n][g·C/G + c][i] · outputDelta[n][g·O/G + o][i·s − pb + k·d]
          const g = Math.floor(i / (C / G));
          for (let n = 0; n < N; n++) {
            for (const p of positions(x.spatial)) {
              const at = p.map((pj, j) => pj * s[j] - pb[j] + k[j] * d[j]);
              if (at.some((v, j) => v < 0 || v >= dy.spatial[j])) continue;
              sum += x.at(n, i, p) * dy.at(n, g * (O / G) + o, at);
            }
          }
        }
        store(o, i, k, sum);
      }
    }
  }
  return {shape, values};
}

/** outputDelta's shape by the size formulas of DESIGN.md §2 (NXC or NCX as the attrs say). */
export function referenceOutputDeltaShape(
    transposed: boolean, inputShape: number[], outputDeltaChannels: number, a: ReferenceAttrs): number[] {
  const format = a.dataFormat ?? 'NXC';
  const r = inputShape.length - 2;
  const spatial = format === 'NXC' ? inputShape.slice(1, r + 1) : inputShape.slice(2);
  const pb = referencePadsBegin(transposed, spatial, a);
  const autoPad = (a.autoPad ?? 'none').toLowerCase();
  const out = spatial.map((size, i) => {
    const s = a.strides[i];
    const d = a.dilations?.[i] ?? 1;
    const extent = d * (a.kernel[i] - 1) + 1;
    const outputPadding = a.outputPadding?.[i] ?? 0;
    if (autoPad === 'same_upper' || autoPad === 'same_lower') {
      const total = Math.max(0, transposed ? extent + outputPadding - s : (Math.ceil(size / s) - 1) * s + extent - size);
      return transposed ? (size - 1) * s - total + extent + outputPadding :
                          Math.floor((size + total - extent) / s) + 1;
    }
    const pads = autoPad === 'valid' ? 0 : pb[i] + (a.padsEnd?.[i] ?? 0);
    return transposed ? (size - 1) * s - pads + extent + outputPadding : Math.floor((size + pads - extent) / s) + 1;
  });
  return format === 'NXC' ? [inputShape[0], ...out, outputDeltaChannels] : [inputShape[0], outputDeltaChannels, ...out];
}

/** The attributes of a call as the package takes them (filterShape full in filterFormat, or spatial). */
export interface CallAttrs extends Omit<ReferenceAttrs, 'kernel' | 'filterFormat'> {
  filterFormat?: string;
  filterShape?: number[];
}

/**
 * referenceFilterGradient for a call as the package takes it: the kernel's spatial sizes read
 * from `filterShapeInput` (the op's filterShape argument, which wins) or `attrs.filterShape`,
 * given whole in `attrs.filterFormat` (XIO by default; spatial axes first in XIO and XOI, last in
 * OIX and IOX) or as the spatial sizes alone. The values are the exact sums rounded once to
 * float32, as the op's float32 result holds them (a sum past float32's range is ±Infinity there).
 */
export function referenceForCall(
    transposed: boolean, input: Dense, outputDelta: Dense, attrs: CallAttrs,
    filterShapeInput?: number[]): {shape: number[]; values: Float32Array} {
  const r = input.shape.length - 2;
  const given = filterShapeInput ?? attrs.filterShape;
  if (given === undefined) throw new Error('referenceForCall: no filterShape');
  const format = (attrs.filterFormat ?? 'XIO') as NonNullable<ReferenceAttrs['filterFormat']>;
  const kernel = given.length === r ? given : format.startsWith('X') ? given.slice(0, r) : given.slice(given.length - r);
  const {shape, values} = referenceFilterGradient(transposed, input, outputDelta, {...attrs, filterFormat: format, kernel});
  return {shape, values: Float32Array.from(values)};
}

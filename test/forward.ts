/**
 * Forward convolutions in float64 for finite-difference checks, written from the definition
 * of the forward ops (not from the gradient formulas): the convolution gathers
 *   y[n][o][p] = Σ_c Σ_k x[n][g·C/G + c][p·s − pb + k·d] · W[o][c][k]
 * and the transposed convolution scatters every input element through the filter:
 *   y[n][g·O/G + o][i·s − pb + k·d] += x[n][g·C/G + c][i] · W[o][g·C/G + c][k].
 * Data is NCX, filters are OIX ((O, C/G, K…) and (O/G, C, K…) respectively).
 */
export interface ForwardProblem {
  batch: number;
  inputChannels: number;
  outputChannels: number;
  groups: number;
  inputSpatial: number[];
  outputSpatial: number[];
  kernel: number[];
  strides: number[];
  dilations: number[];
  padsBegin: number[];
}

function volume(shape: number[]) {
  return shape.reduce((a, b) => a * b, 1);
}

function flatIndex(shape: number[], index: number[]) {
  return index.reduce((flat, i, axis) => flat * shape[axis] + i, 0);
}

function* grid(shape: number[]): Generator<number[]> {
  for (let flat = 0; flat < volume(shape); flat++) {
    let rest = flat;
    const index = shape.map(() => 0);
    for (let axis = shape.length - 1; axis >= 0; axis--) {
      index[axis] = rest % shape[axis];
      rest = Math.floor(rest / shape[axis]);
    }
    yield index;
  }
}

export function forwardConvolution(p: ForwardProblem, x: ArrayLike<number>, w: ArrayLike<number>): Float64Array {
  const {batch: N, inputChannels: C, outputChannels: O, groups: G} = p;
  const y = new Float64Array(N * O * volume(p.outputSpatial));
  for (let n = 0; n < N; n++) {
    for (let o = 0; o < O; o++) {
      const g = Math.floor(o / (O / G));
      for (const pos of grid(p.outputSpatial)) {
        let sum = 0;
        for (let c = 0; c < C / G; c++) {
          for (const k of grid(p.kernel)) {
            const at = pos.map((v, j) => v * p.strides[j] - p.padsBegin[j] + k[j] * p.dilations[j]);
            if (at.some((v, j) => v < 0 || v >= p.inputSpatial[j])) continue;
            sum += x[flatIndex([N, C, ...p.inputSpatial], [n, g * (C / G) + c, ...at])] *
                w[flatIndex([O, C / G, ...p.kernel], [o, c, ...k])];
          }
        }
        y[flatIndex([N, O, ...p.outputSpatial], [n, o, ...pos])] = sum;
      }
    }
  }
  return y;
}

export function forwardTransposedConvolution(
    p: ForwardProblem, x: ArrayLike<number>, w: ArrayLike<number>): Float64Array {
  const {batch: N, inputChannels: C, outputChannels: O, groups: G} = p;
  const y = new Float64Array(N * O * volume(p.outputSpatial));
  for (let n = 0; n < N; n++) {
    for (let c = 0; c < C; c++) {
      const g = Math.floor(c / (C / G));
      for (const i of grid(p.inputSpatial)) {
        const value = x[flatIndex([N, C, ...p.inputSpatial], [n, c, ...i])];
        for (let o = 0; o < O / G; o++) {
          for (const k of grid(p.kernel)) {
            const at = i.map((v, j) => v * p.strides[j] - p.padsBegin[j] + k[j] * p.dilations[j]);
            if (at.some((v, j) => v < 0 || v >= p.outputSpatial[j])) continue;
            y[flatIndex([N, O, ...p.outputSpatial], [n, g * (O / G) + o, ...at])] +=
                value * w[flatIndex([O / G, C, ...p.kernel], [o, c, ...k])];
          }
        }
      }
    }
  }
  return y;
}

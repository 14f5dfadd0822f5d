import * as tf from '@tensorflow/tfjs-core';

import {computeGeometry, convolutionBackpropFilters, convTransposeBackpropFilters} from '../kernels/index';
import {withoutLeaks} from './helpers/util';

/** Small problems whose gradients are worked out by hand in the comments. */
describe('hand-worked gradients', () => {
  function gradient(call: () => tf.Tensor): {shape: number[]; values: number[]} {
    const result = withoutLeaks(call, 1);
    const out = {shape: result.shape, values: Array.from(result.dataSync())};
    result.dispose();
    return out;
  }

  it('1-D: dW[k] = Σ_p dy[p]·x[p + k]', () => {
    // x = 1 2 3 4, dy = 1 1 1: dW[0] = 1+2+3 = 6, dW[1] = 2+3+4 = 9.
    expect(gradient(() => convolutionBackpropFilters([[[1], [2], [3], [4]]], [[[1], [1], [1]]], {
      strides: [1], filterShape: [2],
    }))).toEqual({shape: [2, 1, 1], values: [6, 9]});
  });

  it('1-D dilation 3: the window taps x[p], x[p + 3]', () => {
    // x = 1..6, K = 2, d = 3 → 3 outputs; dy = 1 2 3: dW[0] = 1·1+2·2+3·3 = 14, dW[1] = 1·4+2·5+3·6 = 32.
    expect(gradient(() => convolutionBackpropFilters([[[1], [2], [3], [4], [5], [6]]], [[[1], [2], [3]]], {
      strides: [1], dilations: [3], filterShape: [2],
    }))).toEqual({shape: [2, 1, 1], values: [14, 32]});
  });

  it('2-D stride 2 with a begin pad: only in-range taps count', () => {
    // x = 1..9 in 3×3, K 2×2, s 2, pads begin 1 end 0 → 2×2 outputs; dy = [[1,0],[0,1]].
    // dy(0,0) reaches x only at k = (1,1): x(0,0) = 1. dy(1,1) sees x(1..2, 1..2) = 5 6 8 9.
    // dW = [[5, 6], [8, 9 + 1]].
    const x = tf.tensor4d([1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 3, 3, 1]);
    const dy = tf.tensor4d([1, 0, 0, 1], [1, 2, 2, 1]);
    expect(gradient(() => convolutionBackpropFilters(x, dy, {
      strides: [2, 2], padsBegin: [1, 1], padsEnd: [0, 0], filterShape: [2, 2],
    }))).toEqual({shape: [2, 2, 1, 1], values: [5, 6, 8, 10]});
    tf.dispose([x, dy]);
  });

  it('groups: each output channel sees only its own group of inputs', () => {
    // C = O = G = 2, K = 1. x channels c0 = 1 2, c1 = 3 4; dy channels o0 = 1 1, o1 = 2 0.
    // dW[o0] = Σ dy_o0·x_c0 = 3; dW[o1] = Σ dy_o1·x_c1 = 6. OIX shape (2, 1, 1).
    expect(gradient(() => convolutionBackpropFilters([[[1, 3], [2, 4]]], [[[1, 2], [1, 0]]], {
      strides: [1], groups: 2, filterFormat: 'OIX', filterShape: [1],
    }))).toEqual({shape: [2, 1, 1], values: [3, 6]});
  });

  it('NCX input and OIX output read and write the same numbers as NXC/XIO', () => {
    // Two input channels, one output channel, K = 1: dW[0][c] = Σ_p dy[p]·x_c[p].
    // x_c0 = 1 2, x_c1 = 3 4, dy = 1 10: dW = [21, 43].
    expect(gradient(() => convolutionBackpropFilters([[[1, 2], [3, 4]]], [[[1, 10]]], {
      strides: [1], dataFormat: 'NCX', filterFormat: 'OIX', filterShape: [1, 2, 1],
    }))).toEqual({shape: [1, 2, 1], values: [21, 43]});
  });

  it('same_upper puts the odd pad at the end, same_lower at the beginning', () => {
    // x = 1 2 3 4, K = 2, s = 1: total pad 1. dy = 1 1 1 1.
    // same_upper (0, 1): dW = [1+2+3+4, 2+3+4] = [10, 9]; same_lower (1, 0): dW = [1+2+3, 1+2+3+4] = [6, 10].
    const x = [[[1], [2], [3], [4]]];
    const dy = [[[1], [1], [1], [1]]];
    expect(gradient(() => convolutionBackpropFilters(x, dy, {strides: [1], autoPad: 'same_upper', filterShape: [2]}))
               .values)
        .toEqual([10, 9]);
    expect(gradient(() => convolutionBackpropFilters(x, dy, {strides: [1], autoPad: 'SAME_LOWER', filterShape: [2]}))
               .values)
        .toEqual([6, 10]);
  });

  it('transposed 1-D: dW[k] = Σ_i input[i]·dy[i·s + k]', () => {
    // input = 1 2, s = 2, K = 3 → output size (2−1)·2 + 3 = 5; dy = 1 2 3 4 5.
    // dW = [1·1 + 2·3, 1·2 + 2·4, 1·3 + 2·5] = [7, 10, 13].
    expect(gradient(() => convTransposeBackpropFilters([[[1], [2]]], [[[1], [2], [3], [4], [5]]], {
      strides: [2], filterShape: [3],
    }))).toEqual({shape: [3, 1, 1], values: [7, 10, 13]});
  });

  it('transposed groups: filter OIX is (O/G, C, K) with C spanning the groups', () => {
    // C = 2, O = 2, G = 2, K = 1, s = 1. input channels 1 2 | 3 4 (N=1, 2 positions), dy o0 = 1 1, o1 = 1 −1.
    // dW[0][c0] = Σ in_c0·dy_o0 = 1+2 = 3 (group 0); dW[0][c1] = Σ in_c1·dy_o1 = 3−4 = −1 (group 1).
    expect(gradient(() => convTransposeBackpropFilters([[[1, 3], [2, 4]]], [[[1, 1], [1, -1]]], {
      strides: [1], groups: 2, filterFormat: 'OIX', filterShape: [1],
    }))).toEqual({shape: [1, 2, 1], values: [3, -1]});
  });

  it('a batch of 0 gives a zero gradient of the right shape', () => {
    const x = tf.zeros([0, 5, 5, 2]);
    const dy = tf.zeros([0, 3, 3, 4]);
    expect(gradient(() => convolutionBackpropFilters(x, dy, {strides: [1, 1], filterShape: [3, 3]})))
        .toEqual({shape: [3, 3, 2, 4], values: new Array(72).fill(0)});
    tf.dispose([x, dy]);
  });

  it('the geometry is frozen, with the roles swapped for the transposed op', () => {
    const geometry = computeGeometry(
        'ConvTransposeBackpropFilters', {
          input: {shape: [2, 3, 4], dtype: 'float32'},
          outputDelta: {shape: [2, 7, 6], dtype: 'float32'},
        },
        {strides: [2], filterShape: [3], groups: 2, padsEnd: [1], outputPadding: [1]});
    expect(Object.isFrozen(geometry)).toBe(true);
    expect(Object.isFrozen(geometry.axes[0])).toBe(true);
    expect(geometry.src.name).toBe('outputDelta');
    expect(geometry.diffDst.name).toBe('input');
    expect(geometry.filterShape).toEqual([3, 4, 3]);
    expect(geometry.flops).toBe(2 * 2 * 4 * 3 * 3 * 3);
  });
});

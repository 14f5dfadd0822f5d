import type {ConvolutionBackpropFiltersAttrs} from '../../src/attributes';

/**
 * Problems shaped to reach every WebAssembly SIMD micro-kernel (8×4, 4×4, 8×1 and
 * 4×1 tiles, 16- and 4-lane depthwise), both choices of the vector side, several blocks of
 * positions per row and per image, and every packing (NXC as is, NCX, padded groups).
 */
export interface SimdProblem {
  name: string;
  op: 'conv'|'transposed';
  input: number[];
  outputDelta: number[];
  attrs: ConvolutionBackpropFiltersAttrs;
}

export const SIMD_PROBLEMS: readonly SimdProblem[] = [
  {
    name: '2-D NXC 12→7, 20×70 (8×4, 4×4, 8×1, 4×1 tiles; several row blocks)',
    op: 'conv', input: [2, 20, 70, 12], outputDelta: [2, 20, 70, 7],
    attrs: {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]},
  },
  {
    name: '2-D NXC 128→128, 5×60 (several column blocks per row)',
    op: 'conv', input: [1, 5, 60, 128], outputDelta: [1, 5, 60, 128],
    attrs: {strides: [1, 1], padsBegin: [0, 1], padsEnd: [0, 1], filterShape: [1, 3]},
  },
  {
    name: '2-D NCX OIX, groups 2 of 3→9 (vector side = outputDelta), stride 2, dilation 2, asymmetric pads',
    op: 'conv', input: [2, 6, 17, 15], outputDelta: [2, 18, 8, 6],
    attrs: {
      strides: [2, 2], dilations: [2, 2], padsBegin: [2, 1], padsEnd: [1, 0], groups: 2, dataFormat: 'NCX',
      filterFormat: 'OIX', filterShape: [3, 3],
    },
  },
  {
    name: 'depthwise NXC, 21 channels (16 + 4 + padded lanes), stride 2, dilation 2',
    op: 'conv', input: [3, 15, 16, 21], outputDelta: [3, 7, 7, 21],
    attrs: {strides: [2, 2], dilations: [2, 2], padsBegin: [1, 2], padsEnd: [1, 0], groups: 21, filterShape: [3, 3]},
  },
  {
    name: 'depthwise NCX, channel multiplier 3',
    op: 'conv', input: [2, 5, 9, 9], outputDelta: [2, 15, 9, 9],
    attrs: {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], groups: 5, dataFormat: 'NCX', filterShape: [3, 3]},
  },
  {
    name: '1-D, 3000 positions (many column blocks)',
    op: 'conv', input: [2, 3000, 4], outputDelta: [2, 2996, 5],
    attrs: {strides: [1], padsBegin: [0], padsEnd: [0], filterShape: [5]},
  },
  {
    name: '3-D NCX, stride 3 beyond the kernel, pads beyond the kernel',
    op: 'conv', input: [1, 9, 7, 8, 10], outputDelta: [1, 11, 6, 7, 5],
    attrs: {
      strides: [2, 2, 3], padsBegin: [3, 3, 3], padsEnd: [3, 3, 3], dataFormat: 'NCX', filterFormat: 'OIX',
      filterShape: [2, 2, 2],
    },
  },
  {
    name: 'transposed 2-D, groups 4, output padding shape',
    op: 'transposed', input: [2, 6, 6, 8], outputDelta: [2, 12, 12, 12],
    attrs: {strides: [2, 2], padsBegin: [1, 1], padsEnd: [0, 0], groups: 4, filterShape: [3, 3]},
  },
];

/**
 * Problems past the case table for the 1-vs-N-threads bitwise specs (Node and browser): the SIMD
 * problems and layers with many units, few units, depthwise, 3-D.
 */
export const THREAD_LAYERS: readonly SimdProblem[] = [
  ...SIMD_PROBLEMS,
  {
    name: 'ResNet-like 3×3 64→64 at 28×28, batch 2',
    op: 'conv', input: [2, 28, 28, 64], outputDelta: [2, 28, 28, 64],
    attrs: {strides: [1, 1], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [3, 3]},
  },
  {
    name: 'depthwise 3×3 of 40 channels at 30×30, stride 2',
    op: 'conv', input: [2, 30, 30, 40], outputDelta: [2, 15, 15, 40],
    attrs: {strides: [2, 2], padsBegin: [1, 1], padsEnd: [0, 0], groups: 40, filterShape: [3, 3]},
  },
  {
    name: 'one output unit (1×1, 2→3): the reduction in slices',
    op: 'conv', input: [3, 40, 40, 2], outputDelta: [3, 40, 40, 3],
    attrs: {strides: [1, 1], filterShape: [1, 1]},
  },
  {
    name: 'three output units (1×1, 24→3): 22 rows in 6 slices and 16 steps, steps crossing slices',
    op: 'conv', input: [2, 121, 40, 24], outputDelta: [2, 121, 40, 3],
    attrs: {strides: [1, 1], filterShape: [1, 1]},
  },
  {
    name: 'MNIST-like 3×3 16→32, batch 16: a sample packed before each step',
    op: 'conv', input: [16, 13, 13, 16], outputDelta: [16, 11, 11, 32],
    attrs: {strides: [1, 1], filterShape: [3, 3]},
  },
  {
    name: '3-D 3×3×3, 8→16, batch 2',
    op: 'conv', input: [2, 10, 12, 12, 8], outputDelta: [2, 10, 12, 12, 16],
    attrs: {strides: [1, 1, 1], padsBegin: [1, 1, 1], padsEnd: [1, 1, 1], filterShape: [3, 3, 3]},
  },
  {
    // Sample 1 starts 4 bytes off the 8-byte alignment of its place in the shared memory, which
    // the copy into it (simd_filter_gradient.ts, copyFloats) takes through its staging buffer.
    name: 'an odd 16,385 floats a sample (1×3, 1→8): every other sample staged, in two pieces',
    op: 'conv', input: [3, 1, 16385, 1], outputDelta: [3, 1, 16383, 8],
    attrs: {strides: [1, 1], filterShape: [1, 3]},
  },
  {
    name: 'transposed 4×4 stride 2, 16→8',
    op: 'transposed', input: [2, 12, 12, 16], outputDelta: [2, 24, 24, 8],
    attrs: {strides: [2, 2], padsBegin: [1, 1], padsEnd: [1, 1], filterShape: [4, 4]},
  },
];

import * as tf from '@tensorflow/tfjs-core';

import {convolutionBackpropFilters, convTransposeBackpropFilters} from '../kernels/index';
import {expectClose, seededTensor, withoutLeaks} from './helpers/util';
import {CallAttrs, referenceForCall} from './reference';

/**
 * The transposed op's filter gradient is the convolution's with input and outputDelta swapped:
 * convTranspose(a, b) in IOX = (C, O/G, K…) is conv(b, a) in OIX = (C, O/G, K…), and XOI is XIO.
 * Both sides build their geometry with the package's builder and run the same kernel, so each
 * is also compared with the float64 reference (test/reference.ts), which computes the two ops
 * from their own formulas: the equality catches a broken role swap, the reference a wrong result.
 */
describe('duality of the two ops', () => {
  const problems = [
    {
      id: '1-D groups 2, stride 2, dilation 2', small: [2, 5, 4], large: [2, 11, 6], kernel: [3],
      attrs: {strides: [2], dilations: [2], padsBegin: [1], padsEnd: [1], groups: 2},
    },
    {
      id: '2-D stride 2, asymmetric pads, NCX', small: [2, 4, 3, 4], large: [2, 6, 4, 5], kernel: [3, 2],
      attrs: {strides: [2, 1], dilations: [1, 2], padsBegin: [1, 0], padsEnd: [2, 1], groups: 2, dataFormat: 'NCX'},
    },
    {
      id: '3-D depthwise', small: [1, 2, 2, 3, 3], large: [1, 4, 4, 5, 3], kernel: [2, 2, 2],
      attrs: {strides: [2, 2, 2], padsBegin: [0, 0, 1], padsEnd: [0, 0, 0], groups: 3},
    },
  ];
  for (const p of problems) {
    for (const [transposedFormat, convFormat] of [['IOX', 'OIX'], ['XOI', 'XIO']] as const) {
      it(`${p.id}: ${transposedFormat} of the transposed op = ${convFormat} of the convolution`, () => {
        const a = seededTensor(p.small, 31);
        const b = seededTensor(p.large, 32);
        const viaTransposed = withoutLeaks(
            () => convTransposeBackpropFilters(
                a, b, {...p.attrs, filterFormat: transposedFormat, filterShape: p.kernel} as never),
            1);
        const viaConvolution = withoutLeaks(
            () => convolutionBackpropFilters(b, a, {...p.attrs, filterFormat: convFormat, filterShape: p.kernel} as never),
            1);
        expect(viaTransposed.shape).toEqual(viaConvolution.shape);
        expectClose(viaTransposed.dataSync(), viaConvolution.dataSync(), p.id, 0, 0);
        const aData = {shape: p.small, values: a.dataSync()};
        const bData = {shape: p.large, values: b.dataSync()};
        const transposedReference = referenceForCall(
            true, aData, bData, {...p.attrs, filterFormat: transposedFormat, filterShape: p.kernel} as CallAttrs);
        const convolutionReference = referenceForCall(
            false, bData, aData, {...p.attrs, filterFormat: convFormat, filterShape: p.kernel} as CallAttrs);
        expect(viaTransposed.shape).toEqual(transposedReference.shape);
        expectClose(viaTransposed.dataSync(), transposedReference.values, `${p.id}, transposed op against the reference`);
        expect(viaConvolution.shape).toEqual(convolutionReference.shape);
        expectClose(viaConvolution.dataSync(), convolutionReference.values, `${p.id}, convolution against the reference`);
        tf.dispose([a, b, viaTransposed, viaConvolution]);
      });
    }
  }
});

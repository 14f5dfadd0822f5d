import * as tf from '@tensorflow/tfjs-core';

import {convolutionBackpropFilters, convTransposeBackpropFilters, fromSpecAttrs} from '../kernels/index';
import {NODE_BACKENDS} from './backends';

/**
 * Every invalid call throws an Error naming the op, the attribute or input, what was expected
 * and what was given, before any work; and leaves no tensor behind. On every backend: the
 * geometry throws them, so the messages are the same whichever kernel runs.
 */
for (const backend of NODE_BACKENDS) describe(`errors on ${backend.name}:`, () => {
  const CONV = 'ConvolutionBackpropFilters: ';
  const DECONV = 'ConvTransposeBackpropFilters: ';
  let x: tf.Tensor;   // [1, 8, 8, 4] NXC
  let dy: tf.Tensor;  // [1, 6, 6, 6]: 3×3 kernel, stride 1, no pads
  const ok = {strides: [1, 1], filterShape: [3, 3]};

  beforeAll(async () => {
    expect(await tf.setBackend(backend.name)).toBe(true);
    x = tf.zeros([1, 8, 8, 4]);
    dy = tf.zeros([1, 6, 6, 6]);
  });
  afterAll(async () => {
    tf.dispose([x, dy]);
    await tf.setBackend('cpu');  // specs that pick no backend run on cpu
  });

  // Each case is [title, setup, message]: setup makes the tensors the call needs (they are not
  // counted) and returns the call itself, which must throw and leave the tensor count alone.
  const conv = (attrs: object, input?: tf.Tensor | tf.TensorLike, delta?: tf.Tensor | tf.TensorLike,
                filterShape?: unknown) => () =>
      convolutionBackpropFilters(input ?? x, delta ?? dy, attrs as never, filterShape as never);
  const deconv = (attrs: object, input: tf.Tensor, delta: tf.Tensor, filterShape?: unknown) => () =>
      convTransposeBackpropFilters(input, delta, attrs as never, filterShape as never);
  const kernel = (name: string, inputs: tf.NamedTensorMap, attrs: object) => () =>
      tf.engine().runKernel(name, inputs, attrs as never);

  const cases: Array<[string, () => () => unknown, string]> = [
    ['input of rank 2', () => conv(ok, tf.zeros([8, 4]), tf.zeros([6, 6])),
     `${CONV}input must have rank 3, 4 or 5 (batch, channels, 1 to 3 spatial axes), got shape [8,4]`],
    ['input of rank 6', () => conv(ok, tf.zeros([1, 2, 2, 2, 2, 1]), tf.zeros([1, 2, 2, 2, 2, 1])),
     `${CONV}input must have rank 3, 4 or 5 (batch, channels, 1 to 3 spatial axes), got shape [1,2,2,2,2,1]`],
    ['ranks that differ', () => conv(ok, x, tf.zeros([1, 6, 6])),
     `${CONV}outputDelta rank (3) must equal input rank (4)`],
    ['batches that differ', () => conv(ok, x, tf.zeros([2, 6, 6, 6])),
     `${CONV}outputDelta batch (2) must equal input batch (1)`],
    ['missing strides', () => conv({filterShape: [3, 3]}),
     `${CONV}attribute 'strides' is required: 2 positive integers for a 4-D input`],
    ['strides of the wrong length', () => conv({...ok, strides: [1]}),
     `${CONV}attribute 'strides' must hold 2 positive integers for a 4-D input, got [1]`],
    ['a zero stride', () => conv({...ok, strides: [2, 0]}),
     `${CONV}attribute 'strides' must hold 2 positive integers for a 4-D input, got [2,0]`],
    ['a fractional stride', () => conv({...ok, strides: [1.5, 1]}),
     `${CONV}attribute 'strides' must hold 2 positive integers for a 4-D input, got [1.5,1]`],
    ['strides given as a number', () => conv({...ok, strides: 1}),
     `${CONV}attribute 'strides' must hold 2 positive integers for a 4-D input, got 1`],
    ['a negative pad', () => conv({...ok, padsBegin: [-1, 0]}),
     `${CONV}attribute 'padsBegin' must hold 2 non-negative integers for a 4-D input, got [-1,0]`],
    ['padsEnd of the wrong length', () => conv({...ok, padsEnd: [0, 0, 0]}),
     `${CONV}attribute 'padsEnd' must hold 2 non-negative integers for a 4-D input, got [0,0,0]`],
    ['a zero dilation', () => conv({...ok, dilations: [0, 1]}),
     `${CONV}attribute 'dilations' must hold 2 positive integers for a 4-D input, got [0,1]`],
    ['a NaN dilation', () => conv({...ok, dilations: [NaN, 1]}),
     `${CONV}attribute 'dilations' must hold 2 positive integers for a 4-D input, got [NaN,1]`],
    ['an unknown autoPad', () => conv({...ok, autoPad: 'same'}),
     `${CONV}attribute 'autoPad' must be one of 'none', 'same_upper', 'same_lower', 'valid', got 'same'`],
    ['an unknown dataFormat', () => conv({...ok, dataFormat: 'NHWC'}),
     `${CONV}attribute 'dataFormat' must be one of 'NXC', 'NCX', got 'NHWC'`],
    ['an unknown filterFormat', () => conv({...ok, filterFormat: 'HWIO'}),
     `${CONV}attribute 'filterFormat' must be one of 'XIO', 'OIX', got 'HWIO'`],
    ['IOX, a layout of the transposed op only', () => conv({...ok, filterFormat: 'IOX'}),
     `${CONV}attribute 'filterFormat' must be one of 'XIO', 'OIX', got 'IOX'`],
    ['groups 0', () => conv({...ok, groups: 0}), `${CONV}attribute 'groups' must be a positive integer, got 0`],
    ['fractional groups', () => conv({...ok, groups: 1.5}), `${CONV}attribute 'groups' must be a positive integer, got 1.5`],
    ['groups not dividing the channels',
     () => deconv({strides: [1, 1], groups: 3, filterShape: [3, 3]}, tf.zeros([1, 3, 3, 4]), tf.zeros([1, 5, 5, 6])),
     `${DECONV}groups (3) must divide input channels (4) and outputDelta channels (6)`],
    ['no filterShape anywhere', () => conv({strides: [1, 1]}),
     `${CONV}filterShape is required (as attribute or as the third input): the kernel size cannot be inferred from the tensors`],
    ['a filterShape of the wrong length', () => conv({...ok, filterShape: [3]}),
     `${CONV}attribute 'filterShape' must hold 4 positive integers (the full filter shape) or 2 (its spatial sizes) for a 4-D input, got [3]`],
    ['a full filterShape inconsistent with the channels', () => conv({...ok, groups: 2, filterShape: [3, 3, 4, 6]}),
     `${CONV}attribute 'filterShape' must be [3,3,2,6] in XIO for 4 input channels, 6 outputDelta channels and groups 2, got [3,3,4,6]`],
    ['a full transposed filterShape inconsistent with the channels (OIX = O/G, C, K)',
     () => deconv({strides: [1, 1], groups: 2, filterFormat: 'OIX'}, tf.zeros([1, 3, 3, 4]), tf.zeros([1, 5, 5, 6]), [6, 4, 3, 3]),
     `${DECONV}filterShape input must be [3,4,3,3] in OIX for 4 input channels, 6 outputDelta channels and groups 2, got [6,4,3,3]`],
    ['a float32 filterShape input', () => kernel('ConvolutionBackpropFilters', {input: x, outputDelta: dy, filterShape: tf.tensor1d([3, 3])}, {strides: [1, 1]}),
     `${CONV}filterShape input must be an int32 1-D tensor, got a float32 tensor of shape [2]`],
    ['a 2-D filterShape input', () => kernel('ConvolutionBackpropFilters', {input: x, outputDelta: dy, filterShape: tf.tensor2d([3, 3], [1, 2], 'int32')}, {strides: [1, 1]}),
     `${CONV}filterShape input must be an int32 1-D tensor, got a int32 tensor of shape [1,2]`],
    ['a zero in the filterShape input', () => conv({strides: [1, 1]}, x, dy, [0, 3]),
     `${CONV}filterShape input must hold 4 positive integers (the full filter shape) or 2 (its spatial sizes) for a 4-D input, got [0,3]`],
    ['a fractional filterShape argument', () => conv({strides: [1, 1]}, x, dy, [2.5, 3]),
     `${CONV}filterShape argument must hold integers, got [2.5,3]`],
    ['outputDelta of the wrong size', () => conv({...ok, padsBegin: [1, 1]}),
     `${CONV}outputDelta spatial shape [6,6] does not match the shape [7,7] computed from input [1,8,8,4] and the attributes`],
    ['a transposed outputDelta whose size ignores outputPadding',
     () => deconv({strides: [2, 2], outputPadding: [1, 1], filterShape: [3, 3]}, tf.zeros([1, 3, 3, 4]), tf.zeros([1, 7, 7, 2])),
     `${DECONV}outputDelta spatial shape [7,7] does not match the shape [8,8] computed from input [1,3,3,4] and the attributes`],
    ['a kernel larger than the padded input', () => conv({strides: [1, 1], filterShape: [5, 5]}, tf.zeros([1, 4, 4, 1]), tf.zeros([1, 1, 1, 1])),
     `${CONV}the attributes give an empty output [0,0] for input [1,4,4,1] (kernel [5,5], dilations [1,1], pads [0,0] + [0,0])`],
    ['an int32 input tensor', () => conv(ok, tf.zeros([1, 8, 8, 4], 'int32')), `${CONV}input must be float32, got int32`],
    ['a bool outputDelta tensor', () => conv(ok, x, tf.zeros([1, 6, 6, 6], 'bool')), `${CONV}outputDelta must be float32, got bool`],
    ['zero channels', () => conv(ok, tf.zeros([1, 8, 8, 0]), tf.zeros([1, 6, 6, 6])),
     `${CONV}input shape [1,8,8,0] must have positive channel and spatial sizes (NXC); only the batch may be 0`],
    ['a zero-sized spatial axis', () => conv(ok, tf.zeros([1, 8, 8, 4]), tf.zeros([1, 0, 6, 6])),
     `${CONV}outputDelta shape [1,0,6,6] must have positive channel and spatial sizes (NXC); only the batch may be 0`],
    ['a misspelt attribute', () => conv({...ok, stride: [1, 1]}),
     `${CONV}attribute 'stride' is not an attribute of ConvolutionBackpropFilters (known: strides, padsBegin, padsEnd, dilations, autoPad, groups, dataFormat, filterFormat, filterShape)`],
    ['outputPadding on the convolution', () => conv({...ok, outputPadding: [1, 1]}),
     `${CONV}attribute 'outputPadding' is not an attribute of ConvolutionBackpropFilters (known: strides, padsBegin, padsEnd, dilations, autoPad, groups, dataFormat, filterFormat, filterShape)`],
    ['a negative outputPadding',
     () => deconv({strides: [1, 1], outputPadding: [0, -1], filterShape: [3, 3]}, tf.zeros([1, 3, 3, 4]), tf.zeros([1, 5, 5, 2])),
     `${DECONV}attribute 'outputPadding' must hold 2 non-negative integers for a 4-D input, got [0,-1]`],
    ['a missing outputDelta input', () => kernel('ConvolutionBackpropFilters', {input: x}, ok),
     `${CONV}input 'outputDelta' is required`],
    ['an object that is no tensor-like', () => conv(ok, {not: 'a tensor'} as never),
     `${CONV}argument 'input' must be a tensor or a tensor-like of numbers (values passed to tensor(values) must be a number/boolean/string or an array of numbers/booleans/strings, or a TypedArray)`],
    ['an unknown spec attribute', () => () => fromSpecAttrs({stride: [1]} as never),
     `fromSpecAttrs: 'stride' is not a spec attribute (known: strides, pads_begin, pads_end, dilations, auto_pad, groups, data_format, filter_format, weights_format, filter_shape, weights_shape, output_padding)`],
    ['both spec names of one attribute', () => () => fromSpecAttrs({strides: [1], filter_format: 'OIX', weights_format: 'XIO'}),
     `fromSpecAttrs: 'weights_format' and 'filter_format' both give filterFormat, got 'XIO' and 'OIX'`],
  ];

  for (const [title, setup, message] of cases) {
    it(`rejects ${title}`, () => {
      tf.engine().startScope();  // disposes the setup's tensors at the end
      try {
        const call = setup();
        const before = tf.memory().numTensors;
        let thrown: unknown;
        try {
          call();
        } catch (e) {
          thrown = e;
        }
        expect(thrown).toEqual(jasmine.any(Error));
        expect((thrown as Error).message).toBe(message);
        expect(tf.memory().numTensors).withContext('tensors left behind').toBe(before);
      } finally {
        tf.engine().endScope();
      }
    });
  }

  // The table is the same on every backend: checked once.
  if (backend === NODE_BACKENDS[0]) {
    it('has at least 30 invalid inputs', () => {
      expect(cases.length).toBeGreaterThanOrEqual(30);
    });
  }
});

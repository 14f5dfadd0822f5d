#!/usr/bin/python3
"""Golden cases for tf.layers convolution layers trained through the drop-in gradients.

What: writes test/golden/layers.json. Per case: a tf.layers layer config (the layer the test
builds, channels-last), an input x, the layer's weights in tfjs's layouts and the order
`layer.getWeights()` returns them, a target t, and
  * y    = the layer's output,
  * loss = mean((y - t)^2) (tfjs's meanSquaredError over equal-shaped samples),
  * grads = d loss / d weight for every weight, in tfjs's layouts.

How: PyTorch autograd in float64, independent of the package and of tfjs. tfjs's padding is
spelled out: 'same' pads the total max(0, (ceil(in/s) - 1)*s + d*(k - 1) + 1 - in), its
smaller half first (F.pad), then the convolution runs with padding=0. Weight layouts:
  conv1d/2d/3d    tfjs (K..., C, O)        torch (O, C, K...)
  conv3dTranspose tfjs (K..., O, C)        torch conv_transpose3d (C, O, K...)  (no flip)
  depthwise       tfjs (kh, kw, C, M)      torch groups=C (C*M, 1, kh, kw), channel c*M + m
  separable       depthwise as above, then pointwise tfjs (1, 1, C*M, F), torch (F, C*M, 1, 1)
Values are random multiples of 1/64 in [-1, 1] (exact in float32) from a seeded generator.

Run by hand with Debian's python3-torch:  /usr/bin/python3 test/golden/generate_layers.py
CI never runs this script; it only reads the committed layers.json.
"""

import json
import math
import os

import torch
import torch.nn.functional as F

SEED = 20261123
gen = torch.Generator().manual_seed(SEED)


def rand(shape, scale=1.0):
    return torch.randint(-64, 65, tuple(shape), generator=gen, dtype=torch.int64).to(torch.float64) / 64.0 * scale


def flat(t):
    return [float(v) for v in t.detach().contiguous().reshape(-1).tolist()]


def tensor_json(t):
    return {'shape': list(t.shape), 'values': flat(t)}


def same_pads(size, kernel, stride, dilation):
    total = max(0, (math.ceil(size / stride) - 1) * stride + dilation * (kernel - 1) + 1 - size)
    return total // 2, total - total // 2


def pad_channels_first(x, kernels, strides, dilations, padding):
    """Pads the spatial axes of an NC... tensor as tfjs's 'same' does ('valid': nothing)."""
    if padding == 'valid':
        return x
    spatial = x.shape[2:]
    pairs = [same_pads(spatial[i], kernels[i], strides[i], dilations[i]) for i in range(len(spatial))]
    arg = []
    for begin, end in reversed(pairs):
        arg += [begin, end]
    return F.pad(x, arg)


def to_channels_first(x):
    return x.permute(0, x.dim() - 1, *range(1, x.dim() - 1))


def to_channels_last(x):
    return x.permute(0, *range(2, x.dim()), 1)


def tfjs_from_torch_conv(w):
    """(O, C, K...) -> (K..., C, O)."""
    r = w.dim() - 2
    return w.permute(*range(2, 2 + r), 1, 0)


CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def conv_case(name, config, input_shape, kernel, channels_in):
    r = len(kernel)
    strides = config.get('strides', [1] * r)
    dilations = config['dilationRate'] if isinstance(config['dilationRate'], list) else [config['dilationRate']] * r
    filters = config['filters']
    x = rand(input_shape)
    w = rand([filters, channels_in, *kernel], 0.5).requires_grad_()
    b = rand([filters], 0.5).requires_grad_()
    xc = pad_channels_first(to_channels_first(x), kernel, strides, dilations, config.get('padding', 'valid'))
    y = CONV[r](xc, w, b, stride=strides, dilation=dilations)
    if config.get('activation') == 'relu':
        y = torch.relu(y)
    return finish(name, config, x, to_channels_last(y), [('kernel', w, tfjs_from_torch_conv), ('bias', b, None)])


def conv3d_transpose_case(name, config, input_shape):
    kernel = [config['kernelSize']] * 3
    channels_in = input_shape[-1]
    x = rand(input_shape)
    w = rand([channels_in, config['filters'], *kernel], 0.5).requires_grad_()
    b = rand([config['filters']], 0.5).requires_grad_()
    y = F.conv_transpose3d(to_channels_first(x), w, b, stride=config['strides'])
    return finish(name, config, x, to_channels_last(y), [('kernel', w, lambda t: t.permute(2, 3, 4, 1, 0)), ('bias', b, None)])


def depthwise_from_torch(channels, multiplier):
    return lambda t: t.reshape(channels, multiplier, *t.shape[2:]).permute(2, 3, 0, 1)


def depthwise_case(name, config, input_shape, separable, torch_dilation=None):
    k = config['kernelSize']
    d = config['dilationRate'] if torch_dilation is None else torch_dilation
    channels = input_shape[-1]
    multiplier = config['depthMultiplier']
    x = rand(input_shape)
    wd = rand([channels * multiplier, 1, k, k], 0.5).requires_grad_()
    xc = pad_channels_first(to_channels_first(x), [k, k], [1, 1], [d, d], config.get('padding', 'valid'))
    weights = [('depthwise_kernel', wd, depthwise_from_torch(channels, multiplier))]
    if separable:
        wp = rand([config['filters'], channels * multiplier, 1, 1], 0.5).requires_grad_()
        b = rand([config['filters']], 0.5).requires_grad_()
        y = F.conv2d(F.conv2d(xc, wd, None, dilation=d, groups=channels), wp, b)
        weights += [('pointwise_kernel', wp, tfjs_from_torch_conv), ('bias', b, None)]
    else:
        b = rand([channels * multiplier], 0.5).requires_grad_()
        y = F.conv2d(xc, wd, b, dilation=d, groups=channels)
        weights += [('bias', b, None)]
    return finish(name, config, x, to_channels_last(y), weights)


def finish(name, config, x, y, weights):
    t = rand(y.shape)
    loss = torch.mean((y - t) ** 2)
    grads = torch.autograd.grad(loss, [w for _, w, _ in weights])
    convert = lambda f, v: f(v) if f is not None else v  # noqa: E731
    return {
        'name': name,
        'config': config,
        'x': tensor_json(x),
        'target': tensor_json(t),
        'weights': [{'name': n, **tensor_json(convert(f, w))} for n, w, f in weights],
        'y': tensor_json(y),
        'loss': float(loss),
        'grads': [{'name': n, **tensor_json(convert(f, g))} for (n, _, f), g in zip(weights, grads)],
    }


def main():
    cases = [
        conv_case('conv1d, dilation 2, same', {'layer': 'conv1d', 'filters': 4, 'kernelSize': 3, 'dilationRate': 2,
                                               'padding': 'same'}, [2, 12, 3], [3], 3),
        conv_case('conv2d, dilation [2,3], valid, linear (tf.fused.conv2d)',
                  {'layer': 'conv2d', 'filters': 4, 'kernelSize': [3, 2], 'dilationRate': [2, 3]}, [2, 9, 8, 3], [3, 2], 3),
        conv_case('conv2d, dilation 2, same, relu', {'layer': 'conv2d', 'filters': 3, 'kernelSize': 3, 'dilationRate': 2,
                                                     'padding': 'same', 'activation': 'relu'}, [2, 7, 8, 2], [3, 3], 2),
        conv_case('conv3d, dilation 2, same', {'layer': 'conv3d', 'filters': 3, 'kernelSize': 3, 'dilationRate': 2,
                                               'padding': 'same'}, [1, 5, 6, 6, 2], [3, 3, 3], 2),
        conv3d_transpose_case('conv3dTranspose, stride 2, valid',
                              {'layer': 'conv3dTranspose', 'filters': 2, 'kernelSize': 3, 'strides': 2}, [2, 3, 3, 4, 3]),
        # tfjs-layers 4.22's DepthwiseConv2D.call passes no dilation to tf.depthwiseConv2d ("TODO(cais):
        # Add support for dilation"): the layer computes the undilated convolution, so that is the golden.
        depthwise_case('depthwiseConv2d, dilationRate 2 (ignored by tfjs-layers: undilated), multiplier 2, valid',
                       {'layer': 'depthwiseConv2d', 'kernelSize': 3, 'dilationRate': 2, 'depthMultiplier': 2},
                       [2, 9, 9, 3], False, torch_dilation=1),
        depthwise_case('separableConv2d, dilation 2, multiplier 2, same',
                       {'layer': 'separableConv2d', 'filters': 4, 'kernelSize': 3, 'dilationRate': 2, 'depthMultiplier': 2,
                        'padding': 'same'}, [2, 8, 9, 3], True),
    ]
    document = {
        'generator': 'test/golden/generate_layers.py',
        'torch': torch.__version__,
        'seed': SEED,
        'cases': cases,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'layers.json')
    with open(path, 'w') as f:
        json.dump(document, f, separators=(',', ':'))
        f.write('\n')
    print(f'wrote {len(cases)} cases to {path}')


if __name__ == '__main__':
    torch.set_default_dtype(torch.float64)
    main()

#!/usr/bin/python3
"""Golden cases for training through the forward ops `convolution` and `convTranspose`.

What: writes test/golden/training.json. Per case: the op, its attributes (as the package's
`convolution` / `convTranspose` take them), input x, filter w, an upstream gradient dy, and
  * y  = the op's output,
  * dx, dw = the gradients of loss = sum(y * dy) with respect to x and w,
  * second order, for the filter-gradient kernel of the op: with dW(x, dy) = dw above and an
    upstream G shaped like the filter, the gradients of sum(dW(x, dy) * G) with respect to x
    and to dy (= ConvolutionBackpropFilters / ConvTransposeBackpropFilters inputs `input` and
    `outputDelta`).

How: PyTorch autograd in float64 (torch.autograd.grad with create_graph=True for the second
order), independent of the package under test.
  * convolution: x (NCX) padded with F.pad by the resolved pads, then
    F.conv{1,2,3}d(stride, dilation, groups, padding=0) with w (O, C/G, K...) = OIX.
  * convTranspose: F.conv_transpose{1,2,3}d(x, w, stride, dilation, groups, padding=0) with w
    (C, O/G, K...) = IOX, padded at the end by outputPadding zeros and cropped to
    [padBegin : len - padEnd] (asymmetric pads, which torch has not).
  auto_pad is resolved as DESIGN.md §2 says (helpers shared with generate.py). Values are
  random multiples of 1/64 in [-1, 1] (exact in float32) from a seeded generator; tensors are
  converted to the case's dataFormat and filterFormat before writing; flat, row-major.

Run by hand with Debian's python3-torch:  /usr/bin/python3 test/golden/generate_training.py
CI never runs this script; it only reads the committed training.json.
"""

import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate import (CONV, CONVT, CONV_FN, CONVT_FN, conv_filter_format, convt_filter_format, flat,  # noqa: E402
                      resolve_pads, to_data_format, torch_pad_arg)

SEED = 20261122
gen = torch.Generator().manual_seed(SEED)


def rand(shape):
    return torch.randint(-64, 65, tuple(shape), generator=gen, dtype=torch.int64).to(torch.float64) / 64.0


def tensor_json(t):
    return {'shape': list(t.shape), 'values': flat(t)}


def make_case(cid, op, N, C, O, in_sp, k, strides, dilations=None, pads_begin=None, pads_end=None,
              auto_pad='none', groups=1, data_format='NCX', filter_format='OIX', output_padding=None,
              output_shape_attr=False):
    r = len(in_sp)
    d = dilations or [1] * r
    pb0 = pads_begin or [0] * r
    pe0 = pads_end or [0] * r
    opad = output_padding or [0] * r
    G = groups
    kind = CONV if op == 'convolution' else CONVT
    pb, pe = resolve_pads(kind, in_sp, k, strides, d, pb0, pe0, opad, auto_pad)
    x = rand([N, C] + list(in_sp)).requires_grad_(True)
    if op == 'convolution':
        w = rand([O, C // G] + list(k)).requires_grad_(True)
        y = CONV_FN[r](F.pad(x, torch_pad_arg(pb, pe)), w, stride=strides, dilation=d, groups=G)
        out_sp = [(in_sp[a] + pb[a] + pe[a] - d[a] * (k[a] - 1) - 1) // strides[a] + 1 for a in range(r)]
    else:
        w = rand([C, O // G] + list(k)).requires_grad_(True)
        y = CONVT_FN[r](x, w, stride=strides, dilation=d, groups=G)
        y = F.pad(y, torch_pad_arg([0] * r, opad))
        for a in range(r):
            y = y.narrow(2 + a, pb[a], y.shape[2 + a] - pb[a] - pe[a])
        out_sp = [(in_sp[a] - 1) * strides[a] - pb[a] - pe[a] + d[a] * (k[a] - 1) + 1 + opad[a] for a in range(r)]
    assert list(y.shape) == [N, O] + out_sp, (cid, list(y.shape), out_sp)
    dy = rand(list(y.shape)).requires_grad_(True)
    loss = (y * dy).sum()
    dx, dw = torch.autograd.grad(loss, (x, w), create_graph=True)
    G2 = rand(list(w.shape))
    d2x, d2dy = torch.autograd.grad((dw * G2).sum(), (x, dy))

    fmt_filter = conv_filter_format if op == 'convolution' else convt_filter_format
    attrs = {'strides': list(strides)}
    if auto_pad.lower() == 'none':
        attrs['padsBegin'] = list(pb0)
        attrs['padsEnd'] = list(pe0)
    attrs['dilations'] = list(d)
    attrs['autoPad'] = auto_pad
    attrs['groups'] = G
    attrs['dataFormat'] = data_format
    attrs['filterFormat'] = filter_format
    if op == 'convTranspose':
        if output_shape_attr:
            attrs['outputShape'] = list(out_sp)
        else:
            attrs['outputPadding'] = list(opad)
    data = lambda t: tensor_json(to_data_format(t.detach(), data_format))
    filt = lambda t: tensor_json(fmt_filter(t.detach(), filter_format))
    return {
        'id': cid, 'op': op, 'attrs': attrs,
        'input': data(x), 'filter': filt(w), 'dy': data(dy),
        'y': data(y), 'dx': data(dx), 'dw': filt(dw),
        'second': {'upstream': filt(G2), 'dInput': data(d2x), 'dOutputDelta': data(d2dy)},
    }


def cases():
    c = []
    # The combination: groups 2, dilation 2, stride 2, asymmetric pads, NCX; 1-D, 2-D, 3-D.
    c.append(make_case('conv1d_g2_dil2_s2_asym_ncx_oix', 'convolution', N=2, C=4, O=6, in_sp=[13], k=[3],
                       strides=[2], dilations=[2], pads_begin=[1], pads_end=[2], groups=2))
    c.append(make_case('conv2d_g2_dil2_s2_asym_ncx_oix', 'convolution', N=2, C=4, O=4, in_sp=[8, 7], k=[3, 2],
                       strides=[2, 2], dilations=[2, 2], pads_begin=[1, 0], pads_end=[2, 1], groups=2))
    c.append(make_case('conv3d_g2_dil2_s2_asym_ncx_oix', 'convolution', N=2, C=2, O=4, in_sp=[5, 4, 5],
                       k=[2, 2, 2], strides=[2, 2, 2], dilations=[2, 2, 2], pads_begin=[1, 0, 1],
                       pads_end=[0, 1, 2], groups=2))
    c.append(make_case('convt1d_g2_dil2_s2_asym_outpad1_ncx_oix', 'convTranspose', N=2, C=4, O=2, in_sp=[5], k=[3],
                       strides=[2], dilations=[2], pads_begin=[1], pads_end=[2], output_padding=[1], groups=2))
    c.append(make_case('convt2d_g2_dil2_s2_asym_outpad1_ncx_oix', 'convTranspose', N=2, C=4, O=4, in_sp=[3, 4],
                       k=[3, 2], strides=[2, 2], dilations=[2, 2], pads_begin=[1, 0], pads_end=[2, 1],
                       output_padding=[1, 1], groups=2))
    c.append(make_case('convt3d_g2_dil2_s2_asym_ncx_oix', 'convTranspose', N=2, C=2, O=4, in_sp=[2, 3, 2],
                       k=[2, 2, 2], strides=[2, 2, 2], dilations=[2, 2, 2], pads_begin=[1, 0, 1],
                       pads_end=[0, 1, 2], groups=2))
    # Native paths (groups 1; strides or dilations 1), other layouts, auto_pad, depthwise.
    c.append(make_case('conv1d_g1_pad1_nxc_xio', 'convolution', N=2, C=3, O=4, in_sp=[9], k=[3], strides=[1],
                       pads_begin=[1], pads_end=[1], data_format='NXC', filter_format='XIO'))
    c.append(make_case('conv2d_g1_s2_asym_nxc_xio', 'convolution', N=2, C=3, O=2, in_sp=[7, 6], k=[3, 2],
                       strides=[2, 2], pads_begin=[1, 0], pads_end=[2, 1], data_format='NXC', filter_format='XIO'))
    c.append(make_case('conv2d_g1_dil_2x3_same_upper_ncx_xio', 'convolution', N=2, C=2, O=3, in_sp=[7, 8],
                       k=[2, 3], strides=[1, 1], dilations=[2, 3], auto_pad='same_upper', filter_format='XIO'))
    c.append(make_case('conv2d_depthwise_s2_same_lower_nxc_oix', 'convolution', N=2, C=3, O=3, in_sp=[6, 5],
                       k=[3, 3], strides=[2, 2], auto_pad='SAME_LOWER', groups=3, data_format='NXC'))
    c.append(make_case('conv3d_g1_valid_nxc_xio', 'convolution', N=1, C=2, O=3, in_sp=[4, 5, 4], k=[2, 3, 2],
                       strides=[1, 2, 1], auto_pad='valid', data_format='NXC', filter_format='XIO'))
    c.append(make_case('conv3d_channel_multiplier_dil2_ncx_oix', 'convolution', N=2, C=2, O=4, in_sp=[5, 4, 5],
                       k=[2, 2, 2], strides=[1, 1, 1], dilations=[2, 1, 2], pads_begin=[1, 1, 0],
                       pads_end=[0, 1, 1], groups=2))
    c.append(make_case('convt1d_g1_s2_outshape_nxc_xio', 'convTranspose', N=2, C=2, O=3, in_sp=[4], k=[3],
                       strides=[2], pads_begin=[1], pads_end=[1], output_padding=[1], data_format='NXC',
                       filter_format='XIO', output_shape_attr=True))
    c.append(make_case('convt2d_g1_same_upper_s2_nxc_iox', 'convTranspose', N=2, C=2, O=2, in_sp=[3, 3], k=[4, 4],
                       strides=[2, 2], auto_pad='same_upper', data_format='NXC', filter_format='IOX'))
    c.append(make_case('convt2d_depthwise_s_1x2_asym_ncx_xoi', 'convTranspose', N=2, C=3, O=3, in_sp=[4, 4],
                       k=[2, 3], strides=[1, 2], pads_begin=[0, 1], pads_end=[1, 0], groups=3, filter_format='XOI'))
    c.append(make_case('convt2d_valid_s3_k2_ncx_xio', 'convTranspose', N=1, C=3, O=2, in_sp=[3, 3], k=[2, 2],
                       strides=[3, 3], auto_pad='valid', filter_format='XIO'))
    c.append(make_case('convt3d_g2_dil_2x1x2_same_lower_nxc_xoi', 'convTranspose', N=2, C=2, O=4, in_sp=[2, 3, 3],
                       k=[2, 2, 2], strides=[1, 2, 1], dilations=[2, 1, 2], auto_pad='same_lower', groups=2,
                       data_format='NXC', filter_format='XOI'))
    return c


def main():
    cs = cases()
    ids = [c['id'] for c in cs]
    assert len(ids) == len(set(ids)), 'duplicate ids'
    compact = dict(separators=(', ', ': '))
    texts = []
    for case in cs:
        parts = ['  %s: %s' % (json.dumps(key), json.dumps(value, **compact)) for key, value in case.items()]
        texts.append(' {\n' + ',\n'.join(parts) + '\n }')
    text = ('{"generator": "test/golden/generate_training.py", "torch": %s, "cases": [\n' % json.dumps(torch.__version__)
            + ',\n'.join(texts) + '\n]}\n')
    doc = json.loads(text)
    assert len(doc['cases']) == len(cs)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'training.json')
    with open(out, 'w') as f:
        f.write(text)
    print('wrote %s: %d cases, %d bytes' % (out, len(cs), len(text)))


if __name__ == '__main__':
    main()

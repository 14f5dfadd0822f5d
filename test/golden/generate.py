#!/usr/bin/python3
"""Golden cases for ConvolutionBackpropFilters and ConvTransposeBackpropFilters.

What: writes test/golden/golden.json, a table of small cases (attributes, input, outputDelta
and the expected filter gradient) for both ops in 1-D, 2-D and 3-D, covering groups (incl.
depthwise and channel multiplier), strides (incl. stride > kernel), dilations, asymmetric
pads, a kernel larger than the input, auto_pad same_upper / same_lower / valid (odd total
pads, mixed letter case), output padding, both data formats and every filter format.

How: PyTorch autograd in float64, independent of the package under test.
  * ConvolutionBackpropFilters: x (NCX) is padded with F.pad (pads begin/end per axis),
    y = F.conv{1,2,3}d(x_padded, w, stride, dilation, groups, padding=0),
    loss = (y * dy).sum(), dW = w.grad in torch's (O, C/G, K...) = 'OIX'.
  * ConvTransposeBackpropFilters: x has C channels, dy has O channels.
    y_full = F.conv_transpose{1,2,3}d(x, w, stride, dilation, groups, padding=0,
    output_padding=0), w in torch's (C, O/G, K...) = 'IOX'; y_full is padded at the end of
    each axis by outputPadding zeros and cropped to [padBegin : len - padEnd], giving
    out = (in-1)*s - pb - pe + d*(K-1) + 1 + outputPadding; loss = (y * dy).sum().
  auto_pad is resolved here as DESIGN.md §2 says; the case keeps the original autoPad string
  (and no pads). Data values are random multiples of 1/64 in [-1, 1] (exact in float32) from
  a seeded torch.Generator, so the file is deterministic; expected values are the float64
  results written with repr precision. Tensors are converted to the case's dataFormat
  (NCX / NXC) and filterFormat before writing; all values are flat, row-major.

Self-checks before writing: dy's spatial size equals the DESIGN.md §2 formula; every conv
dW is cross-checked against torch.nn.grad.conv{1,2,3}d_weight; every case (both ops) is
cross-checked against a naive loop transcription of the DESIGN.md §2 sum formulas.

Run by hand with Debian's python3-torch (no pip):  /usr/bin/python3 test/golden/generate.py
CI never runs this script; it only reads the committed golden.json.
"""

import itertools
import json
import math
import os

import torch
import torch.nn.functional as F

SEED = 20240611
CONV = 'ConvolutionBackpropFilters'
CONVT = 'ConvTransposeBackpropFilters'

gen = torch.Generator().manual_seed(SEED)


def rand(shape):
    """Random multiples of 1/64 in [-1, 1], float64."""
    return torch.randint(-64, 65, tuple(shape), generator=gen, dtype=torch.int64).to(torch.float64) / 64.0


def resolve_pads(op, in_sp, k, s, d, pb, pe, op_pad, auto_pad):
    mode = auto_pad.lower()
    r = len(in_sp)
    if mode == 'none':
        return list(pb), list(pe)
    if mode == 'valid':
        return [0] * r, [0] * r
    begins, ends = [], []
    for a in range(r):
        if op == CONV:
            out = -(-in_sp[a] // s[a])
            total = max(0, (out - 1) * s[a] + d[a] * (k[a] - 1) + 1 - in_sp[a])
        else:
            total = max(0, d[a] * (k[a] - 1) + 1 + op_pad[a] - s[a])
        half = total // 2
        if mode == 'same_upper':
            begins.append(half)
            ends.append(total - half)
        elif mode == 'same_lower':
            begins.append(total - half)
            ends.append(half)
        else:
            raise ValueError(auto_pad)
    return begins, ends


def torch_pad_arg(pb, pe):
    """F.pad takes pairs from the last axis backwards."""
    arg = []
    for a in reversed(range(len(pb))):
        arg += [pb[a], pe[a]]
    return arg


CONV_FN = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
CONVT_FN = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
GRAD_WEIGHT = {1: getattr(torch.nn.grad, 'conv1d_weight', None),
               2: getattr(torch.nn.grad, 'conv2d_weight', None),
               3: getattr(torch.nn.grad, 'conv3d_weight', None)}


def at(t, idx):
    """t[idx[0]][idx[1]]... of nested lists."""
    for i in idx:
        t = t[i]
    return t


def naive_conv_dw(x, dy, k, s, d, pb, G):
    """DESIGN.md §2 ConvolutionBackpropFilters, literally; x, dy NCX; result (O, C/G, K...)."""
    N, C = x.shape[0], x.shape[1]
    O = dy.shape[1]
    in_sp, out_sp = list(x.shape[2:]), list(dy.shape[2:])
    xs, dys = x.tolist(), dy.tolist()
    cg, og = C // G, O // G

    dw = torch.zeros([O, cg] + list(k), dtype=torch.float64)
    for g, o, c in itertools.product(range(G), range(og), range(cg)):
        for kk in itertools.product(*[range(v) for v in k]):
            acc = 0.0
            for n in range(N):
                for p in itertools.product(*[range(v) for v in out_sp]):
                    q = [p[a] * s[a] - pb[a] + kk[a] * d[a] for a in range(len(k))]
                    if all(0 <= q[a] < in_sp[a] for a in range(len(k))):
                        acc += at(dys, [n, g * og + o] + list(p)) * at(xs, [n, g * cg + c] + q)
            dw[(g * og + o, c) + kk] = acc
    return dw


def naive_convt_dw(x, dy, k, s, d, pb, G):
    """DESIGN.md §2 ConvTransposeBackpropFilters, literally; x, dy NCX; result (O/G, C, K...)."""
    N, C = x.shape[0], x.shape[1]
    O = dy.shape[1]
    in_sp, out_sp = list(x.shape[2:]), list(dy.shape[2:])
    xs, dys = x.tolist(), dy.tolist()
    cg, og = C // G, O // G

    dw = torch.zeros([og, C] + list(k), dtype=torch.float64)
    for g, o, c in itertools.product(range(G), range(og), range(cg)):
        for kk in itertools.product(*[range(v) for v in k]):
            acc = 0.0
            for n in range(N):
                for i in itertools.product(*[range(v) for v in in_sp]):
                    q = [i[a] * s[a] - pb[a] + kk[a] * d[a] for a in range(len(k))]
                    if all(0 <= q[a] < out_sp[a] for a in range(len(k))):
                        acc += at(xs, [n, g * cg + c] + list(i)) * at(dys, [n, g * og + o] + q)
            dw[(o, g * cg + c) + kk] = acc
    return dw


def to_data_format(t, fmt):
    r = t.dim() - 2
    if fmt == 'NCX':
        return t
    assert fmt == 'NXC'
    return t.permute(0, *range(2, 2 + r), 1)


def conv_filter_format(w_oix, fmt):
    """w in (O, C/G, K...) → OIX or XIO = (K..., C/G, O)."""
    r = w_oix.dim() - 2
    if fmt == 'OIX':
        return w_oix
    assert fmt == 'XIO'
    return w_oix.permute(*range(2, 2 + r), 1, 0)


def convt_filter_format(w_iox, fmt):
    """w in torch's (C, O/G, K...) = IOX → OIX (O/G, C, K...), XIO (K..., C, O/G), XOI (K..., O/G, C)."""
    r = w_iox.dim() - 2
    ks = list(range(2, 2 + r))
    if fmt == 'IOX':
        return w_iox
    if fmt == 'OIX':
        return w_iox.permute(1, 0, *ks)
    if fmt == 'XIO':
        return w_iox.permute(*ks, 0, 1)
    if fmt == 'XOI':
        return w_iox.permute(*ks, 1, 0)
    raise ValueError(fmt)


def flat(t):
    # + 0.0 turns -0.0 into 0.0
    return [float(v) + 0.0 for v in t.contiguous().reshape(-1).tolist()]


def make_case(cid, op, N, C, O, in_sp, k, strides, dilations=None, pads_begin=None,
              pads_end=None, auto_pad='none', groups=1, data_format='NCX',
              filter_format='OIX', output_padding=None):
    r = len(in_sp)
    assert len(k) == r and len(strides) == r
    d = dilations or [1] * r
    pb0 = pads_begin or [0] * r
    pe0 = pads_end or [0] * r
    opad = output_padding or [0] * r
    G = groups
    assert C % G == 0 and O % G == 0
    pb, pe = resolve_pads(op, in_sp, k, strides, d, pb0, pe0, opad, auto_pad)

    x = rand([N, C] + list(in_sp))
    if op == CONV:
        assert output_padding is None
        out_sp = [(in_sp[a] + pb[a] + pe[a] - d[a] * (k[a] - 1) - 1) // strides[a] + 1 for a in range(r)]
        assert all(v > 0 for v in out_sp), (cid, out_sp)
        if auto_pad.lower() in ('same_upper', 'same_lower'):
            assert out_sp == [-(-in_sp[a] // strides[a]) for a in range(r)], cid
        w = torch.zeros([O, C // G] + list(k), dtype=torch.float64, requires_grad=True)
        dy = rand([N, O] + out_sp)
        xp = F.pad(x, torch_pad_arg(pb, pe))
        y = CONV_FN[r](xp, w, stride=strides, dilation=d, groups=G)
        assert list(y.shape) == [N, O] + out_sp, (cid, list(y.shape), out_sp)
        (y * dy).sum().backward()
        dw = w.grad.detach()
        gw = GRAD_WEIGHT[r]
        if gw is not None:
            ref = gw(xp, list(w.shape), dy, stride=strides, padding=0, dilation=d, groups=G)
            assert torch.allclose(ref, dw, rtol=0, atol=1e-12), cid
        naive = naive_conv_dw(x, dy, k, strides, d, pb, G)
        assert torch.allclose(naive, dw, rtol=0, atol=1e-12), cid
        out_filter = conv_filter_format(dw, filter_format)
    else:
        out_sp = [(in_sp[a] - 1) * strides[a] - pb[a] - pe[a] + d[a] * (k[a] - 1) + 1 + opad[a] for a in range(r)]
        assert all(v > 0 for v in out_sp), (cid, out_sp)
        if auto_pad.lower() in ('same_upper', 'same_lower'):
            total_ok = all(d[a] * (k[a] - 1) + 1 + opad[a] - strides[a] >= 0 for a in range(r))
            if total_ok:
                assert out_sp == [in_sp[a] * strides[a] for a in range(r)], cid
        w = torch.zeros([C, O // G] + list(k), dtype=torch.float64, requires_grad=True)
        dy = rand([N, O] + out_sp)
        y_full = CONVT_FN[r](x, w, stride=strides, dilation=d, groups=G)
        full_sp = [(in_sp[a] - 1) * strides[a] + d[a] * (k[a] - 1) + 1 for a in range(r)]
        assert list(y_full.shape[2:]) == full_sp, cid
        y = F.pad(y_full, torch_pad_arg([0] * r, opad))
        for a in range(r):
            length = y.shape[2 + a]
            y = y.narrow(2 + a, pb[a], length - pb[a] - pe[a])
        assert list(y.shape) == [N, O] + out_sp, (cid, list(y.shape), out_sp)
        (y * dy).sum().backward()
        dw_iox = w.grad.detach()
        naive = naive_convt_dw(x, dy, k, strides, d, pb, G)  # (O/G, C, K...)
        assert torch.allclose(naive, dw_iox.permute(1, 0, *range(2, 2 + r)), rtol=0, atol=1e-12), cid
        out_filter = convt_filter_format(dw_iox, filter_format)

    xin = to_data_format(x, data_format)
    dyin = to_data_format(dy, data_format)
    attrs = {'strides': list(strides)}
    if auto_pad.lower() == 'none':
        attrs['padsBegin'] = list(pb0)
        attrs['padsEnd'] = list(pe0)
    attrs['dilations'] = list(d)
    attrs['autoPad'] = auto_pad
    attrs['groups'] = G
    attrs['dataFormat'] = data_format
    attrs['filterFormat'] = filter_format
    attrs['filterShape'] = list(out_filter.shape)
    if op == CONVT:
        attrs['outputPadding'] = list(opad)
    for t in (xin, dyin, out_filter):
        assert t.numel() <= 600, (cid, list(t.shape))
    return {
        'id': cid,
        'op': op,
        'attrs': attrs,
        'input': {'shape': list(xin.shape), 'values': flat(xin)},
        'outputDelta': {'shape': list(dyin.shape), 'values': flat(dyin)},
        'expected': {'shape': list(out_filter.shape), 'values': flat(out_filter)},
    }


def cases():
    c = []
    # ---------------- ConvolutionBackpropFilters ----------------
    # 1-D
    c.append(make_case('conv1d_g1_pad1_ncx_oix', CONV, N=2, C=3, O=4, in_sp=[9], k=[3], strides=[1],
                       pads_begin=[1], pads_end=[1], data_format='NCX', filter_format='OIX'))
    c.append(make_case('conv1d_stride3_k2_nxc_xio', CONV, N=2, C=2, O=3, in_sp=[10], k=[2], strides=[3],
                       data_format='NXC', filter_format='XIO'))
    c.append(make_case('conv1d_dil3_stride2_same_upper_odd_nxc_oix', CONV, N=3, C=2, O=2, in_sp=[10], k=[3],
                       strides=[2], dilations=[3], auto_pad='same_upper', data_format='NXC', filter_format='OIX'))
    c.append(make_case('conv1d_batch1_kernel_larger_than_input_ncx_xio', CONV, N=1, C=2, O=3, in_sp=[3], k=[5],
                       strides=[1], pads_begin=[3], pads_end=[1], data_format='NCX', filter_format='XIO'))
    c.append(make_case('conv1d_g2_dil2_s2_asym_ncx_oix', CONV, N=2, C=4, O=6, in_sp=[13], k=[3], strides=[2],
                       dilations=[2], pads_begin=[1], pads_end=[2], groups=2, data_format='NCX', filter_format='OIX'))
    # 2-D
    c.append(make_case('conv2d_g1_pad1_ncx_oix', CONV, N=2, C=3, O=4, in_sp=[5, 5], k=[3, 3], strides=[1, 1],
                       pads_begin=[1, 1], pads_end=[1, 1], data_format='NCX', filter_format='OIX'))
    c.append(make_case('conv2d_g1_stride2_asym_pads_nxc_xio', CONV, N=2, C=3, O=2, in_sp=[7, 6], k=[3, 2],
                       strides=[2, 2], pads_begin=[1, 0], pads_end=[2, 1], data_format='NXC', filter_format='XIO'))
    c.append(make_case('conv2d_depthwise_pad1_nxc_xio', CONV, N=2, C=3, O=3, in_sp=[6, 6], k=[3, 3],
                       strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1], groups=3, data_format='NXC',
                       filter_format='XIO'))
    c.append(make_case('conv2d_channel_multiplier_stride_1x2_ncx_oix', CONV, N=2, C=2, O=4, in_sp=[5, 5],
                       k=[2, 3], strides=[1, 2], groups=2, data_format='NCX', filter_format='OIX'))
    c.append(make_case('conv2d_dil_3x1_stride_1x2_same_lower_uppercase_odd_nxc_oix', CONV, N=2, C=2, O=3, in_sp=[6, 8],
                       k=[2, 3], strides=[1, 2], dilations=[3, 1], auto_pad='SAME_LOWER', data_format='NXC',
                       filter_format='OIX'))
    c.append(make_case('conv2d_same_upper_odd_ncx_xio', CONV, N=2, C=2, O=2, in_sp=[5, 6], k=[2, 4],
                       strides=[1, 1], auto_pad='same_upper', data_format='NCX', filter_format='XIO'))
    c.append(make_case('conv2d_valid_stride3_k2_nxc_oix', CONV, N=3, C=2, O=2, in_sp=[8, 7], k=[2, 2],
                       strides=[3, 3], auto_pad='valid', data_format='NXC', filter_format='OIX'))
    c.append(make_case('conv2d_batch1_g2_dil3_nxc_xio', CONV, N=1, C=4, O=2, in_sp=[7, 7], k=[2, 2],
                       strides=[1, 1], dilations=[3, 3], pads_begin=[0, 1], pads_end=[1, 0], groups=2,
                       data_format='NXC', filter_format='XIO'))
    c.append(make_case('conv2d_g2_dil2_s2_asym_ncx_oix', CONV, N=2, C=4, O=4, in_sp=[8, 7], k=[3, 2],
                       strides=[2, 2], dilations=[2, 2], pads_begin=[1, 0], pads_end=[2, 1], groups=2,
                       data_format='NCX', filter_format='OIX'))
    # 3-D
    c.append(make_case('conv3d_g1_ncx_oix', CONV, N=2, C=2, O=2, in_sp=[4, 4, 4], k=[2, 2, 2],
                       strides=[1, 1, 1], data_format='NCX', filter_format='OIX'))
    c.append(make_case('conv3d_stride_2x1x2_same_lower_odd_nxc_xio', CONV, N=2, C=2, O=3, in_sp=[4, 5, 3],
                       k=[3, 2, 2], strides=[2, 1, 2], auto_pad='same_lower', data_format='NXC',
                       filter_format='XIO'))
    c.append(make_case('conv3d_depthwise_dil2_pad1_nxc_oix', CONV, N=2, C=2, O=2, in_sp=[5, 4, 5],
                       k=[2, 2, 2], strides=[1, 1, 1], dilations=[2, 2, 2], pads_begin=[1, 1, 1],
                       pads_end=[1, 1, 1], groups=2, data_format='NXC', filter_format='OIX'))
    c.append(make_case('conv3d_valid_channel_multiplier_stride3_k2_ncx_xio', CONV, N=2, C=2, O=4,
                       in_sp=[5, 4, 5], k=[2, 2, 2], strides=[3, 2, 3], auto_pad='valid', groups=2,
                       data_format='NCX', filter_format='XIO'))
    c.append(make_case('conv3d_g2_dil2_s2_asym_ncx_oix', CONV, N=2, C=2, O=4, in_sp=[5, 4, 5], k=[2, 2, 2],
                       strides=[2, 2, 2], dilations=[2, 2, 2], pads_begin=[1, 0, 1], pads_end=[0, 1, 2],
                       groups=2, data_format='NCX', filter_format='OIX'))
    # ---------------- ConvTransposeBackpropFilters ----------------
    # 1-D
    c.append(make_case('convt1d_g1_ncx_iox', CONVT, N=2, C=3, O=2, in_sp=[5], k=[3], strides=[1],
                       data_format='NCX', filter_format='IOX'))
    c.append(make_case('convt1d_stride2_outpad1_pad1_nxc_oix', CONVT, N=2, C=2, O=3, in_sp=[4], k=[3],
                       strides=[2], pads_begin=[1], pads_end=[1], output_padding=[1], data_format='NXC',
                       filter_format='OIX'))
    c.append(make_case('convt1d_g2_dil2_s2_asym_ncx_xoi', CONVT, N=3, C=4, O=2, in_sp=[5], k=[3], strides=[2],
                       dilations=[2], pads_begin=[1], pads_end=[2], groups=2, data_format='NCX',
                       filter_format='XOI'))
    c.append(make_case('convt1d_stride2_same_upper_odd_nxc_xio', CONVT, N=2, C=2, O=3, in_sp=[5], k=[3],
                       strides=[2], auto_pad='same_upper', data_format='NXC', filter_format='XIO'))
    # 2-D
    c.append(make_case('convt2d_g1_stride2_outpad_1x0_asym_ncx_oix', CONVT, N=2, C=2, O=3, in_sp=[3, 4],
                       k=[3, 3], strides=[2, 2], pads_begin=[1, 0], pads_end=[0, 1], output_padding=[1, 0],
                       data_format='NCX', filter_format='OIX'))
    c.append(make_case('convt2d_depthwise_stride_1x2_asym_nxc_xio', CONVT, N=2, C=3, O=3, in_sp=[4, 4],
                       k=[2, 3], strides=[1, 2], pads_begin=[0, 1], pads_end=[1, 0], groups=3,
                       data_format='NXC', filter_format='XIO'))
    c.append(make_case('convt2d_channel_multiplier_dil_2x1_stride_2x1_same_lower_odd_nxc_iox', CONVT, N=2, C=2, O=4,
                       in_sp=[3, 4], k=[2, 2], strides=[2, 1], dilations=[2, 1], auto_pad='same_lower',
                       groups=2, data_format='NXC', filter_format='IOX'))
    c.append(make_case('convt2d_batch1_valid_stride3_k2_ncx_xoi', CONVT, N=1, C=3, O=2, in_sp=[3, 3],
                       k=[2, 2], strides=[3, 3], auto_pad='valid', data_format='NCX', filter_format='XOI'))
    c.append(make_case('convt2d_stride2_outpad1_same_upper_uppercase_odd_nxc_oix', CONVT, N=2, C=2, O=2, in_sp=[3, 3],
                       k=[4, 4], strides=[2, 2], output_padding=[1, 1], auto_pad='SAME_UPPER',
                       data_format='NXC', filter_format='OIX'))
    c.append(make_case('convt2d_g2_dil2_s2_asym_outpad1_ncx_oix', CONVT, N=2, C=4, O=4, in_sp=[3, 4],
                       k=[3, 2], strides=[2, 2], dilations=[2, 2], pads_begin=[1, 0], pads_end=[2, 1],
                       output_padding=[1, 1], groups=2, data_format='NCX', filter_format='OIX'))
    # 3-D
    c.append(make_case('convt3d_g1_stride2_outpad_1x0x1_ncx_iox', CONVT, N=2, C=2, O=2, in_sp=[2, 3, 2],
                       k=[2, 2, 2], strides=[2, 2, 2], output_padding=[1, 0, 1], data_format='NCX',
                       filter_format='IOX'))
    c.append(make_case('convt3d_g2_dil2_asym_nxc_xoi', CONVT, N=2, C=2, O=4, in_sp=[2, 3, 3], k=[2, 2, 2],
                       strides=[1, 2, 1], dilations=[2, 1, 2], pads_begin=[1, 0, 1], pads_end=[0, 1, 2],
                       groups=2, data_format='NXC', filter_format='XOI'))
    c.append(make_case('convt3d_depthwise_same_lower_odd_ncx_xio', CONVT, N=2, C=2, O=2, in_sp=[3, 2, 3],
                       k=[2, 3, 2], strides=[1, 2, 1], auto_pad='same_lower', groups=2, data_format='NCX',
                       filter_format='XIO'))
    return c


def dump(doc):
    """Readable but compact: one line per tensor / attrs, numbers inline."""
    compact = dict(separators=(', ', ': '))
    lines = ['{"generator": %s, "torch": %s, "cases": [' % (json.dumps(doc['generator']), json.dumps(doc['torch']))]
    case_texts = []
    for case in doc['cases']:
        parts = []
        for key in ('id', 'op', 'attrs', 'input', 'outputDelta', 'expected'):
            parts.append('  %s: %s' % (json.dumps(key), json.dumps(case[key], **compact)))
        case_texts.append(' {\n' + ',\n'.join(parts) + '\n }')
    lines.append(',\n'.join(case_texts))
    lines.append(']}')
    return '\n'.join(lines) + '\n'


def main():
    cs = cases()
    ids = [c['id'] for c in cs]
    assert len(ids) == len(set(ids)), 'duplicate ids'
    doc = {'generator': 'test/golden/generate.py', 'torch': torch.__version__, 'cases': cs}
    text = dump(doc)
    assert json.loads(text) == doc
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'golden.json')
    with open(out, 'w') as f:
        f.write(text)
    print('wrote %s: %d cases, %d bytes' % (out, len(cs), len(text)))
    for c in cs:
        print('  %-60s %s' % (c['id'], c['expected']['shape']))


if __name__ == '__main__':
    main()

"""PyTorch's filter gradient for `npm run bench` (bench/cpu.ts), run as a child process.

One JSON command a line on stdin, one JSON answer a line on stdout, so the Node harness can
interleave PyTorch's timed calls with its own (noise on a shared machine then hits both alike):

  {"op": "hello"}                      -> versions, threads
  {"op": "setup", "problem": {...}}    -> builds random NCX tensors for one workload
  {"op": "memory"}                     -> one call; peak resident bytes above the resident set before it
  {"op": "call"}                       -> one call; its wall time in ms
  {"op": "free"}

The gradient is aten::convolution_backward with only the weight gradient asked for (what
torch.nn.grad.conv{1,2,3}d_weight and autograd run), on channels-last tensors for 2-D and 3-D
problems (torch.channels_last / channels_last_3d: oneDNN's fast path; 1-D ones stay
channels-first), float32, on the threads the first argument gives (default 1,
torch.set_num_threads). A transposed convolution's filter gradient is the convolution's with the
input and the output gradient swapped. Unequal begin/end pads are applied to the input once,
outside the timed call.
"""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
torch.manual_seed(0)

MEMORY_FORMAT = {1: torch.contiguous_format, 2: torch.channels_last, 3: torch.channels_last_3d}


def status_kib(field):
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith(field + ':'):
                return int(line.split()[1])
    raise RuntimeError('no %s in /proc/self/status' % field)


def build(p):
    rank = p['spatialRank']
    n, g = p['batch'], p['groups']
    if p['kind'] == 'conv':
        a_channels, a_size = p['ic'], p['inputSize']  # the convolution's input
        b_channels, b_size = p['oc'], p['outputSize']  # its output gradient
        weight_size = [p['oc'], p['ic'] // g] + list(p['kernel'])
    else:
        # Transposed: the convolution from the transposed one's output space to its input space.
        a_channels, a_size = p['oc'], p['outputSize']
        b_channels, b_size = p['ic'], p['inputSize']
        weight_size = [p['ic'], p['oc'] // g] + list(p['kernel'])
    a = torch.rand([n, a_channels] + list(a_size)) * 2 - 1
    b = torch.rand([n, b_channels] + list(b_size)) * 2 - 1
    begin, end = list(p['padsBegin']), list(p['padsEnd'])
    if begin == end:
        padding = begin
    else:
        pads = []
        for axis in reversed(range(rank)):  # F.pad lists the last axis first
            pads += [begin[axis], end[axis]]
        a = F.pad(a, pads).contiguous()
        padding = [0] * rank
    layout = MEMORY_FORMAT[rank]
    a = a.contiguous(memory_format=layout)
    b = b.contiguous(memory_format=layout)
    weight = torch.empty(weight_size).contiguous(memory_format=layout)
    stride, dilation = list(p['strides']), list(p['dilations'])

    def call():
        return torch.ops.aten.convolution_backward(
            b, a, weight, None, stride, padding, dilation, False, [0] * rank, g, [False, True, False])[1]

    result = call()
    if list(result.shape) != weight_size:
        raise RuntimeError('gradient shape %s, expected %s' % (list(result.shape), weight_size))
    return call


def main():
    call = None
    for line in sys.stdin:
        command = json.loads(line)
        op = command['op']
        try:
            if op == 'hello':
                answer = {'torch': torch.__version__, 'threads': torch.get_num_threads(), 'channelsLast': True,
                          'mkldnn': bool(torch.backends.mkldnn.is_available()),
                          'python': sys.version.split()[0]}
            elif op == 'setup':
                call = build(command['problem'])  # includes one warm-up call
                answer = {'ok': True}
            elif op == 'memory':
                try:
                    with open('/proc/self/clear_refs', 'w') as f:
                        f.write('5')
                    before = status_kib('VmRSS')
                    call()
                    answer = {'peakRssBytes': max(0, status_kib('VmHWM') - before) * 1024}
                except OSError:
                    call()
                    answer = {'peakRssBytes': None}
            elif op == 'call':
                start = time.perf_counter()
                call()
                answer = {'ms': (time.perf_counter() - start) * 1000}
            elif op == 'free':
                call = None
                answer = {'ok': True}
            else:
                answer = {'error': 'unknown op %r' % op}
        except Exception as error:  # reported to the harness, which prints it
            answer = {'error': '%s: %s' % (type(error).__name__, error)}
        sys.stdout.write(json.dumps(answer) + '\n')
        sys.stdout.flush()


if __name__ == '__main__':
    main()

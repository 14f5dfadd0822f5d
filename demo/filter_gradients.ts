/**
 * `npm run build && npx tsx demo/filter_gradients.ts` (about 80 s on a 2-core machine): both
 * filter gradients on real-size 2-D and 3-D problems with groups and dilations, timed, and
 * checked against finite differences of tfjs's own forward convolutions.
 *
 * The check: with L(W) = Σ forward(x, W)·dy, our dW must satisfy
 *   (L(W + εV) − L(W − εV)) / 2ε = Σ dW·V
 * for a random direction V over the whole filter, and for single filter elements. The forward
 * pass is tfjs's conv1d/conv2d/conv3d (transposed: conv2dTranspose/conv3dTranspose), run per
 * group, with the dilation written into the filter as zeros, so it shares nothing with our code.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import {computeGeometry, convolutionBackpropFilters, convTransposeBackpropFilters} from 'tfjs-conv-backprop-filters';

interface DemoProblem {
  title: string;
  transposed: boolean;
  /** NXC shape of the op's input. */
  input: number[];
  outputChannels: number;
  kernel: number[];
  strides: number[];
  dilations: number[];
  padsBegin: number[];
  padsEnd: number[];
  outputPadding?: number[];
  groups: number;
}

const PROBLEMS: DemoProblem[] = [
  {
    title: 'conv 2-D  x [2,56,56,64] 3×3, 64→64, groups 2, dilation 2', transposed: false, input: [2, 56, 56, 64],
    outputChannels: 64, kernel: [3, 3], strides: [1, 1], dilations: [2, 2], padsBegin: [2, 2], padsEnd: [2, 2], groups: 2,
  },
  {
    title: 'conv 3-D  x [2,16,32,32,32] 3×3×3, 32→32, groups 4, dilation 2, stride 2', transposed: false,
    input: [2, 16, 32, 32, 32], outputChannels: 32, kernel: [3, 3, 3], strides: [2, 2, 2], dilations: [2, 2, 2],
    padsBegin: [2, 2, 2], padsEnd: [1, 1, 1], groups: 4,
  },
  {
    title: 'deconv 2-D  x [4,28,28,64] 4×4 stride 2, 64→32, groups 2, dilation 2', transposed: true,
    input: [4, 28, 28, 64], outputChannels: 32, kernel: [4, 4], strides: [2, 2], dilations: [2, 2], padsBegin: [3, 3],
    padsEnd: [3, 2], outputPadding: [1, 0], groups: 2,
  },
  {
    title: 'deconv 3-D  x [2,8,16,16,32] 3×3×3 stride 2, 32→16, groups 2, dilation 2', transposed: true,
    input: [2, 8, 16, 16, 32], outputChannels: 16, kernel: [3, 3, 3], strides: [2, 2, 2], dilations: [2, 2, 2],
    padsBegin: [2, 2, 2], padsEnd: [1, 1, 1], outputPadding: [1, 1, 1], groups: 2,
  },
];

/** Spreads the kernel taps `dilation` apart with zeros in between, on the leading spatial axes. */
function dilateFilter(w: tf.Tensor, dilations: number[]): tf.Tensor {
  return tf.tidy(() => {
    let out = w;
    dilations.forEach((d, axis) => {
      if (d === 1) return;
      const shape = out.shape;
      const k = shape[axis];
      const withGap = [...shape.slice(0, axis + 1), 1, ...shape.slice(axis + 1)];
      const zeros = tf.zeros([...shape.slice(0, axis + 1), d - 1, ...shape.slice(axis + 1)]);
      const spread = tf.reshape(
          tf.concat([tf.reshape(out, withGap), zeros], axis + 1), [...shape.slice(0, axis), k * d, ...shape.slice(axis + 1)]);
      out = tf.slice(spread, 0, [...shape.slice(0, axis), d * (k - 1) + 1, ...shape.slice(axis + 1)]);
    });
    return out;
  });
}

/** The forward op with tfjs's kernels, NXC data, XIO filter as the spec lays it out per op. */
function forward(p: DemoProblem, x: tf.Tensor, w: tf.Tensor): tf.Tensor {
  return tf.tidy(() => {
    const r = p.kernel.length;
    const C = x.shape[r + 1];
    const outputs: tf.Tensor[] = [];
    for (let g = 0; g < p.groups; g++) {
      const xg = tf.slice(x, [...new Array(r + 1).fill(0), g * C / p.groups], [...x.shape.slice(0, r + 1), C / p.groups]);
      if (!p.transposed) {
        // XIO = (K…, C/G, O): this group's output channels.
        const O = p.outputChannels / p.groups;
        const wg = dilateFilter(tf.slice(w, [...new Array(r + 1).fill(0), g * O], [...w.shape.slice(0, r + 1), O]), p.dilations);
        const padded = tf.pad(xg, [[0, 0], ...p.padsBegin.map((b, i): [number, number] => [b, p.padsEnd[i]]), [0, 0]]);
        outputs.push(
            r === 1 ? tf.conv1d(padded as tf.Tensor3D, wg as tf.Tensor3D, p.strides[0], 'valid') :
            r === 2 ? tf.conv2d(padded as tf.Tensor4D, wg as tf.Tensor4D, p.strides as [number, number], 'valid') :
                      tf.conv3d(padded as tf.Tensor5D, wg as tf.Tensor5D, p.strides as [number, number, number], 'valid'));
      } else {
        // XIO = (K…, C, O/G): this group's input channels; tfjs wants (K…, O/G, C/G).
        const Cg = C / p.groups;
        const wg = dilateFilter(
            tf.transpose(
                tf.slice(w, [...new Array(r).fill(0), g * Cg, 0], [...w.shape.slice(0, r), Cg, w.shape[r + 1]]),
                [...new Array(r).keys(), r + 1, r]),
            p.dilations);
        const full = x.shape.slice(1, r + 1).map((n, i) => (n - 1) * p.strides[i] + p.dilations[i] * (p.kernel[i] - 1) + 1);
        const fullShape = [x.shape[0], ...full, w.shape[r + 1]];
        const y = r === 2 ?
            tf.conv2dTranspose(xg as tf.Tensor4D, wg as tf.Tensor4D, fullShape as [number, number, number, number],
                               p.strides as [number, number], 'valid') :
            tf.conv3dTranspose(xg as tf.Tensor5D, wg as tf.Tensor5D,
                               fullShape as [number, number, number, number, number],
                               p.strides as [number, number, number], 'valid');
        // Output padding adds zeros at the end; pads crop the full output.
        const extended = tf.pad(y, [[0, 0], ...(p.outputPadding ?? []).map((e): [number, number] => [0, e]), [0, 0]]);
        const size = full.map((n, i) => n - p.padsBegin[i] - p.padsEnd[i] + (p.outputPadding?.[i] ?? 0));
        outputs.push(tf.slice(extended, [0, ...p.padsBegin, 0], [x.shape[0], ...size, y.shape[r + 1]]));
      }
    }
    return tf.concat(outputs, r + 1);
  });
}

function median(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function time<T>(f: () => T): [T, number] {
  const start = performance.now();
  const result = f();
  return [result, performance.now() - start];
}

async function main() {
  tf.env().set('IS_TEST', true);  // quiet the "install tfjs-node" banner
  await tf.setBackend('cpu');
  console.log(`tfjs-conv-backprop-filters demo on tfjs ${tf.version_core}, backend ${tf.getBackend()}\n`);
  let failures = 0;
  for (const p of PROBLEMS) {
    const r = p.kernel.length;
    const x = tf.randomUniform(p.input, -1, 1, 'float32', 1);
    const filterShape = p.transposed ? [...p.kernel, p.input[r + 1], p.outputChannels / p.groups] :
                                       [...p.kernel, p.input[r + 1] / p.groups, p.outputChannels];
    const w = tf.randomUniform(filterShape, -1, 1, 'float32', 2);
    const [y, forwardMs] = time(() => forward(p, x, w));
    const dy = tf.randomUniform(y.shape, -1, 1, 'float32', 3);
    const attrs = {
      strides: p.strides, dilations: p.dilations, padsBegin: p.padsBegin, padsEnd: p.padsEnd, groups: p.groups,
      filterShape: p.kernel, ...(p.transposed ? {outputPadding: p.outputPadding} : {}),
    };
    const op = p.transposed ? convTransposeBackpropFilters : convolutionBackpropFilters;
    const geometry = computeGeometry(
        p.transposed ? 'ConvTransposeBackpropFilters' : 'ConvolutionBackpropFilters',
        {input: x, outputDelta: dy}, attrs);
    const timings: number[] = [];
    let dW: tf.Tensor | undefined;
    for (let run = 0; run < 3; run++) {
      dW?.dispose();
      const [result, ms] = time(() => {
        const out = op(x, dy, attrs);
        out.dataSync();
        return out;
      });
      dW = result;
      timings.push(ms);
    }
    const gradient = dW!.dataSync();

    // Finite differences of L along a random direction and along single filter elements.
    const loss = (weights: tf.Tensor) => tf.tidy(() => tf.sum(tf.mul(forward(p, x, weights), dy)).dataSync()[0]);
    const checks: Array<[string, number, number]> = [];
    const direction = tf.randomUniform(w.shape, -1, 1, 'float32', 4);
    const directionValues = direction.dataSync();
    const alongDirection = tf.tidy(() => (loss(tf.add(w, direction)) - loss(tf.sub(w, direction))) / 2);
    let projected = 0;
    for (let i = 0; i < gradient.length; i++) projected += gradient[i] * directionValues[i];
    checks.push(['random direction', alongDirection, projected]);
    for (const index of [0, Math.floor(w.size / 3), w.size - 1]) {
      const unit = tf.tidy(() => tf.cast(tf.reshape(tf.oneHot(tf.tensor1d([index], 'int32'), w.size), w.shape), 'float32'));
      const along = tf.tidy(() => (loss(tf.add(w, unit)) - loss(tf.sub(w, unit))) / 2);
      checks.push([`element ${index}`, along, gradient[index]]);
      unit.dispose();
    }
    const worst = Math.max(...checks.map(([, fd, ours]) => Math.abs(fd - ours) / Math.max(1, Math.abs(fd))));
    const ok = worst < 1e-3;
    if (!ok) failures++;

    const ms = median(timings);
    console.log(p.title);
    console.log(`  outputDelta [${dy.shape}] → dW [${dW!.shape}] (XIO)`);
    console.log(`  our kernel: ${ms.toFixed(1)} ms median of 3, ${(geometry.flops / ms / 1e6).toFixed(2)} GFLOP/s ` +
                `(tfjs forward pass for comparison: ${forwardMs.toFixed(0)} ms)`);
    for (const [what, fd, ours] of checks) {
      console.log(`  finite differences, ${what.padEnd(16)} ${fd.toPrecision(8).padStart(16)}  ours ${
          ours.toPrecision(8).padStart(16)}`);
    }
    console.log(`  worst relative difference ${worst.toExponential(2)}: ${ok ? 'OK' : 'MISMATCH'}\n`);
    tf.dispose([x, w, y, dy, dW!, direction]);
  }
  if (failures > 0) {
    console.error(`${failures} problem(s) did not match finite differences`);
    process.exit(1);
  }
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});

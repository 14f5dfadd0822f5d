/**
 * The browser half of `npm run bench:webgl` (see bench/webgl.ts): times our kernel and tfjs's
 * built-in one on each workload, checks they agree, and prints a Markdown table.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-webgl';

import {computeGeometry, convolutionBackpropFilters, ConvolutionBackpropFiltersAttrs} from '../kernels/index';
import type {WebglWorkload} from './webgl';

declare const __karma__: {config: {args: string[]}};

interface Timing {
  median: number;
  min: number;
  max: number;
}

async function time(f: () => tf.Tensor, runs: number): Promise<{timing: Timing; first: Float32Array}> {
  const warm = f();  // compiles the shaders
  const first = (await warm.data()) as Float32Array;
  warm.dispose();
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    const result = f();
    await result.data();
    times.push(performance.now() - start);
    result.dispose();
  }
  times.sort((a, b) => a - b);
  return {timing: {median: times[Math.floor(times.length / 2)], min: times[0], max: times[times.length - 1]}, first};
}

/** tfjs's own kernel for the same gradient; explicit pads where it takes them. */
function builtIn(w: WebglWorkload, x: tf.Tensor, dy: tf.Tensor, filterShape: number[]): tf.Tensor {
  const {strides, padsBegin = [], padsEnd = [], dilations = strides.map(() => 1)} = w.args.attrs;
  const pairs = padsBegin.map((b, i) => [b, padsEnd[i]]);
  if (w.builtIn === 'Conv3DBackpropFilterV2') {
    // It takes only 'valid' or 'same'; the workloads picked for it are one or the other.
    const pad = pairs.every(([b, e]) => b === 0 && e === 0) ? 'valid' : 'same';
    return tf.engine().runKernel(w.builtIn, {x, dy}, {strides, pad, filterShape}) as tf.Tensor;
  }
  const pad = [[0, 0], ...pairs, [0, 0]];
  const common = {strides, pad};
  if (w.builtIn === 'DepthwiseConv2dNativeBackpropFilter') {
    // tfjs's depthwise filter is (K…, C, multiplier); ours for groups = C is (K…, 1, C): same order.
    const depthwiseShape = [...filterShape.slice(0, -2), x.shape[x.shape.length - 1], 1];
    return tf.engine().runKernel(w.builtIn, {x, dy}, {...common, dilations, filterShape: depthwiseShape}) as tf.Tensor;
  }
  return tf.engine().runKernel(w.builtIn, {x, dy}, {...common, dataFormat: 'NHWC', filterShape}) as tf.Tensor;
}

function compiledPrograms(): number {
  return Object.keys((tf.backend() as unknown as {binaryCache: object}).binaryCache).length;
}

describe('webgl benchmark', () => {
  it('times our kernel and the built-in one', async () => {
    const {workloads, runs} = JSON.parse(__karma__.config.args[0]) as {workloads: WebglWorkload[]; runs: number};
    expect(await tf.setBackend('webgl')).toBe(true);
    const gl = (tf.backend() as unknown as {gpgpu: {gl: WebGLRenderingContext}}).gpgpu.gl;
    const debug = gl.getExtension('WEBGL_debug_renderer_info');
    console.log(`\n# webgl filter-gradient benchmark\n\nbrowser: ${navigator.userAgent}`);
    console.log(`renderer: ${debug ? gl.getParameter(debug.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER)}, WebGL ${
        tf.env().getNumber('WEBGL_VERSION')}, tfjs ${tf.version_core}`);
    console.log(`timing: 1 warm-up (shader compile) + ${runs} timed runs each, until the result is read back\n`);
    const rows: string[] = [
      '| workload | source | batch | shape | GFLOP | ours ms (min–max) | ours GFLOP/s | built-in | built-in ms (min–max) | built-in GFLOP/s | speed-up | max abs diff |',
      '|---|---|--:|---|--:|--:|--:|---|--:|--:|--:|--:|',
    ];
    for (const w of workloads) {
      const x = tf.randomUniform(w.args.inputShape, -1, 1, 'float32', 1);
      const dy = tf.randomUniform(w.args.outputDeltaShape, -1, 1, 'float32', 2);
      const attrs = w.args.attrs as ConvolutionBackpropFiltersAttrs;  // every workload here is a convolution
      const geometry = computeGeometry('ConvolutionBackpropFilters', {input: x, outputDelta: dy}, attrs);
      const programsBefore = compiledPrograms();
      const ours = await time(() => convolutionBackpropFilters(x, dy, attrs), runs);
      const ourPrograms = compiledPrograms() - programsBefore;
      const theirs = await time(() => builtIn(w, x, dy, [...geometry.filterShape]), runs);
      let diff = 0;
      let scale = 0;
      ours.first.forEach((v, i) => {
        diff = Math.max(diff, Math.abs(v - theirs.first[i]));
        scale = Math.max(scale, Math.abs(theirs.first[i]));
      });
      const gflops = (ms: number) => (geometry.flops / ms / 1e6).toFixed(3);
      const ms = (t: Timing) => `${t.median.toFixed(0)} (${t.min.toFixed(0)}–${t.max.toFixed(0)})`;
      rows.push(`| ${w.name} | ${w.source} | ${w.args.batch} | ${w.shape} | ${(geometry.flops / 1e9).toFixed(3)} | ${
          ms(ours.timing)} | ${gflops(ours.timing.median)} | ${w.builtIn} | ${ms(theirs.timing)} | ${
          gflops(theirs.timing.median)} | **${(theirs.timing.median / ours.timing.median).toFixed(1)}×** | ${
          diff.toExponential(1)} (of ${scale.toFixed(1)}) |`);
      console.log(`done ${w.name}: ours ${ours.timing.median.toFixed(0)} ms (${ourPrograms} programs compiled), built-in ${
          theirs.timing.median.toFixed(0)} ms`);
      expect(diff).toBeLessThan(1e-3 * Math.max(1, scale));
      tf.dispose([x, dy]);
    }
    console.log(`\n${rows.join('\n')}\n`);
  });
});

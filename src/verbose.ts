import {env} from '@tensorflow/tfjs-core';
import type {KernelFunc} from '@tensorflow/tfjs-core';

import type {FilterGradientGeometry} from './geometry';
import {registerFlagOnce} from './tuning_flags';

/**
 * The tfjs flag that makes every call of either kernel, on every backend, print one line saying
 * what ran (like oneDNN's ONEDNN_VERBOSE): `tf.env().set('CONV_BACKPROP_FILTERS_VERBOSE', true)`.
 *
 *     conv_backprop_filters_verbose,exec,<backend>,<kernel name>,<path>,<problem>,<ms>
 *
 * `path` is the implementation the kernel's plan chose (on cpu: `simd` or `loops` and the
 * threads; on webgl and webgpu: the pass and its splits; on tensorflow: the native kernel's
 * name, `native <kernel>`, or `composite (<reason>)`: see src/native/native_plan.ts). `problem` gives the input, outputDelta and result shapes, the layouts,
 * groups, strides, dilations and pads. `ms` is the time the kernel function took: on cpu and
 * wasm the computation; on webgl and webgpu the time to record the passes (the GPU runs them
 * later); on tensorflow the time to issue the native or composite ops. Defaults to false.
 */
export const CONV_BACKPROP_FILTERS_VERBOSE = 'CONV_BACKPROP_FILTERS_VERBOSE';

/** The first field of every verbose line. */
export const VERBOSE_PREFIX = 'conv_backprop_filters_verbose';

/** Registers the flag (idempotent; a value already set is kept). */
export function registerVerboseFlag() {
  registerFlagOnce(CONV_BACKPROP_FILTERS_VERBOSE, () => false);
}

function verboseEnabled(): boolean {
  registerVerboseFlag();
  return env().getBool(CONV_BACKPROP_FILTERS_VERBOSE);
}

/** What the running kernel call reported: the problem it solved and the path it took. */
interface Report {
  geometry?: FilterGradientGeometry;
  path?: string;
}

/** The report of the innermost kernel call in progress (undefined when verbose is off). */
let current: Report | undefined;

/**
 * Called by a kernel once it knows which path it takes; a no-op unless the verbose flag is on.
 * A kernel reporting more than once keeps the last path (a fallback after a plan fell through).
 */
export function reportPath(geometry: FilterGradientGeometry, path: string) {
  if (current === undefined) return;
  current.geometry = geometry;
  current.path = path;
}

/** `kernelFunc` printing the verbose line after each call when the flag is on. */
export function withVerboseLine(kernelName: string, backendName: string, kernelFunc: KernelFunc): KernelFunc {
  return args => {
    if (!verboseEnabled()) return kernelFunc(args);
    const outer = current;
    const report: Report = {};
    current = report;
    const start = now();
    try {
      const result = kernelFunc(args);
      const ms = now() - start;
      console.log(verboseLine(kernelName, backendName, report, ms));
      return result;
    } finally {
      current = outer;
    }
  };
}

function now(): number {
  return typeof performance !== 'undefined' ? performance.now() : Date.now();
}

const list = (values: readonly number[]) => values.join('x');

/** The line for one call (exported for tests of its format). */
export function verboseLine(kernelName: string, backendName: string, report: Report, ms: number): string {
  const geometry = report.geometry;
  const problem = geometry === undefined ? 'unknown' : describeProblem(geometry);
  return [VERBOSE_PREFIX, 'exec', backendName, kernelName, report.path ?? 'unknown', problem, ms.toFixed(3)].join(',');
}

/** The problem as the verbose line prints it. */
export function describeProblem(geometry: FilterGradientGeometry): string {
  const input = geometry.src.name === 'input' ? geometry.src : geometry.diffDst;
  const outputDelta = geometry.src.name === 'input' ? geometry.diffDst : geometry.src;
  const axes = geometry.axes;
  return [
    `input:${list(input.shape)}`,
    `outputDelta:${list(outputDelta.shape)}`,
    `filter:${list(geometry.filterShape)}`,
    `${geometry.dataFormat}/${geometry.filterFormat}`,
    `g${geometry.groups}`,
    `s${list(axes.map(a => a.stride))}`,
    `d${list(axes.map(a => a.dilation))}`,
    `pb${list(axes.map(a => a.padBegin))}`,
    `pe${list(axes.map(a => a.padEnd))}`,
  ].join(' ');
}

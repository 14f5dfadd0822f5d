import {env} from '@tensorflow/tfjs-core';

import {CanonicalTensor, FilterGradientGeometry, SpatialAxis, spatialAxesAs3d} from '../../../src/geometry';
import {windowRanges} from '../filter_gradient';

import {MICRO_KERNELS_WASM_BASE64} from './micro_kernels_wasm.generated';

/**
 * The tfjs flag choosing the WebAssembly SIMD path of the cpu and wasm kernels:
 * `tf.env().set('CONV_BACKPROP_FILTERS_WASM_SIMD', false)` runs the plain TypeScript loops
 * instead. Defaults to whether this JavaScript engine compiles WebAssembly SIMD.
 */
export const CONV_BACKPROP_FILTERS_WASM_SIMD = 'CONV_BACKPROP_FILTERS_WASM_SIMD';

let flagRegistered = false;

/** Registers the flag (idempotent; a value already set is kept). */
export function registerWasmSimdFlag() {
  if (flagRegistered) return;
  env().registerFlag(CONV_BACKPROP_FILTERS_WASM_SIMD, () => microKernelModule() !== null);
  flagRegistered = true;
}

export function wasmSimdEnabled(): boolean {
  registerWasmSimdFlag();
  return env().getBool(CONV_BACKPROP_FILTERS_WASM_SIMD) && microKernelModule() !== null;
}

interface MicroKernels {
  readonly memory: WebAssembly.Memory;
  heapBase(): number;
  accumulateSample(
      src: number, diffDst: number, acc: number, ranges: number, depthwise: boolean, srcIsVector: boolean,
      groups: number, vectorChannels: number, broadcastChannels: number, srcHeight: number, srcWidth: number,
      dstDepth: number, dstHeight: number, dstWidth: number, kernelDepth: number, kernelHeight: number,
      kernelWidth: number, strideDepth: number, strideHeight: number, strideWidth: number, blockRows: number,
      blockColumns: number): void;
}

/** undefined: not tried yet; null: this engine cannot compile it (no WebAssembly or no SIMD). */
let compiledModule: WebAssembly.Module|null|undefined;

function microKernelModule(): WebAssembly.Module|null {
  if (compiledModule === undefined) {
    try {
      const bytes = Uint8Array.from(atob(MICRO_KERNELS_WASM_BASE64), c => c.charCodeAt(0));
      // Synchronous compilation: the module is ~3.5 KB, under the 4 KB browsers allow on the main thread.
      compiledModule = new WebAssembly.Module(bytes);
    } catch {
      compiledModule = null;
    }
  }
  return compiledModule;
}

/**
 * One instance is kept between calls so its memory is reused, unless a call grew it past this:
 * WebAssembly memory never shrinks, so a large one is dropped and the next call starts afresh.
 */
const RETAINED_MEMORY_BYTES = 64 * 2 ** 20;
/** Larger problems (per sample, plus the float64 sums) take the TypeScript loops. */
const MAX_MEMORY_BYTES = 2 ** 30;
/** The data one block of positions may span in both tensors: about L1. */
const BLOCK_BYTES = 48 * 1024;
/** At most this many terms are summed in float32 before joining the float64 sums. */
const MAX_BLOCK_POSITIONS = 1024;
const PAGE_BYTES = 65536;

let retainedInstance: MicroKernels|undefined;

function instantiate(): MicroKernels {
  retainedInstance ??= new WebAssembly.Instance(microKernelModule()!).exports as unknown as MicroKernels;
  return retainedInstance;
}

const roundUp = (n: number, multiple: number) => Math.ceil(n / multiple) * multiple;

/** How one canonical tensor is laid out in the module's memory: positions × rowLength, channels-last. */
interface PackedLayout {
  readonly tensor: CanonicalTensor;
  readonly groups: number;
  /** Channels of each group in the packed row (the group's own channels, then zeros). */
  readonly channelsPerGroup: number;
  readonly rowLength: number;
  /** Sizes and element strides of the tensor's spatial axes, outermost first, as three. */
  readonly sizes: readonly number[];
  readonly strides: readonly number[];
}

/**
 * The filter gradient through the WebAssembly SIMD micro-kernels, or null when the problem is
 * too large for the module's memory (the caller then runs the TypeScript loops). Same
 * semantics as computeFilterGradient: positions whose window leaves src add nothing, sums are
 * float64 across blocks. src and diffDst may be views on another WebAssembly memory (the wasm
 * backend's heap): each sample is copied from them straight into this module's memory. The
 * gradient goes into `into` (every element is written) or a new array.
 */
export function computeFilterGradientSimd(
    geometry: FilterGradientGeometry, src: Float32Array, diffDst: Float32Array,
    into?: Float32Array): Float32Array|null {
  const {groups, batch} = geometry;
  const [depth, height, width] = spatialAxesAs3d(geometry.axes);
  const srcPerGroup = geometry.src.channelsPerGroup;
  const dstPerGroup = geometry.diffDst.channelsPerGroup;
  const depthwise = srcPerGroup === 1 && dstPerGroup === 1;
  // The vector side is the one with more channels per group (less padding to a multiple of 4).
  const srcIsVector = depthwise || srcPerGroup >= dstPerGroup;
  const vectorPerGroup = srcIsVector ? srcPerGroup : dstPerGroup;
  const broadcastPerGroup = srcIsVector ? dstPerGroup : srcPerGroup;
  const vectorChannels = depthwise ? 1 : roundUp(vectorPerGroup, 4);
  // Depthwise: the groups themselves, rounded up to 4, are the vector lanes of both tensors.
  const laneGroups = depthwise ? roundUp(groups, 4) : groups;
  const layoutOf = (tensor: CanonicalTensor, isVector: boolean, axisOf: (a: SpatialAxis) => [number, number]):
      PackedLayout => {
        const channelsPerGroup = isVector ? vectorChannels : broadcastPerGroup;
        return {
          tensor,
          groups,
          channelsPerGroup,
          rowLength: laneGroups * channelsPerGroup,
          sizes: [depth, height, width].map(a => axisOf(a)[0]),
          strides: [depth, height, width].map(a => axisOf(a)[1]),
        };
      };
  const srcLayout = layoutOf(geometry.src, srcIsVector, a => [a.srcSize, a.srcStride]);
  const dstLayout = layoutOf(geometry.diffDst, !srcIsVector || depthwise, a => [a.diffDstSize, a.diffDstStride]);
  const kernelVolume = depth.kernelSize * height.kernelSize * width.kernelSize;
  const sumCount = depthwise ? kernelVolume * laneGroups : groups * kernelVolume * broadcastPerGroup * vectorChannels;
  const srcBytes = 4 * srcLayout.rowLength * srcLayout.sizes.reduce((a, b) => a * b);
  const dstBytes = 4 * dstLayout.rowLength * dstLayout.sizes.reduce((a, b) => a * b);
  const rangeBytes = 12 * (depth.kernelSize + height.kernelSize + width.kernelSize);

  const kernels = instantiate();
  const sumsAt = roundUp(kernels.heapBase(), 16);
  const rangesAt = sumsAt + 8 * sumCount;
  const srcAt = roundUp(rangesAt + rangeBytes, 16);
  const dstAt = roundUp(srcAt + srcBytes, 16);
  const endAt = dstAt + dstBytes;
  if (endAt > MAX_MEMORY_BYTES) return null;
  if (endAt > kernels.memory.buffer.byteLength) {
    try {
      kernels.memory.grow(Math.ceil((endAt - kernels.memory.buffer.byteLength) / PAGE_BYTES));
    } catch {
      return null;  // the engine refused the memory: the loops need none beyond the result
    }
  }
  const buffer = kernels.memory.buffer;
  const sums = new Float64Array(buffer, sumsAt, sumCount);
  sums.fill(0);
  const ranges = new Int32Array(buffer, rangesAt, rangeBytes / 4);
  ranges.set([depth, height, width].flatMap(axis => windowRanges(axis).flatMap(r => [r.first, r.end, r.shift])));

  const blockPositions = Math.min(
      MAX_BLOCK_POSITIONS, Math.max(16, Math.floor(BLOCK_BYTES / (4 * (srcLayout.rowLength + dstLayout.rowLength)))));
  const blockColumns = Math.min(width.diffDstSize, blockPositions);
  const blockRows = Math.max(1, Math.floor(blockPositions / blockColumns));
  const packedSrc = new Float32Array(buffer, srcAt, srcBytes / 4);
  const packedDst = new Float32Array(buffer, dstAt, dstBytes / 4);
  for (let n = 0; n < batch; n++) {
    pack(src, n, srcLayout, packedSrc);
    pack(diffDst, n, dstLayout, packedDst);
    kernels.accumulateSample(
        srcAt, dstAt, sumsAt, rangesAt, depthwise, srcIsVector, laneGroups, vectorChannels, broadcastPerGroup,
        height.srcSize, width.srcSize, depth.diffDstSize, height.diffDstSize, width.diffDstSize, depth.kernelSize,
        height.kernelSize, width.kernelSize, depth.stride, height.stride, width.stride, blockRows, blockColumns);
  }

  const result = into ?? new Float32Array(geometry.filterSize);
  const fs = geometry.filterStrides;
  const kernelOffsets: number[] = [];
  for (let kd = 0; kd < depth.kernelSize; kd++) {
    for (let kh = 0; kh < height.kernelSize; kh++) {
      for (let kw = 0; kw < width.kernelSize; kw++) {
        kernelOffsets.push(kd * depth.filterStride + kh * height.filterStride + kw * width.filterStride);
      }
    }
  }
  kernelOffsets.forEach((kernelOffset, k) => {
    for (let g = 0; g < groups; g++) {
      if (depthwise) {
        result[g * fs.group + kernelOffset] = sums[k * laneGroups + g];
        continue;
      }
      const base = (g * kernelVolume + k) * broadcastPerGroup * vectorChannels;
      for (let b = 0; b < broadcastPerGroup; b++) {
        for (let v = 0; v < vectorPerGroup; v++) {
          const [sc, dc] = srcIsVector ? [v, b] : [b, v];
          result[g * fs.group + dc * fs.diffDstChannel + sc * fs.srcChannel + kernelOffset] =
              sums[base + b * vectorChannels + v];
        }
      }
    }
  });
  if (buffer.byteLength > RETAINED_MEMORY_BYTES) retainedInstance = undefined;
  return result;
}

/** Copies sample n of `data` into `packed`, channels-last with each group's channels padded. */
function pack(data: Float32Array, n: number, layout: PackedLayout, packed: Float32Array) {
  const {tensor, groups, channelsPerGroup, rowLength, sizes, strides} = layout;
  const perGroup = tensor.channelsPerGroup;
  const sampleBase = n * tensor.batchStride;
  const [depthSize, heightSize, widthSize] = sizes;
  const [depthStride, heightStride, widthStride] = strides;
  const contiguous = tensor.channelStride === 1 && rowLength === tensor.channels &&
      (widthSize === 1 || widthStride === tensor.channels) &&
      (heightSize === 1 || heightStride === widthSize * tensor.channels) &&
      (depthSize === 1 || depthStride === heightSize * widthSize * tensor.channels);
  if (contiguous) {  // NXC without padding: the sample as it is
    packed.set(data.subarray(sampleBase, sampleBase + packed.length));
    return;
  }
  if (rowLength !== groups * perGroup) packed.fill(0);
  const channelStride = tensor.channelStride;
  let at = 0;
  for (let d = 0; d < depthSize; d++) {
    for (let h = 0; h < heightSize; h++) {
      for (let w = 0; w < widthSize; w++, at += rowLength) {
        const position = sampleBase + d * depthStride + h * heightStride + w * widthStride;
        for (let g = 0; g < groups; g++) {
          const from = position + g * perGroup * channelStride;
          const to = at + g * channelsPerGroup;
          for (let c = 0; c < perGroup; c++) packed[to + c] = data[from + c * channelStride];
        }
      }
    }
  }
}

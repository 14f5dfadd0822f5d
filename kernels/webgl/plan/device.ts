import {env} from '@tensorflow/tfjs-core';
import type {MathBackendWebGL} from '@tensorflow/tfjs-backend-webgl';

import {registerFlagOnce, tunedProfile} from '../../../src/tuning_flags';

/**
 * The thresholds the webgl planner reads: how far it splits the reduction and which problems
 * each pass takes. DEFAULT_WEBGL_PROFILE holds the values tuned on SwiftShader (docs/webgl.md
 * gives the figures); a device with other costs gets its own profile without a pass changing.
 */
export interface WebglProfile {
  /** splitReduction: the fragments a split aims at, and the least work a split keeps. */
  readonly split: {
    /** Fragments a split aims at where a pass gives no count of its own (single target, dense loops). */
    readonly targetFragments: number;
    /** A split sums at least this many batch × diffDst positions per filter element its fragment writes. */
    readonly minPositionsPerOutput: number;
    /** A split sums at least this many multiply-adds a fragment. */
    readonly minProducts: number;
    readonly maxSplits: number;
  };
  /** Targets a multi-target fragment writes at most (the device may allow more draw buffers). */
  readonly maxTargets: number;
  /**
   * Written-out rows (dense, depthwise and one-channel rows): products a row's text holds at most
   * (depthwise: kernel height × width × row width vec2 multiply-adds; dense: kernel width × B ×
   * row width vec4 ones), which bounds the shader's length and its compile time: 1,008 at 3 × 3
   * over 112 positions, 784 at 7 wide over 112 (ResNet-50's first layer). Larger rows take the
   * passes that loop.
   */
  readonly maxWrittenRowProducts: number;
  readonly denseRows: {
    /** The widest diffDst rows dense rows take (wider ones: dense loops). */
    readonly maxWidth: number;
    readonly targetFragments: number;
    /**
     * The fewest texel reads a fragment's split gives it (0: no minimum): a fragment is not free
     * (its quad's set-up, 4–8 target writes, a share of the sum pass), so layers whose rows are
     * few or short take fewer, longer splits than the fragment count alone gives them.
     */
    readonly minFragmentReads: number;
  };
  /**
   * Depthwise rows aim at fewer fragments than depthwise loops: a fragment's set-up and its share of
   * pass 2 weigh against rows that each hold a whole image row's products, and the channel pairs
   * down the targets' rows give the threads work with few splits.
   */
  readonly depthwiseRows: {readonly maxWidth: number; readonly targetFragments: number};
  readonly oneChannelRows: {readonly maxWidth: number; readonly targetFragments: number};
  readonly depthwiseLoops: {
    /**
     * Fewer fragments than the dense passes: a depthwise-loops fragment's set-up (the kernel block's
     * ranges, its divisions) weighs more against its few products (6 elements a fragment).
     */
    readonly targetFragments: number;
    /**
     * Rows of up to this many positions run in segments (tapSegmentsLoop; 0: row by row): there a
     * row's set-up outweighs its steps; a segment's step chooses between the tested and untested
     * step each time, which long rows pay for more than their set-up.
     */
    readonly maxSegmentRowLength: number;
  };
  /** Taps per fragment at most along the innermost kernel axis (depthwise loops, one-channel loops): the step's reads and selects grow with them. */
  readonly maxTaps: number;
  readonly oneChannelLoops: {
    /**
     * Far fewer fragments than the dense passes: a thin layer's filter is small (200 elements at
     * 5 × 5, 1 → 8), so many fragments would be hundreds of short splits, each with its row
     * set-up and its read in pass 2.
     */
    readonly targetFragments: number;
    /**
     * (tap, channel pair) products a position at most: the step holds 4 times that many
     * multiply-adds, three times over (the loops at a row's ends and between), so this bounds
     * the shader's size and its compile time, which grows steeply with the step.
     */
    readonly maxTapPairs: number;
  };
}

/** Today's thresholds, tuned on SwiftShader (Chromium's CPU WebGL). */
export const DEFAULT_WEBGL_PROFILE: WebglProfile = Object.freeze({
  split: Object.freeze({targetFragments: 16384, minPositionsPerOutput: 4, minProducts: 256, maxSplits: 256}),
  maxTargets: 8,
  maxWrittenRowProducts: 1024,
  denseRows: Object.freeze({maxWidth: 128, targetFragments: 2048, minFragmentReads: 4096}),
  depthwiseRows: Object.freeze({maxWidth: 128, targetFragments: 512}),
  oneChannelRows: Object.freeze({maxWidth: 128, targetFragments: 512}),
  depthwiseLoops: Object.freeze({targetFragments: 4096, maxSegmentRowLength: 8}),
  maxTaps: 8,
  oneChannelLoops: Object.freeze({targetFragments: 512, maxTapPairs: 12}),
});

/**
 * The tuning flags (tfjs flags the benches set with `--variant FLAG=VALUE` for an A/B in one run)
 * and the profile field each sets (tunedWebglProfile). A row width of 0 leaves every problem of
 * that family to its looping pass; a minimum of 0 turns it off. The flag strings are what users
 * and bench commands set, so they keep their names: the one-channel passes' two
 * (…_THIN_ROWS_WIDTH, …_THIN_TAPS_TARGET_FRAGMENTS) call them thin rows and thin taps.
 */
export const WEBGL_TUNING_FLAGS = Object.freeze({
  'split.targetFragments': 'CONV_BACKPROP_FILTERS_WEBGL_TARGET_FRAGMENTS',
  'split.minPositionsPerOutput': 'CONV_BACKPROP_FILTERS_WEBGL_MIN_SPLIT_POSITIONS_PER_OUTPUT',
  'denseRows.maxWidth': 'CONV_BACKPROP_FILTERS_WEBGL_DENSE_ROWS_WIDTH',
  'denseRows.targetFragments': 'CONV_BACKPROP_FILTERS_WEBGL_DENSE_ROWS_TARGET_FRAGMENTS',
  'denseRows.minFragmentReads': 'CONV_BACKPROP_FILTERS_WEBGL_DENSE_ROWS_MIN_FRAGMENT_READS',
  'depthwiseRows.maxWidth': 'CONV_BACKPROP_FILTERS_WEBGL_DEPTHWISE_ROWS_WIDTH',
  'depthwiseRows.targetFragments': 'CONV_BACKPROP_FILTERS_WEBGL_DEPTHWISE_ROWS_TARGET_FRAGMENTS',
  'oneChannelRows.maxWidth': 'CONV_BACKPROP_FILTERS_WEBGL_THIN_ROWS_WIDTH',
  'depthwiseLoops.maxSegmentRowLength': 'CONV_BACKPROP_FILTERS_WEBGL_TAP_SEGMENTS',
  'depthwiseLoops.targetFragments': 'CONV_BACKPROP_FILTERS_WEBGL_TAP_TARGET_FRAGMENTS',
  'oneChannelLoops.targetFragments': 'CONV_BACKPROP_FILTERS_WEBGL_THIN_TAPS_TARGET_FRAGMENTS',
});
export const CONV_BACKPROP_FILTERS_WEBGL_TARGET_FRAGMENTS = WEBGL_TUNING_FLAGS['split.targetFragments'];
export const CONV_BACKPROP_FILTERS_WEBGL_MIN_SPLIT_POSITIONS_PER_OUTPUT = WEBGL_TUNING_FLAGS['split.minPositionsPerOutput'];
export const CONV_BACKPROP_FILTERS_WEBGL_DENSE_ROWS_WIDTH = WEBGL_TUNING_FLAGS['denseRows.maxWidth'];
export const CONV_BACKPROP_FILTERS_WEBGL_DENSE_ROWS_MIN_FRAGMENT_READS = WEBGL_TUNING_FLAGS['denseRows.minFragmentReads'];
export const CONV_BACKPROP_FILTERS_WEBGL_DEPTHWISE_ROWS_WIDTH = WEBGL_TUNING_FLAGS['depthwiseRows.maxWidth'];
export const CONV_BACKPROP_FILTERS_WEBGL_ONE_CHANNEL_ROWS_WIDTH = WEBGL_TUNING_FLAGS['oneChannelRows.maxWidth'];

/** `base` with the tuning flags applied (each registered with the base's value, so every flag exists whatever the problem). */
export function tunedWebglProfile(base: WebglProfile = DEFAULT_WEBGL_PROFILE): WebglProfile {
  return tunedProfile(base, WEBGL_TUNING_FLAGS);
}

/** What the planner knows of the device: the GL version and limits, the multi-target flag and the profile. */
export interface WebglDevice {
  readonly webglVersion: 1 | 2;
  /** CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET (WebGL 2 only). */
  readonly multiTarget: boolean;
  /** Targets one draw may write (WebGL 2's MAX_DRAW_BUFFERS and MAX_COLOR_ATTACHMENTS; 1 on WebGL 1). */
  readonly maxDrawBuffers: number;
  /** The largest texture side tfjs allocates unfolded (WEBGL_MAX_TEXTURE_SIZE). */
  readonly maxTextureSize: number;
  readonly profile: WebglProfile;
}

/**
 * The tfjs flag choosing, on WebGL 2, the multi-target passes for channels-last problems:
 * `tf.env().set('CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET', false)` runs the single-target
 * programs there instead. Defaults to true.
 */
export const CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET = 'CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET';

/** Registers the multi-target flag (idempotent; a value already set is kept). */
export function registerMultiTargetFlag() {
  registerFlagOnce(CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET, () => true);
}

const drawBufferLimits = new WeakMap<object, number>();

/** MAX_DRAW_BUFFERS and MAX_COLOR_ATTACHMENTS of a WebGL 2 context, the smaller, queried once per context. */
function maxDrawBuffersOf(backend: MathBackendWebGL): number {
  let limit = drawBufferLimits.get(backend.gpgpu);
  if (limit === undefined) {
    const gl = backend.gpgpu.gl as WebGL2RenderingContext;
    limit = Math.min(gl.getParameter(gl.MAX_DRAW_BUFFERS) as number, gl.getParameter(gl.MAX_COLOR_ATTACHMENTS) as number);
    drawBufferLimits.set(backend.gpgpu, limit);
  }
  return limit;
}

/** The device of a webgl backend under tfjs's flags, with `profile` (default: today's, tuning flags applied). */
export function webglDevice(backend: MathBackendWebGL, profile: WebglProfile = tunedWebglProfile()): WebglDevice {
  const webglVersion = env().getNumber('WEBGL_VERSION') === 2 ? 2 : 1;
  const multiTarget = webglVersion === 2 && env().getBool(CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET);
  return Object.freeze({
    webglVersion, multiTarget,
    maxDrawBuffers: multiTarget ? maxDrawBuffersOf(backend) : 1,
    maxTextureSize: env().getNumber('WEBGL_MAX_TEXTURE_SIZE'),
    profile,
  });
}

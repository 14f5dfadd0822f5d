import type {FilterGradientGeometry} from '../../../src/geometry';
import type {TargetLocation} from '../finish/arrange_targets';
import {Uniform, uniformValues} from '../glsl/builder';
import {PackedTexture, packedReadsUniforms} from '../glsl/packed_reads';
import type {MultiTargetProgram} from '../multi_target';
import type {WebglDevice} from '../plan/device';
import type {WebglInputs} from '../plan/inputs';
import type {TargetSplits} from '../finish/sum_target_splits';

/**
 * What a multi-target pass takes: {dense (several channels a group: dense loops, on both sides;
 * dense rows, one group of several src channels), depthwise (one src and one diffDst channel a
 * group), one src channel (one group)} × {a diffDst row's products written out in the text,
 * loops along the row}.
 */
export type PassFamily = 'dense' | 'depthwise' | 'oneSrcChannel';
export type PassForm = 'writtenRows' | 'loops';

/** The parameters every multi-target pass plans: where the targets hold each split. */
export interface MultiTargetParams {
  readonly targetSplits: TargetSplits;
}

/** The inputs' textures as a pass 1 program reads them (their sizes are uniforms; folding is in the text). */
export type PassTextures = {readonly src: PackedTexture; readonly diffDst: PackedTexture};

/**
 * A multi-target pass 1 (WebGL 2, channels-last data): it plans a problem (null: not one it
 * takes), says where it leaves each filter element, and makes its program from its plan and
 * the inputs' textures: its uniforms (one list: values, and declarations inside the text), the
 * key its text is made from, and the text from the key alone (kept per key: textPerKey), so the
 * key is the compiled program's cache key by construction. The planner (plan/planner.ts) tries
 * the passes in order; passProgram makes the program.
 */
export interface MultiTargetPass<Params extends MultiTargetParams = MultiTargetParams, Key = unknown> {
  /** The pass as the verbose line and the plan name it, e.g. 'dense rows'. */
  readonly name: string;
  readonly family: PassFamily;
  readonly form: PassForm;
  /** Its program's name (tf.profile, the bench's program counts). */
  readonly programName: string;
  /**
   * 'channelTexels' where a target texel holds two src × two diffDst channels of one kernel
   * offset, so ArrangeChannelTexelsProgram may write the filter packed when channels are its
   * innermost axes; 'targets' otherwise (ArrangeTargetsProgram).
   */
  readonly arrangement: 'channelTexels' | 'targets';
  /** How the pass reads src: 'rows', the packed view [positions, channels]; 'pairedPositions', [positions / 2, 2] (one channel). */
  readonly srcView: 'rows' | 'pairedPositions';
  plan(geometry: FilterGradientGeometry, device: WebglDevice, inputs: WebglInputs): Params | null;
  location(geometry: FilterGradientGeometry, params: Params): TargetLocation;
  /** The uniforms the program reads besides the packed reads' (packedReadsUniforms). */
  uniforms(geometry: FilterGradientGeometry, params: Params, textures: PassTextures): Uniform[];
  /** All the text is made from, the uniforms' declarations included. */
  textKey(geometry: FilterGradientGeometry, params: Params, textures: PassTextures, uniforms: readonly Uniform[]): Key;
  /** The text, from its key alone. */
  text(key: Key): string;
}

/** A pass's program for its plan and the inputs' textures. */
export function passProgram<Params extends MultiTargetParams, Key>(
    pass: MultiTargetPass<Params, Key>, geometry: FilterGradientGeometry, params: Params, textures: PassTextures): MultiTargetProgram {
  const uniforms = pass.uniforms(geometry, params, textures);
  return {
    name: pass.programName, source: pass.text(pass.textKey(geometry, params, textures, uniforms)), inputNames: ['src', 'diffDst'],
    uniforms: [...packedReadsUniforms(textures), ...uniformValues(uniforms)],
  };
}

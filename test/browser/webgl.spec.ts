/**
 * The case table and the PyTorch golden cases on webgl, in every environment tfjs runs webgl
 * in: WebGL 2 and 1, packed and unpacked, a float16-only device, and textures small enough that
 * tfjs must reshape them. Each environment is its own backend instance, made after its flags
 * are set, with the webgl kernels registered for it.
 *
 * The default environment (WebGL 2, packed) runs every case through every entry point, and the
 * golden cases. The others change how the same plans are written (GLSL 1), how inputs arrive
 * and are read (unpacked, folded textures), what textures hold (float16) or which programs run
 * (one render target): each runs the cases that exercise that, through the op function with
 * tensors and with tensor-likes (the two ways inputs reach the kernel; runKernel under either
 * name reaches it as the first does) — see ENVIRONMENTS.
 */
import * as tf from '@tensorflow/tfjs-core';
import {MathBackendWebGL} from '@tensorflow/tfjs-backend-webgl';

import {planReduction} from '../../kernels/webgl/plan/splits';
import {planOneChannelLoops} from '../../kernels/webgl/passes/loops/one_channel_taps';
import {planDepthwiseLoops} from '../../kernels/webgl/passes/loops/depthwise_taps';
import {planDenseLoops} from '../../kernels/webgl/passes/loops/dense_tiles';
import {
  computeGeometry, CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET, convolutionBackpropFilters, convTransposeBackpropFilters, OpName,
} from '../../kernels/index';
import {multiTargetProgramCount} from '../../kernels/webgl/multi_target';
import {CASES} from '../cases';
import golden from '../golden/golden.json';
import {accumulationLength, float16Tolerance} from '../helpers/float16_tolerance';
import {runCaseEverywhere} from '../helpers/run_case';
import {expectClose, resourceCounts, seededValues} from '../helpers/util';
import {packing, useWebglBackend} from '../helpers/webgl_flags';
import {ReferenceAttrs, referenceFilterGradient, referenceForCall} from '../reference';

interface WebglEnvironment {
  name: string;
  flags: Record<string, number | boolean>;
  /**
   * Whether textures hold float16 (a float16-only device): results then have the tolerance of
   * test/helpers/float16_tolerance.ts, measured there; else 1e-4 (float32 textures, float32 sums).
   */
  float16: boolean;
  /** Whether inputs should arrive as packed textures (made by a packed op). */
  packedInputs: boolean;
  /**
   * Which cases run: 'all', every case and golden case through every entry point; 'layouts',
   * every problem of the table in both data layouts (the layout decides the plan) with its
   * filter formats and filter-shape sources in turn; 'multiTarget', of those, the ones a
   * multi-target pass would take on WebGL 2 (dense, depthwise or one-channel channels-last).
   */
  cases: 'all' | 'layouts' | 'multiTarget';
}

const ENVIRONMENTS: WebglEnvironment[] = [
  {name: 'webgl2 packed', flags: {WEBGL_VERSION: 2, ...packing(true)}, float16: false, packedInputs: true, cases: 'all'},
  // Inputs as unpacked textures: the multi-target passes and packed tiles pack them, the other
  // single-target programs read them directly.
  {name: 'webgl2 unpacked', flags: {WEBGL_VERSION: 2, ...packing(false)}, float16: false, packedInputs: false, cases: 'layouts'},
  // The single-target programs where WebGL 2 would draw to several targets.
  {
    name: 'webgl2 packed, one render target',
    flags: {WEBGL_VERSION: 2, ...packing(true), [CONV_BACKPROP_FILTERS_WEBGL_MULTI_TARGET]: false},
    float16: false, packedInputs: true, cases: 'multiTarget',
  },
  // GLSL ES 1.0 (loops need constant bounds): every single-target program in its WebGL 1 form; no multi-target passes.
  {name: 'webgl1 packed', flags: {WEBGL_VERSION: 1, ...packing(true)}, float16: false, packedInputs: true, cases: 'layouts'},
  {name: 'webgl1 unpacked', flags: {WEBGL_VERSION: 1, ...packing(false)}, float16: false, packedInputs: false, cases: 'layouts'},
  // float16 textures: partial sums and their second pass in half precision.
  {
    name: 'float16 device',
    flags: {WEBGL_VERSION: 2, ...packing(false), WEBGL_RENDER_FLOAT32_ENABLED: false, WEBGL_FORCE_F16_TEXTURES: true},
    float16: true, packedInputs: false, cases: 'layouts',
  },
  // Textures folded at 64 texels a side: inputs read through tfjs's samplers or the folded cursors.
  {
    name: 'max texture size 64', flags: {WEBGL_VERSION: 2, ...packing(true), WEBGL_MAX_TEXTURE_SIZE: 64},
    float16: false, packedInputs: true, cases: 'layouts',
  },
];

/**
 * Every problem of the case table once per data layout, with the filter format (and with it the
 * filter-shape source) turning from problem to problem and between the two layouts, so every
 * format and source runs in both layouts across the table.
 */
const ONE_CASE_PER_LAYOUT = (() => {
  const variants = new Map<string, Map<string, Array<typeof CASES[number]>>>();  // problem → layout → cases
  for (const c of CASES) {
    const [problem, dataFormat] = c.id.split('/');
    const layouts = variants.get(problem) ?? new Map<string, Array<typeof CASES[number]>>();
    layouts.set(dataFormat, [...(layouts.get(dataFormat) ?? []), c]);
    variants.set(problem, layouts);
  }
  return [...variants.values()].flatMap((layouts, p) => [...layouts.values()].map((cases, l) => cases[(p + l) % cases.length]));
})();

function size(shape: number[]) {
  return shape.reduce((a, b) => a * b, 1);
}

for (const environment of ENVIRONMENTS) {
  describe(`webgl, ${environment.name}:`, () => {
    const backendName = `webgl-${environment.name.replace(/\W+/g, '-')}`;
    // Inputs made by a packed or an unpacked op, so they arrive on the GPU as the environment has them.
    const place = (values: Float32Array, shape: number[]) => tf.tidy(() => tf.mul(tf.tensor(values, shape), 1));

    useWebglBackend(backendName, environment.flags);

    it(`stores float${environment.float16 ? 16 : 32} textures, as the environment intends`, () => {
      // 1 + 1e-4 survives in float32 and rounds to 1 in float16 (whose spacing near 1 is ~1e-3).
      const sum = tf.tidy(() => tf.add(tf.tensor1d([1]), tf.tensor1d([1e-4])).dataSync()[0]);
      expect(sum === 1).toBe(environment.float16);
    });

    it('places inputs as the environment intends (packed or not)', () => {
      const t = place(new Float32Array(24), [2, 3, 4]);
      const backend = tf.backend() as MathBackendWebGL;
      expect(backend.texData.get(t.dataId).isPacked === true).toBe(environment.packedInputs);
      t.dispose();
    });

    /** The tolerance of a call whose reduction sums `length` products. */
    const toleranceFor = (length: number) => environment.float16 ? float16Tolerance(length) : {atol: 1e-4, rtol: 1e-4};
    const options = {place};

    /** Whether a multi-target pass would take the problem on WebGL 2 (flag on, 8 targets, as SwiftShader has). */
    const multiTarget = (op: string, inputShape: number[], outputDeltaShape: number[], attrs: object) => {
      const geometry = computeGeometry(
          op as OpName, {input: {shape: inputShape, dtype: 'float32'}, outputDelta: {shape: outputDeltaShape, dtype: 'float32'}},
          attrs as Record<string, unknown>);
      return planDenseLoops(geometry, 8, 4096) !== null || planDepthwiseLoops(geometry, 8, 4096, false) !== null ||
          planOneChannelLoops(geometry, 8, 4096) !== null;
    };
    const cases = environment.cases === 'all' ? CASES :
        environment.cases === 'layouts' ? ONE_CASE_PER_LAYOUT :
        ONE_CASE_PER_LAYOUT.filter(c => multiTarget(c.op, c.inputShape, c.outputDeltaShape, {...c.attrs, filterShape: c.kernel}));
    const caseOptions = environment.cases === 'all' ? options : {...options, opsOnly: true};
    for (const c of cases) {
      it(c.id, () => {
        const length = accumulationLength(
            c.op === 'ConvTransposeBackpropFilters', c.inputShape, c.outputDeltaShape, (c.attrs as {dataFormat?: 'NXC' | 'NCX'}).dataFormat);
        const input = {shape: c.inputShape, values: seededValues(size(c.inputShape), c.seed)};
        const outputDelta = {shape: c.outputDeltaShape, values: seededValues(size(c.outputDeltaShape), c.seed + 1000)};
        const expected = referenceFilterGradient(
            c.op === 'ConvTransposeBackpropFilters', input, outputDelta,
            {...(c.attrs as Omit<ReferenceAttrs, 'kernel'>), kernel: c.kernel});
        runCaseEverywhere({...c, input, outputDelta, expected}, {...caseOptions, ...toleranceFor(length)});
      });
    }

    // PyTorch's values for the op's definition: the kernel is the same in every environment,
    // which the case table checks against the float64 reference.
    if (environment.cases === 'all') {
      for (const c of golden.cases) {
        it(`golden ${c.id}`, () => {
          const length = accumulationLength(
              c.op === 'ConvTransposeBackpropFilters', c.input.shape, c.outputDelta.shape,
              (c.attrs as {dataFormat?: 'NXC' | 'NCX'}).dataFormat);
          runCaseEverywhere({...c, op: c.op as OpName}, {...options, ...toleranceFor(length)});
        });
      }
    }

    it('splits long reductions (depthwise on a larger image) and still sums exactly', () => {
      // 3600 elements: fits the 64×64 texture limit of the last environment.
      const inputShape = [1, 30, 30, 4];
      const outputDeltaShape = [1, 30, 30, 4];
      const attrs = {strides: [1, 1], autoPad: 'same_upper' as const, groups: 4, filterShape: [3, 3]};
      const inputValues = seededValues(size(inputShape), 5);
      const outputDeltaValues = seededValues(size(outputDeltaShape), 6);
      const geometry = computeGeometry(
          'ConvolutionBackpropFilters',
          {input: {shape: inputShape, dtype: 'float32'}, outputDelta: {shape: outputDeltaShape, dtype: 'float32'}},
          attrs);
      expect(planReduction(geometry).splits).toBeGreaterThan(1);
      const expected = referenceForCall(
          false, {shape: inputShape, values: inputValues}, {shape: outputDeltaShape, values: outputDeltaValues}, attrs).values;
      const input = place(inputValues, inputShape);
      const outputDelta = place(outputDeltaValues, outputDeltaShape);
      const before = resourceCounts();
      const result = convolutionBackpropFilters(input, outputDelta, attrs);
      const {atol, rtol} = toleranceFor(accumulationLength(false, inputShape, outputDeltaShape));
      expectClose(result.dataSync(), expected, 'depthwise', atol, rtol);
      result.dispose();
      expect(resourceCounts()).toEqual(before);
      tf.dispose([input, outputDelta]);
    });

    // Where one program serves every batch size: WebGL 2 with textures holding their tensors
    // row-major. (WebGL 1 loops need constant bounds, so its shaders bake in the row count;
    // textures folded under a small WEBGL_MAX_TEXTURE_SIZE are read through tfjs's samplers,
    // whose text bakes in shapes. Both compile once per batch size.)
    if (environment.flags.WEBGL_VERSION === 2 && environment.flags.WEBGL_MAX_TEXTURE_SIZE === undefined) {
      it('compiles no new shader for a new batch size', () => {
        // tfjs shares compiled programs between backends of one WebGL version: count ours only.
        const backend = tf.backend() as MathBackendWebGL;
        const binaryCache = (backend as unknown as {binaryCache: Record<string, unknown>}).binaryCache;
        const ours = () => multiTargetProgramCount(backend.gpgpu) +
            Object.keys(binaryCache)
                .filter(key => /^(FilterGradient|ArrangeTiles|ArrangeTargets|ArrangeChannelTexels|SumSplits)Program/.test(key)).length;
        // One problem per way pass 1 reads: packed tiles, tiles, kernel taps, single elements.
        const problems = [
          {input: [4, 4, 6], outputDelta: [4, 4, 4], attrs: {strides: [1, 1], autoPad: 'same_upper' as const, filterShape: [3, 3]}},
          {
            input: [6, 4, 4], outputDelta: [4, 4, 4],
            attrs: {strides: [1, 1], autoPad: 'same_upper' as const, filterShape: [3, 3], dataFormat: 'NCX' as const},
          },
          {
            input: [5, 5, 4], outputDelta: [3, 3, 4],
            attrs: {strides: [2, 2], padsBegin: [1, 1], padsEnd: [1, 1], groups: 4, filterShape: [3, 3]},
          },
          {input: [4, 4, 4], outputDelta: [4, 4, 4], attrs: {strides: [1, 1], groups: 4, filterShape: [1, 1]}},
        ];
        const compiledAt = (batch: number) => {
          const before = ours();
          for (const p of problems) {
            const input = place(seededValues(batch * size(p.input), batch), [batch, ...p.input]);
            const outputDelta = place(seededValues(batch * size(p.outputDelta), batch + 1), [batch, ...p.outputDelta]);
            tf.dispose([convolutionBackpropFilters(input, outputDelta, p.attrs), input, outputDelta]);
          }
          return ours() - before;
        };
        // Batch sizes no other environment uses: the programs of earlier environments stay in
        // tfjs's cache (see removeWebglBackend), and one of theirs must not pass for a new one.
        const batch = 2 + 3 * ENVIRONMENTS.indexOf(environment);
        compiledAt(batch);
        // A batch whose reductions split, so the program adding a split pass's splits (one per
        // target count, whatever the shapes) is compiled too.
        compiledAt(batch + 64);
        expect(compiledAt(batch + 1) + compiledAt(batch + 2)).toBe(0);
      });
    }

    it('returns a zero gradient for a batch of 0', () => {
      const input = tf.zeros([0, 4, 4, 2]);
      const outputDelta = tf.zeros([0, 2, 2, 3]);
      const result = convTransposeBackpropFilters(outputDelta, input, {strides: [2, 2], filterShape: [2, 2]});
      expect(result.shape).toEqual([2, 2, 3, 2]);
      expect(Array.from(result.dataSync())).toEqual(new Array(24).fill(0));
      tf.dispose([input, outputDelta, result]);
    });
  });
}

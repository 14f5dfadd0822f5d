import '@tensorflow/tfjs-core/dist/register_all_gradients';  // tfjs's own gradients: one of the two configurations

import * as tf from '@tensorflow/tfjs-core';

import {buildTrainingModel, modelConvolutions, TRAINING_MODELS} from '../bench/training_models';
import {FILTER_GRADIENT_KERNELS, runTrainingModel, THREADS_AB_CONFIGS} from '../bench/training_step';
import {CONV_BACKPROP_FILTERS_THREADS, CONV_BACKPROP_FILTERS_VERBOSE, dropInGradientsInstalled} from '../kernels/index';
import {VERBOSE_PREFIX} from '../src/verbose';

/**
 * Keeps `npm run bench:training` from rotting: every model of bench/training_models.ts builds
 * with tf.layers at its real size, and the bench's own step runner (bench/training_step.ts)
 * trains each one on cpu with tfjs's gradients and with the drop-in ones — at the model's
 * smaller test image size (a real-size step takes seconds with tfjs's cpu filter gradients) —
 * with tf.profile finding each configuration's filter-gradient kernels, and nothing left behind.
 */
describe('bench:training models (cpu)', () => {
  beforeAll(async () => {
    await tf.setBackend('cpu');
  });

  it('has the workload file\'s models, each id once', () => {
    const ids = TRAINING_MODELS.map(m => m.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(jasmine.arrayContaining(['mnist', 'mnist3x3', 'cifar', 'speech', 'mobilenet']));
  });

  it('runs the drop-in on 1 thread beside the N-thread one with --threads-ab, then puts the thread count back', async () => {
    const spec = TRAINING_MODELS.find(m => m.id === 'mnist')!;
    const threads = tf.env().getNumber(CONV_BACKPROP_FILTERS_THREADS);
    expect(threads).withContext('the suite runs on threads (test/helpers/setup.ts)').toBeGreaterThan(1);
    const paths: string[] = [];
    const log = console.log;
    console.log = (...args: unknown[]) => {
      const line = args.map(String).join(' ');
      if (line.startsWith(VERBOSE_PREFIX)) paths.push(line.split(',')[4]);
    };
    tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, true);
    let result;
    try {
      result = await runTrainingModel(
          spec, 2, {warmUpSteps: 1, minPairs: 1, maxPairs: 1, budgetMs: 0, profile: 'every-step'}, () => {},
          spec.smallInputShape, THREADS_AB_CONFIGS);
    } finally {
      tf.env().set(CONV_BACKPROP_FILTERS_VERBOSE, false);
      console.log = log;
    }
    expect(Object.keys(result.configs).sort()).toEqual(['dropIn', 'dropInOneThread', 'tfjs']);
    for (const config of THREADS_AB_CONFIGS) {
      expect(result.configs[config]!.error).withContext(config).toBeNull();
      expect(result.configs[config]!.stepMs.length).withContext(config).toBe(1);
    }
    // Per filter gradient, a warm-up and a timed step of each drop-in configuration: on 1 thread and on N.
    expect(paths.filter(p => /^simd( relaxed)? threads=1$/.test(p)).length).toBeGreaterThan(0);
    expect(paths.filter(p => new RegExp(`^simd( relaxed)? threads=${threads}$`).test(p)).length).toBeGreaterThan(0);
    expect(tf.env().getNumber(CONV_BACKPROP_FILTERS_THREADS)).toBe(threads);
    expect(result.leakedTensors).toBe(0);
  }, 120000);

  for (const spec of TRAINING_MODELS) {
    describe(spec.id, () => {
      it('builds at its real size: class scores out, convolutions where the workload file has them', () => {
        const before = tf.memory().numTensors;
        const model = buildTrainingModel(spec);
        expect(model.outputs[0].shape).toEqual([null, spec.classes]);
        const convolutions = modelConvolutions(model, spec.batch);
        expect(convolutions.length).toBeGreaterThan(0);
        // The first layer reads the example shape the workload file gives.
        expect(convolutions[0].inputShape).toEqual([spec.batch, ...spec.inputShape]);
        model.optimizer.dispose();
        model.dispose();
        expect(tf.memory().numTensors).withContext('tensors left behind').toBe(before);
      });

      it('trains one step with tfjs\'s gradients and one with the drop-in ones, profiled, without leaks', async () => {
        const result = await runTrainingModel(
            spec, 2, {warmUpSteps: 1, minPairs: 1, maxPairs: 1, budgetMs: 0, profile: 'every-step'}, () => {},
            spec.smallInputShape);
        expect(dropInGradientsInstalled()).withContext('tfjs\'s own gradients are back').toBe(false);
        expect(result.pairs).toBe(1);
        expect(result.leakedTensors).withContext('tensors left behind').toBe(0);
        expect(result.tensorsLeftByFailures).toBe(0);
        const depthwise = spec.layers.some(l => l.layer === 'depthwiseConv2d');
        const expectedKernels = {
          tfjs: ['Conv2DBackpropFilter', ...(depthwise ? ['DepthwiseConv2dNativeBackpropFilter'] : [])],
          dropIn: ['ConvolutionBackpropFilters'],
        };
        for (const config of ['tfjs', 'dropIn'] as const) {
          const c = result.configs[config]!;
          expect(c.error).withContext(config).toBeNull();
          expect(c.stepMs.length).withContext(config).toBe(1);
          expect(Number.isFinite(c.lastLoss)).withContext(`${config}: loss ${c.lastLoss}`).toBe(true);
          const profile = c.profile!;
          expect(profile).withContext(config).not.toBeNull();
          expect(profile.filterGradientKernels.map(k => k.name).sort()).withContext(config).toEqual(expectedKernels[config].sort());
          expect(profile.filterGradientKernels.every(k => FILTER_GRADIENT_KERNELS.has(k.name))).toBe(true);
          // One filter gradient per convolution layer with a trainable filter.
          const filters = spec.layers.filter(l => l.layer === 'conv2d' || l.layer === 'depthwiseConv2d').length;
          expect(profile.filterGradientKernels.reduce((n, k) => n + k.calls, 0)).withContext(config).toBe(filters);
          expect(profile.filterGradientMs).toBeLessThanOrEqual(profile.kernelMs);
          expect(profile.kernelMs).toBeGreaterThan(0);
        }
      }, 120000);
    });
  }
});

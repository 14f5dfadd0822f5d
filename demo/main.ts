/**
 * `npm start`: trains the demo model (demo/model.ts: this package's grouped, dilated
 * `convolution` and a tf.layers.conv2d with dilationRate 2) on the cpu backend, with a progress
 * bar per epoch, then checks every parameter's gradient against finite differences. Exits
 * non-zero if training diverges (a loss that is not finite, or a last epoch's loss not below
 * half the loss before training) or a gradient check fails.
 */
import '@tensorflow/tfjs-core/dist/register_all_gradients';  // gradients of tanh, add, mean… (tfjs-core alone has none)
import '@tensorflow/tfjs-backend-cpu';

import * as tf from '@tensorflow/tfjs-core';
import {checkGradients} from 'tfjs-conv-backprop-filters';

import {DemoTraining, makeBatch, meanSquaredError} from './model';

const EPOCHS = 8;
const STEPS_PER_EPOCH = 10;
const BATCH_SIZE = 8;
const BAR_WIDTH = 24;
/** Adam's step size; DEMO_LEARNING_RATE overrides it (a large one shows the divergence check). */
const LEARNING_RATE = Number(process.env.DEMO_LEARNING_RATE ?? 0.01);

function progressLine(epoch: number, step: number, loss: number): string {
  const filled = Math.round((step / STEPS_PER_EPOCH) * BAR_WIDTH);
  return `epoch ${String(epoch).padStart(String(EPOCHS).length)}/${EPOCHS} ` +
      `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${String(step).padStart(2)}/${STEPS_PER_EPOCH}  ` +
      `loss ${loss.toFixed(4)}`;
}

/** Trains EPOCHS epochs; returns the loss before the first update and each epoch's mean loss. */
async function train(training: DemoTraining): Promise<{initial: number; epochs: number[]}> {
  const interactive = Boolean(process.stdout.isTTY);
  const epochs: number[] = [];
  let initial = NaN;
  for (let epoch = 1; epoch <= EPOCHS; epoch++) {
    let sum = 0;
    for (let step = 1; step <= STEPS_PER_EPOCH; step++) {
      const loss = await training.step();
      if (!Number.isFinite(loss)) throw new Error(`training diverged: loss ${loss} at epoch ${epoch}, step ${step}`);
      if (epoch === 1 && step === 1) initial = loss;
      sum += loss;
      if (interactive) process.stdout.write(`\r${progressLine(epoch, step, sum / step)}`);
    }
    epochs.push(sum / STEPS_PER_EPOCH);
    process.stdout.write(`${interactive ? '\r' : ''}${progressLine(epoch, STEPS_PER_EPOCH, sum / STEPS_PER_EPOCH)}\n`);
  }
  return {initial, epochs};
}

/** Every parameter's gradient of the loss on a small batch against central finite differences. */
function gradientCheckTable(training: DemoTraining): boolean {
  const {x, y} = makeBatch(training.teacher, 2, 99);
  const parameters = training.student.parameters;
  const values = parameters.map(p => tf.clone(p.variable));
  const layerAgrees = tf.tidy(
      () => tf.max(tf.abs(tf.sub(training.student.predict(x), training.student.predictWith(values, x)))).dataSync()[0]);
  console.log(`\ngradient check of the loss on a batch of 2 (central differences, 24 elements and one random direction per tensor;`);
  console.log(`the layer's part through tf.fused.conv2d, which differs from the layer by ${layerAgrees.toExponential(1)}):\n`);
  let ok = layerAgrees < 1e-5;
  try {
    const report = checkGradients(
        (...v) => meanSquaredError(training.student.predictWith(v, x), y), values, {maxElementsPerInput: 24});
    console.log(`  ${'parameter'.padEnd(14)}${'what'.padEnd(40)}${'shape'.padEnd(14)}max error`);
    parameters.forEach((p, i) => {
      const error = report.inputs[i].maxError;
      console.log(`  ${p.name.padEnd(14)}${p.what.padEnd(40)}${`[${p.variable.shape}]`.padEnd(14)}${error.toExponential(2)}`);
    });
  } catch (e) {
    console.log(String((e as Error).message));  // checkGradients' report of the failing tensors
    ok = false;
  }
  tf.dispose([x, y, ...values]);
  return ok;
}

async function main(): Promise<void> {
  // Silences tfjs's "install tfjs-node for speed" banner, which would land in the progress bars.
  tf.env().set('IS_TEST', true);
  await tf.setBackend('cpu');
  const start = Date.now();
  console.log(`training on ${tf.getBackend()}: ${EPOCHS} epochs of ${STEPS_PER_EPOCH} Adam steps (learning rate ${LEARNING_RATE}), batches of ${BATCH_SIZE} ` +
              `random inputs [16,16,4], targets from a teacher of the same architecture\n`);
  const training = new DemoTraining(BATCH_SIZE, LEARNING_RATE);
  try {
    const {initial, epochs} = await train(training);
    const last = epochs[epochs.length - 1];
    console.log(`\nloss ${initial.toFixed(4)} before training → ${last.toFixed(4)} in the last epoch ` +
                `(${initial > last ? `${(initial / last).toFixed(1)}× lower` : `${(last / initial).toFixed(1)}× higher`}) ` +
                `in ${((Date.now() - start) / 1000).toFixed(1)} s`);
    // Diverging: the loss ends up not even halved from where it started (or not finite, above).
    if (!(last < 0.5 * initial)) {
      throw new Error(`training diverged: the last epoch's loss ${last.toFixed(4)} is not below half the initial ${initial.toFixed(4)}`);
    }
    const gradientsOk = gradientCheckTable(training);
    console.log(`\ndone in ${((Date.now() - start) / 1000).toFixed(1)} s`);
    if (!gradientsOk) throw new Error('gradient check failed');
  } finally {
    training.dispose();
  }
}

main().catch(e => {
  console.error(`\n${(e as Error).message ?? e}`);
  process.exitCode = 1;
});

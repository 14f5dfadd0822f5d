/**
 * The browser demo (`npm run demo:web`): the model of demo/model.ts trained on the backend the
 * page's choice names (`?backend=webgl|webgpu|wasm|cpu`, webgl by default), with the loss and
 * the time per training step shown live. `window.demoState` is what the end-to-end test (test/demo_web.spec.ts) reads.
 */
import '@tensorflow/tfjs-core/dist/register_all_gradients';  // gradients of tanh, add, mean…
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-webgl';
import '@tensorflow/tfjs-backend-webgpu';

import * as tf from '@tensorflow/tfjs-core';
import {setWasmPaths} from '@tensorflow/tfjs-backend-wasm';

import {DemoTraining} from '../model';

export interface DemoState {
  backend?: string;
  steps: number;
  /** Milliseconds per training step (the step's loss read back included), one per step. */
  stepMs: number[];
  losses: number[];
  done: boolean;
  error?: string;
}

const params = new URLSearchParams(location.search);
const BACKENDS = ['webgl', 'webgpu', 'wasm', 'cpu'];
const chosen = params.get('backend') ?? 'webgl';
const state: DemoState = {steps: Number(params.get('steps') ?? 200), stepMs: [], losses: [], done: false};
(window as unknown as {demoState: DemoState}).demoState = state;

const canvas = document.getElementById('plot') as HTMLCanvasElement;
const status = document.getElementById('status') as HTMLElement;

/** The losses on a log scale, step on x; redrawn whole each step (a few hundred points). */
function plot(losses: number[], steps: number): void {
  const context = canvas.getContext('2d')!;
  const {width, height} = canvas;
  const margin = {left: 56, right: 12, top: 12, bottom: 28};
  context.clearRect(0, 0, width, height);
  context.font = '12px system-ui, sans-serif';
  context.strokeStyle = '#999';
  context.strokeRect(margin.left, margin.top, width - margin.left - margin.right, height - margin.top - margin.bottom);
  if (losses.length === 0) return;
  const logs = losses.map(Math.log10);
  const top = Math.ceil(Math.max(...logs) * 2) / 2;
  const bottom = Math.min(Math.floor(Math.min(...logs) * 2) / 2, top - 0.5);
  const x = (i: number) => margin.left + (i / Math.max(1, steps - 1)) * (width - margin.left - margin.right);
  const y = (v: number) => margin.top + ((top - v) / (top - bottom)) * (height - margin.top - margin.bottom);
  context.fillStyle = '#555';
  for (let v = bottom; v <= top + 1e-9; v += 0.5) {
    context.fillText(10 ** v >= 0.01 ? (10 ** v).toPrecision(2) : (10 ** v).toExponential(0), 4, y(v) + 4);
  }
  context.fillText('step', width / 2, height - 8);
  context.strokeStyle = '#1f6feb';
  context.lineWidth = 2;
  context.beginPath();
  logs.forEach((v, i) => (i === 0 ? context.moveTo(x(i), y(v)) : context.lineTo(x(i), y(v))));
  context.stroke();
}

/** The backend choice: a select that reloads the page with ?backend=… (steps kept). */
function backendChoice(): void {
  const select = document.getElementById('backend') as HTMLSelectElement;
  for (const name of BACKENDS) select.add(new Option(name, name, name === chosen, name === chosen));
  select.addEventListener('change', () => {
    params.set('backend', select.value);
    location.search = params.toString();
  });
}

async function main(): Promise<void> {
  backendChoice();
  if (!BACKENDS.includes(chosen)) throw new Error(`unknown backend '${chosen}' (${BACKENDS.join(', ')})`);
  setWasmPaths('/wasm/');
  if (!(await tf.setBackend(chosen))) throw new Error(`the ${chosen} backend did not start in this browser`);
  await tf.ready();
  state.backend = tf.getBackend();
  const training = new DemoTraining(8);
  const start = performance.now();
  for (let step = 1; step <= state.steps; step++) {
    const stepStart = performance.now();
    const loss = await training.step();
    state.stepMs.push(performance.now() - stepStart);
    if (!Number.isFinite(loss)) throw new Error(`training diverged: loss ${loss} at step ${step}`);
    state.losses.push(loss);
    plot(state.losses, state.steps);
    const seconds = (performance.now() - start) / 1000;
    status.textContent = `backend ${state.backend}   step ${step}/${state.steps}   loss ${loss.toFixed(4)}   ` +
        `${state.stepMs[state.stepMs.length - 1].toFixed(1)} ms/step   ` +
        `(first ${state.losses[0].toFixed(4)})   ${seconds.toFixed(1)} s`;
    await tf.nextFrame();
  }
  training.dispose();
  state.done = true;
  status.textContent += '   done';
}

main().catch(e => {
  state.error = String((e as Error)?.stack ?? e);
  status.textContent = `error: ${state.error}`;
});

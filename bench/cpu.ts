/**
 * `npm run bench [-- options]` — filter-gradient throughput on the Node backends, over named
 * workloads from oneDNN's benchdnn shape lists (bench/workloads.ts), side by side in one run:
 *
 * - ours on tfjs's `cpu` backend, WebAssembly SIMD micro-kernels on 1 thread and on all threads
 *   (tfjs flag CONV_BACKPROP_FILTERS_THREADS; `--threads N`, default the cores this machine
 *   reports, at most 8), and the plain TypeScript loops (CONV_BACKPROP_FILTERS_WASM_SIMD false);
 *   with `--relaxed-ab` also the relaxed-SIMD build, the other rows forced to the plain one;
 * - ours on `wasm` (@tensorflow/tfjs-backend-wasm): the same micro-kernels reading views on the
 *   backend's heap, on 1 thread and on all threads;
 * - PyTorch (aten::convolution_backward on channels-last tensors, its oneDNN fast path) on 1
 *   thread and on the same number of threads, through /usr/bin/python3 when it imports torch
 *   (bench/pytorch_server.py, two child processes of this one);
 * - tfjs's built-in kernels as anchors: Conv3DBackpropFilterV2 on wasm (2-D problems without
 *   groups run through it with a depth of 1), and Conv2DBackpropFilter on cpu for one ResNet-50
 *   shape (~0.015 GFLOP/s, so one run).
 *
 * Then the training layers (`conv/shapes_tfjs_training`, every layer at the batch its file
 * gives). A timed run of ours is several back-to-back calls with one read-back where a call is
 * short (DESIGN.md §7; RUN_MS in bench/cpu/picks.ts).
 *
 * Every implementation of a workload is warmed up once (that call also measures memory), then
 * the timed runs go round-robin over the implementations, so noise from a shared machine hits
 * them alike. Results of ours are compared with the TypeScript loops'. Writes bench/results/
 * cpu.md, cpu.svg, cpu_training.svg and cpu.json (named for the options: see Options.resultName),
 * and prints the tables. The parts: options
 * (bench/cpu/options.ts), the workloads (picks.ts), the implementations (implementations.ts,
 * pytorch.ts), the timing (run_workload.ts) and the report (report.ts). `--help` lists the options.
 */
import './cpu/relaxed_simd_engine';  // first: V8's relaxed-SIMD flag before anything compiles
import {wasmBytes, wasmMemoryCount} from './node_memory';  // early: hooks WebAssembly

import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-wasm';

import * as tf from '@tensorflow/tfjs-core';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import {computeGeometry, CONV_BACKPROP_FILTERS_THREADS, CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD, simdThreadsReady} from '../kernels/index';
import {sharedCopyMethod} from '../kernels/host/simd/float_copy';

import {cpuBuiltInImpl, Impl, ImplKey, opName, ourImpl, tfjsWasmHeap, wasmBuiltInImpl} from './cpu/implementations';
import {commandLine, parseOptions} from './cpu/options';
import {ANCHOR, PICKS, TRAINING_FILE} from './cpu/picks';
import {PyTorch, pytorchImpl} from './cpu/pytorch';
import {writeReport} from './cpu/report';
import {runWorkload, WorkloadResult} from './cpu/run_workload';
import {bytes, rate} from './report';
import {OPENMP_PINNED_ENV, pinnedStart, pinUnavailable} from './pin_threads';
import {sourceState} from './source_state';
import {findProblem, listWorkloadFiles, loadWorkloadFile, toOpArguments, workloadsDir} from './workloads';

async function main() {
  const argv = process.argv.slice(2);
  const options = parseOptions(argv);
  const wallStart = performance.now();
  sourceState();  // the code as the run starts (cached)
  await tf.setBackend('cpu');
  await tf.ready();
  const tensorsAtStart = tf.memory().numTensors;
  const checkLeaks = (where: string) => {
    const now = tf.memory().numTensors;
    if (now !== tensorsAtStart) throw new Error(`${where}: ${now - tensorsAtStart} tensor(s) leaked`);
  };
  const log = (line = '') => process.stderr.write(`${line}\n`);

  // Every descriptor of every file must parse and pass our geometry (catches parser drift).
  const dir = workloadsDir();
  const files = listWorkloadFiles(dir);
  let descriptors = 0;
  for (const file of files) {
    for (const problem of loadWorkloadFile(file, dir)) {
      const args = toOpArguments(problem, 1);
      computeGeometry(
          opName(problem),
          {input: {shape: args.inputShape, dtype: 'float32'}, outputDelta: {shape: args.outputDeltaShape, dtype: 'float32'}},
          args.attrs as unknown as Record<string, unknown>);
      descriptors++;
    }
  }

  // The threads of the "all threads" columns, started before the first workload.
  const threads = options.threads ?? tf.env().getNumber(CONV_BACKPROP_FILTERS_THREADS);
  if (options.minMflop !== null) tf.env().set(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP, options.minMflop);
  tf.env().set(CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE, options.adaptive);
  tf.env().set(CONV_BACKPROP_FILTERS_THREADS, threads);
  const notes: string[] = [];
  let ready: number;
  if (options.pin) {
    const unavailable = pinUnavailable();
    if (unavailable !== undefined) throw new Error(unavailable);
    const {value, pinned} = await pinnedStart(() => simdThreadsReady());
    ready = value;
    notes.push(`--pin: the calling thread on CPU 0 and the ${pinned} worker thread(s) on CPUs 1, 2, … (taskset); PyTorch's ` +
               `threads one to a core from CPU 0 (${Object.entries(OPENMP_PINNED_ENV).map(([k, v]) => `${k}=${v}`).join(', ')}). ` +
               `A user's process is not pinned: these figures say what threads give when the OS cannot put a woken worker ` +
               `on the calling thread's core, which this machine's kernel does (docs/threads.md).`);
  } else {
    ready = await simdThreadsReady();
  }
  if (ready !== threads) notes.push(`Only ${ready} of ${threads} threads started here: the "${threads} threads" rows ran on ${ready}.`);
  notes.push(`Ours on ${threads} threads: CONV_BACKPROP_FILTERS_THREADS ${threads}, threshold CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP ${
      tf.env().getNumber(CONV_BACKPROP_FILTERS_THREADS_MIN_MFLOP)} (problems below it run on one thread); ` +
      (options.adaptive ?
           `CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE true (--adaptive), a user's default: a problem runs on one thread while its ` +
               `calls on threads measure slower, and each way is tried again now and then (docs/threads.md); the N-thread ` +
               `columns time what a user's calls get, those tries and the first calls' included.` :
           `CONV_BACKPROP_FILTERS_THREADS_ADAPTIVE false: every call on the threads asked for, to time what they give ` +
               `(a user's default, true, tries each way on a problem's first calls and keeps the faster: docs/threads.md; ` +
               `--adaptive times it).`));
  const relaxedAvailable = tf.env().getBool(CONV_BACKPROP_FILTERS_WASM_RELAXED_SIMD);
  if (options.relaxedAb && !relaxedAvailable) throw new Error('--relaxed-ab: this engine does not validate WebAssembly relaxed SIMD');
  // Without --relaxed-ab every row runs the build the engine picks; with it, ours cpu/wasm rows run the plain one.
  const relaxed = options.relaxedAb ? false : undefined;
  notes.push(options.relaxedAb ?
      'SIMD builds: "relaxed SIMD" rows run the relaxed build (f32x4.relaxed_madd), every other row of ours the plain one.' :
      `SIMD build: ${relaxedAvailable ? 'relaxed (this engine validates relaxed SIMD)' : 'plain (this engine has no relaxed SIMD)'}.`);
  notes.push(`Copies into the threads' shared memory (the packing, docs/threads.md): ${{
    'memmove': 'memmove (Node\'s Buffer.prototype.copy)', 'staged set': 'TypedArray set, staged where the ends are misaligned',
    'set': 'TypedArray set'}[sharedCopyMethod()]}.`);

  const impls: Impl[] = [];
  const servers: PyTorch[] = [];
  if (options.pytorch) {
    for (const [count, key] of [[1, 'pytorch'], [threads, 'pytorchThreads']] as Array<[number, 'pytorch'|'pytorchThreads']>) {
      if (key === 'pytorchThreads' && threads === 1) continue;
      const started = await PyTorch.start(count, options.pin ? OPENMP_PINNED_ENV : {});
      if (typeof started === 'string') {
        notes.push(`PyTorch skipped: ${started}.`);
        break;
      }
      servers.push(started.torch);
      impls.push(pytorchImpl(started.torch, started.hello, key));
      if (key === 'pytorch') {
        notes.push(`PyTorch ${started.hello.torch} (Python ${started.hello.python}, oneDNN ${
            started.hello.mkldnn ? 'available' : 'not available'}): aten::convolution_backward, weight gradient only, on ` +
                   `channels-last tensors (2-D, 3-D; 1-D channels-first), torch.set_num_threads(1) and (${threads}); ` +
                   `after each call on ${threads} threads the bench idles 20 ms, untimed, while PyTorch's OpenMP workers ` +
                   `spin down (bench/cpu/pytorch.ts).`);
      }
    }
  } else {
    notes.push('PyTorch skipped: --no-pytorch.');
  }
  // Each 1-thread row right before its N-thread row: the two run next to each other in every round (paired ratios).
  const threadsLabel = `${threads} thread${threads === 1 ? '' : 's'}`;
  impls.push(ourImpl('simd', 'ours cpu, 1 thread', {simd: true, threads: 1, relaxed}));
  if (threads > 1) impls.push(ourImpl('simdThreads', `ours cpu, ${threadsLabel}`, {simd: true, threads, relaxed}));
  if (options.relaxedAb) {
    impls.push(ourImpl('simdRelaxed', 'ours cpu, relaxed SIMD, 1 thread', {simd: true, threads: 1, relaxed: true}));
    if (threads > 1) {
      impls.push(ourImpl('simdRelaxedThreads', `ours cpu, relaxed SIMD, ${threadsLabel}`, {simd: true, threads, relaxed: true}));
    }
  }
  impls.push(ourImpl('wasm', 'ours wasm, 1 thread', {simd: true, threads: 1, relaxed}));
  if (threads > 1) impls.push(ourImpl('wasmThreads', `ours wasm, ${threadsLabel}`, {simd: true, threads, relaxed}));
  if (options.loops) impls.push(ourImpl('typescript', 'ours cpu, TypeScript loops', {simd: false, threads: 1, relaxed}));
  impls.push(wasmBuiltInImpl);
  const labels = new Map<ImplKey, string>(impls.map(i => [i.key, i.label]));
  labels.set('cpuBuiltIn', cpuBuiltInImpl.label);

  const cpus = os.cpus();
  const machine = `${cpus[0]?.model?.trim() ?? 'unknown cpu'}, ${cpus.length} cores, Node ${process.version}, ${os.platform()} ${
      os.arch()}; tfjs-core ${tf.version_core}`;
  log(`# filter-gradient benchmark (cpu, wasm${servers.length > 0 ? ', PyTorch' : ''}; 1 and ${threadsLabel})`);
  log(`machine: ${machine}`);
  log(`workloads: ${dir} — ${descriptors} descriptors in ${files.length} files parsed and checked`);
  log(`implementations: ${impls.map(i => i.label).join('; ')}`);
  for (const note of notes) log(`note: ${note}`);
  log(`timing: 1 warm-up (memory probe) + ${options.runs} timed run(s) per implementation, round-robin (key workloads: ${
      Math.max(options.runs, options.keyRuns)})\n`);

  const results: WorkloadResult[] = [];
  const keyOptions = {...options, runs: Math.max(options.runs, options.keyRuns)};
  const selected = (name: string) => options.only === null || options.only.some(o => name.includes(o));
  const picks = options.training === 'only' ? [] : PICKS.filter(p => selected(p.name));
  const summary = (w: WorkloadResult) => w.measurements.map(m => `${m.impl} ${rate(m.gflops)}`).join(', ');
  try {
    for (const [index, pick] of picks.entries()) {
      const problem = findProblem(loadWorkloadFile(pick.file, dir), pick.name);
      const result = await runWorkload(problem, pick.batch, 1000 + 10 * index, impls, pick.key ? keyOptions : options);
      results.push(result);
      log(`  ${result.label} (batch ${pick.batch}): ${summary(result)} GFLOP/s`);
      await tf.setBackend('cpu');
      checkLeaks(problem.name);
    }

    // The anchor: tfjs's built-in cpu kernel on one ResNet-50 shape, one run; ours (and PyTorch) beside it.
    let anchor: WorkloadResult | null = null;
    if (options.builtIn && options.training !== 'only' && selected(ANCHOR.name)) {
      const problem = findProblem(loadWorkloadFile(ANCHOR.file, dir), ANCHOR.name);
      log(`  tfjs built-in cpu Conv2DBackpropFilter on ${problem.name} batch ${ANCHOR.batch} (one run, ~15 s) …`);
      const anchorImpls = [...impls.filter(i => !i.key.startsWith('wasm')), cpuBuiltInImpl];
      anchor = await runWorkload(problem, ANCHOR.batch, 7, anchorImpls, keyOptions);
      log(`  anchor: ${summary(anchor)} GFLOP/s`);
      await tf.setBackend('cpu');
      checkLeaks('anchor');
    } else {
      notes.push(`tfjs built-in cpu kernel skipped: ${!options.builtIn ? '--no-builtin' : 'not selected'}.`);
    }

    // The training layers, each at its file's batch.
    const training: WorkloadResult[] = [];
    if (options.training !== 'no') {
      const trainingImpls = impls.filter(i => i.key !== 'typescript');
      const layers = loadWorkloadFile(TRAINING_FILE, dir).filter(p => selected(p.name));
      log(`\ntraining layers (${TRAINING_FILE}): ${layers.length}, ${options.trainingRuns} runs each`);
      for (const [index, problem] of layers.entries()) {
        const result = await runWorkload(
            problem, problem.batch, 5000 + 10 * index, trainingImpls, {...options, runs: options.trainingRuns});
        training.push(result);
        log(`  ${result.label} (batch ${problem.batch}): ${
            result.measurements.map(m => `${m.impl} ${rate(m.gflops)} (×${m.callsPerRun ?? 1})`).join(', ')} GFLOP/s`);
        await tf.setBackend('cpu');
        checkLeaks(problem.name);
      }
    }

    const total = (performance.now() - wallStart) / 1000;
    const report = writeReport({options, command: commandLine(argv), machine, dir, descriptors, files: files.length, notes, threads,
                                labels, results, anchor, training, seconds: total, impls});
    console.log(report.markdown);
    if (options.out !== null) {
      fs.mkdirSync(options.out, {recursive: true});
      const name = options.resultName;
      fs.writeFileSync(path.join(options.out, `${name}.md`), report.markdown);
      if (report.svg !== null) fs.writeFileSync(path.join(options.out, `${name}.svg`), report.svg);
      if (report.trainingSvg !== null) fs.writeFileSync(path.join(options.out, `${name}_training.svg`), report.trainingSvg);
      fs.writeFileSync(path.join(options.out, `${name}.json`), `${JSON.stringify(report.json, null, 1)}\n`);
      log(`\nwrote ${path.relative(process.cwd(), path.join(options.out, `${name}.md`))}, ${
          [report.svg !== null ? `${name}.svg` : '', report.trainingSvg !== null ? `${name}_training.svg` : '', `${name}.json`]
              .filter(f => f !== '').join(', ')}`);
    }
    log(`tensors: ${tf.memory().numTensors} live at the end (${tensorsAtStart} at the start); WebAssembly memories: ${
        wasmMemoryCount()}, tfjs-backend-wasm's heap ${bytes(wasmBytes(m => m.buffer === tfjsWasmHeap()))}, others ${
        bytes(wasmBytes(m => m.buffer !== tfjsWasmHeap()))}; total ${total.toFixed(0)} s`);
  } finally {
    for (const server of servers) server.stop();
  }
}

main().catch(error => {
  console.error(error instanceof Error ? error.stack ?? error.message : error);
  process.exitCode = 1;
});

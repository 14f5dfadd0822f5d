import {CallTimeline} from '../kernels/host/simd/call_timeline';
import {figuresOf, mflopOf, namedLayers, targetLayers} from '../bench/call_figures';
import {PICKS, THREAD_TARGETS, TRAINING_FILE} from '../bench/cpu/picks';

/**
 * Keeps `npm run bench:timeline` honest: the figures it reads off a timeline (each thread's task
 * time, when the worker started, the caller's wait, when the last step was published) on a
 * made-up call, and the layers `--targets` times: those of issue 31's thread targets, at
 * npm run bench's batches.
 */
describe('bench:timeline', () => {
  it('reads each thread\'s task time, the worker\'s start, the packing and the caller\'s wait off a timeline', () => {
    const timeline: CallTimeline = {
      threads: 2,
      events: [
        {phase: 'planned', at: 0.02, chunk: 0}, {phase: 'opened', at: 0.03, chunk: 0}, {phase: 'step', at: 0.1, chunk: 0},
        {phase: 'step', at: 0.3, chunk: 0}, {phase: 'chunk done', at: 1.0, chunk: 0}, {phase: 'copied', at: 1.05, chunk: 0},
      ],
      tasks: [
        {thread: 1, task: 0, chunk: 0, start: 0.12, end: 0.5}, {thread: 0, task: 2, chunk: 0, start: 0.35, end: 0.6},
        {thread: 1, task: 1, chunk: 0, start: 0.5, end: 0.99}, {thread: 0, task: 3, chunk: 0, start: 0.6, end: 0.98},
      ],
    };
    const figures = figuresOf(timeline, 1.2);
    expect(figures.tasks.map(t => +t.toFixed(6))).toEqual([0.63, 0.87]);
    expect([figures.wall, figures.simd, figures.planned, figures.packed]).toEqual([1.2, 1.05, 0.02, 0.3]);
    expect(figures.workerStart).toBe(0.12);
    expect(+figures.callerWait.toFixed(6)).toBe(0.02);
    const alone = figuresOf({...timeline, threads: 1, tasks: timeline.tasks.filter(t => t.thread === 0)}, 1.2);
    expect(alone.tasks.map(t => +t.toFixed(6))).toEqual([0.63]);
    expect(Number.isNaN(alone.workerStart)).toBeTrue();
    expect(alone.callerWait).toBe(0);
  });

  it('times with --targets the layers of the thread targets, each once, at npm run bench\'s batches', () => {
    const layers = targetLayers();
    const label = (l: typeof layers[number]) => `${l.problem.name}${l.problem.kind === 'deconv' ? ' (deconv)' : ''}`;
    expect(new Set(layers.map(label)).size).withContext('each layer once').toBe(layers.length);
    const pickNames = new Set(PICKS.map(p => `${p.name}${p.file.startsWith('deconv') ? ' (deconv)' : ''}`));
    for (const layer of layers) {
      const mflop = mflopOf(layer.args);
      const pick = PICKS.find(p => p.name === layer.problem.name && p.file.startsWith(layer.problem.kind));
      if (pick !== undefined) {
        expect(mflop).withContext(label(layer)).not.toBeLessThan(THREAD_TARGETS.bigLayerMflop);
        expect(layer.args.batch).withContext(label(layer)).toBe(pick.batch);
      } else {
        expect(layer.problem.source).withContext(label(layer)).toContain(TRAINING_FILE.split('/').pop()!);
        expect(mflop).withContext(label(layer)).not.toBeLessThan(THREAD_TARGETS.trainingLayerMflop);
        expect(layer.args.batch).withContext(label(layer)).toBe(layer.problem.batch);
      }
    }
    expect(layers.map(label)).toEqual(jasmine.arrayContaining(
        ['resnet_50:res2a_branch2a', 'resnet_50:res3a_branch1 (deconv)', 'tfjs-mobilenet025:conv2_2/sep']));
    expect(layers.filter(l => pickNames.has(label(l))).length).toBeGreaterThan(0);
    expect(namedLayers(['res2a_branch2a'])[0].args.batch).withContext('a pick by name at its bench batch').toBe(2);
  });
});

import {fastestSpeedUp, pairedSpeedUp, threadScalingTable, TimedWorkload} from '../bench/cpu/report';

/**
 * Keeps the "N threads ÷ 1 thread" table of `npm run bench` and `npm run bench:browser-threads`
 * honest on made-up layers: the paired median the targets read, and the fastest runs' ratio
 * beside it.
 */
describe('bench report: N threads ÷ 1 thread', () => {
  /** A layer of `mflop` whose 1- and 2-thread runs took these ms (round r at index r). */
  const layer = (label: string, mflop: number, one: number[], two: number[]): TimedWorkload => ({
    label,
    flops: mflop * 1e6,
    measurements: [{impl: 'simd', times: one}, {impl: 'simdThreads', times: two}],
  });
  // Round 2 of `slowed` ran its 2-thread call in a spell; `held` is slow on 2 threads in every round.
  const slowed = layer('slowed', 400, [10, 10, 10, 12], [5.5, 5, 11, 6]);
  const held = layer('held', 60, [2, 2.2, 2, 2], [1.6, 1.6, 1.7, 1.6]);
  const small = layer('small', 12, [1, 1, 1], [0.8, 0.9, 0.7]);

  it('pairs each round\'s 1-thread run with its 2-thread run, and divides the fastest runs apart', () => {
    // Ratios per round 1.82, 2, 0.91, 2: median of four, the mean of the middle two.
    expect(pairedSpeedUp(slowed, 'simdThreads', 'simd')).toBeCloseTo((1.818181 + 2) / 2, 4);
    expect(fastestSpeedUp(slowed, 'simdThreads', 'simd')).toBe(2);
    expect(fastestSpeedUp(held, 'simdThreads', 'simd')).toBe(1.25);
  });

  it('gives each group\'s min with its layer and median, paired and fastest, against the targets', () => {
    const table = threadScalingTable([slowed, held], [small], [['ours cpu', 'simdThreads', 'simd']]);
    const rows = table.split('\n').slice(2).map(line => line.split('|').slice(1, -1).map(cell => cell.trim()));
    expect(rows.map(r => r[1])).toEqual(['layers of ≥ 50 MFLOP', 'training layers of ≥ 10 MFLOP', 'every layer']);
    // Layers of ≥ 50 MFLOP: slowed and held; `small` is the only training layer.
    expect(rows[0].slice(2)).toEqual(['2', '**1.3×** (held)', '1.6×', '1.3× (held)', '1.6×', '≥ 1.8× each']);
    expect(rows[1].slice(2, 4)).toEqual(['1', '**1.3×** (small)']);
    expect(rows[2][2]).toBe('3');
  });
});

import {KEPT_CALLS, KEPT_PROBLEMS, ONE_THREAD_RETRY_CALLS, ThreadChoice, ThreadOutcomes, THREADS_RETRY_CALLS, ThreadWay} from '../kernels/host/simd/thread_outcomes';

/**
 * The choice between threads and one thread from a problem's recent wall times
 * (kernels/host/simd/thread_outcomes.ts), on made-up times: a call on threads takes `threadsMs`,
 * one on one thread `oneMs`.
 */
describe('the choice of threads from measured calls (thread_outcomes.ts)', () => {
  /** Runs `calls` calls of `key`, each recorded with the time of the way chosen; returns the choices. */
  function runCalls(outcomes: ThreadOutcomes, key: string, calls: number, threadsMs: number, oneMs: number): ThreadChoice[] {
    const choices: ThreadChoice[] = [];
    for (let i = 0; i < calls; i++) {
      const choice = outcomes.next(key);
      outcomes.record(key, choice.way, choice.way === 'threads' ? threadsMs : oneMs);
      choices.push(choice);
    }
    return choices;
  }
  const ways = (choices: ThreadChoice[]): ThreadWay[] => choices.map(c => c.way);
  const count = (choices: ThreadChoice[], way: ThreadWay) => choices.filter(c => c.way === way).length;

  it('runs the first call on threads and times one thread on the second, then stays on threads while they are faster', () => {
    const outcomes = new ThreadOutcomes();
    const choices = runCalls(outcomes, 'layer', 40, 5, 9);
    expect(choices.slice(0, 3)).toEqual([{way: 'threads'}, {way: 'one', reason: 'timing one thread'}, {way: 'threads'}]);
    expect(count(choices.slice(2), 'one')).toBe(0);
  });

  it('moves to one thread once the threads are slower in the median of the calls kept, and says why', () => {
    const outcomes = new ThreadOutcomes();
    runCalls(outcomes, 'layer', 10, 5, 9);
    // The machine gets busy: calls on threads now take 20 ms. The median moves after the third.
    const choices = runCalls(outcomes, 'layer', 6, 20, 9);
    expect(ways(choices)).toEqual(['threads', 'threads', 'threads', 'one', 'one', 'one']);
    expect(choices[3]).toEqual({way: 'one', reason: 'measured'});
  });

  it('does not move on one slow call', () => {
    const outcomes = new ThreadOutcomes();
    runCalls(outcomes, 'layer', 10, 5, 9);
    runCalls(outcomes, 'layer', 1, 50, 9);
    expect(ways(runCalls(outcomes, 'layer', 20, 5, 9))).toEqual(new Array(20).fill('threads'));
  });

  it(`on one thread, tries the threads every ${THREADS_RETRY_CALLS} calls while they stay slower`, () => {
    const outcomes = new ThreadOutcomes();
    runCalls(outcomes, 'layer', 2, 20, 9);
    const choices = runCalls(outcomes, 'layer', 4 * THREADS_RETRY_CALLS, 20, 9);
    const tries = choices.map((c, i) => c.way === 'threads' ? i : -1).filter(i => i >= 0);
    expect(tries.length).toBe(4);
    expect(tries.slice(1).map((at, i) => at - tries[i])).toEqual([THREADS_RETRY_CALLS, THREADS_RETRY_CALLS, THREADS_RETRY_CALLS]);
  });

  it('goes back to threads within a few calls once a try of them beats one thread', () => {
    const outcomes = new ThreadOutcomes();
    runCalls(outcomes, 'layer', 2 + 2 * THREADS_RETRY_CALLS, 20, 9);
    // The machine is quiet again: threads take 5 ms. The first try that shows it is followed by more.
    const choices = runCalls(outcomes, 'layer', THREADS_RETRY_CALLS + 10, 5, 9);
    const firstTry = choices.findIndex(c => c.way === 'threads');
    expect(firstTry).toBeLessThan(THREADS_RETRY_CALLS);
    expect(ways(choices.slice(firstTry))).toEqual(new Array(choices.length - firstTry).fill('threads'));
  });

  it(`on threads, times one thread again every ${ONE_THREAD_RETRY_CALLS} calls`, () => {
    const outcomes = new ThreadOutcomes();
    const choices = runCalls(outcomes, 'layer', 2 + 2 * ONE_THREAD_RETRY_CALLS, 5, 9);
    const timings = choices.map((c, i) => c.way === 'one' ? i : -1).filter(i => i >= 0);
    expect(timings).toEqual([1, 1 + ONE_THREAD_RETRY_CALLS, 1 + 2 * ONE_THREAD_RETRY_CALLS]);
    expect(choices.filter(c => c.way === 'one').every(c => c.reason === 'timing one thread')).toBeTrue();
  });

  it('keeps each problem apart, peeks without counting, and forgets the least recently used beyond its limit', () => {
    const outcomes = new ThreadOutcomes();
    runCalls(outcomes, 'slow on threads', 2 + KEPT_CALLS, 20, 9);
    runCalls(outcomes, 'fast on threads', 2 + KEPT_CALLS, 5, 9);
    expect(outcomes.peek('slow on threads')).toEqual({way: 'one', reason: 'measured'});
    expect(outcomes.peek('fast on threads')).toEqual({way: 'threads'});
    expect(outcomes.peek('never called')).toEqual({way: 'threads'});
    // Peeking many times changes nothing: the next call of a new problem is still its first.
    for (let i = 0; i < 5; i++) outcomes.peek('new');
    expect(outcomes.next('new')).toEqual({way: 'threads'});
    for (let i = 0; i < KEPT_PROBLEMS; i++) runCalls(outcomes, `other ${i}`, 1, 5, 9);
    expect(outcomes.peek('slow on threads')).withContext('forgotten: a first call again').toEqual({way: 'threads'});
  });
});

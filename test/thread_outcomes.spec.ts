import {FIRST_THREADS_RETRY_CALLS, KEPT_CALLS, KEPT_PROBLEMS, ONE_THREAD_MARGIN, ONE_THREAD_RETRY_CALLS, SLOWDOWN_RETRY_CALLS, ThreadChoice, ThreadOutcomes, THREADS_RETRY_CALLS, THREADS_SLOWDOWN, ThreadWay, TRIAL_CALLS, TRY_LOSS} from '../kernels/host/simd/thread_outcomes';

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

  /** The calls of `choices` that start a run of `way` (the first call, or one after the other way). */
  const runStarts = (choices: ThreadChoice[], way: ThreadWay) =>
      choices.map((c, i) => c.way === way && (i === 0 || choices[i - 1].way !== way) ? i : -1).filter(i => i >= 0);
  const runLengths = (choices: ThreadChoice[], way: ThreadWay) =>
      runStarts(choices, way).map(start => {
        let end = start;
        while (end < choices.length && choices[end].way === way) end++;
        return end - start;
      });
  const SETTLED = 2 * TRIAL_CALLS;  // a try of the threads, then a try of one thread

  it(`runs the first ${TRIAL_CALLS} calls on threads and the next ${TRIAL_CALLS} on one thread, then stays on threads while they are faster`, () => {
    const outcomes = new ThreadOutcomes();
    // One thread slower, but by less than TRY_LOSS: its try runs all its calls.
    const choices = runCalls(outcomes, 'layer', 40, 7, 9);
    expect(choices.slice(0, SETTLED + 1)).toEqual([
      ...new Array(TRIAL_CALLS).fill({way: 'threads'}), ...new Array(TRIAL_CALLS).fill({way: 'one', reason: 'timing one thread'}),
      {way: 'threads'},
    ]);
    expect(count(choices.slice(SETTLED), 'one')).toBe(0);
  });

  it(`ends a try at its first kept call over ${TRY_LOSS}× the other way's median, not at its first call`, () => {
    // One thread 1.8× slower than threads: its first try ends after the call that is kept.
    let outcomes = new ThreadOutcomes();
    let choices = runCalls(outcomes, 'layer', 20, 5, 9);
    expect(choices.slice(0, TRIAL_CALLS + 3)).toEqual([
      ...new Array(TRIAL_CALLS).fill({way: 'threads'}), ...new Array(2).fill({way: 'one', reason: 'timing one thread'}),
      {way: 'threads'},
    ]);
    expect(count(choices, 'one')).toBe(2);
    // Threads 2.2× slower than one thread: each retry of them is the first call (not kept) and one more.
    outcomes = new ThreadOutcomes();
    choices = runCalls(outcomes, 'layer', SETTLED + 3 * THREADS_RETRY_CALLS, 20, 9);
    expect(runLengths(choices, 'threads').slice(1)).toEqual(new Array(runLengths(choices, 'threads').length - 1).fill(2));
    // A try's first call, however slow, does not end it: it pays for waking the workers. (Threads
    // 1.3× slower: their retries lose, but by less than TRY_LOSS.)
    outcomes = new ThreadOutcomes();
    choices = [];
    for (let i = 0; i < SETTLED + 2 * THREADS_RETRY_CALLS; i++) {
      const choice = outcomes.next('layer');
      const first = choice.way === 'threads' && (i === 0 || choices[i - 1].way !== 'threads');
      outcomes.record('layer', choice.way, choice.way === 'one' ? 9 : first ? 100 : 12);
      choices.push(choice);
    }
    expect(runLengths(choices, 'threads').length).toBeGreaterThan(2);
    expect(runLengths(choices, 'threads').every(length => length === TRIAL_CALLS)).withContext(ways(choices).join(' ')).toBeTrue();
  });

  it("keeps no try's first call: a problem's two slow first calls on threads (warm-ups) do not send it to one thread", () => {
    const outcomes = new ThreadOutcomes();
    const choices: ThreadChoice[] = [];
    for (let i = 0; i < SETTLED + 10; i++) {
      const choice = outcomes.next('layer');
      outcomes.record('layer', choice.way, choice.way === 'one' ? 9 : i < 2 ? 100 : 5);
      choices.push(choice);
    }
    expect(count(choices.slice(SETTLED), 'one')).toBe(0);
  });

  it(`keeps threads that are slower by less than ${ONE_THREAD_MARGIN}×`, () => {
    const outcomes = new ThreadOutcomes();
    const choices = runCalls(outcomes, 'layer', SETTLED + 20, 9 * (1 + (ONE_THREAD_MARGIN - 1) / 2), 9);
    expect(count(choices.slice(SETTLED), 'one')).toBe(0);
  });

  it(`moves to one thread from threads that are slower by more than ${ONE_THREAD_MARGIN}×`, () => {
    const outcomes = new ThreadOutcomes();
    // Threads first as fast as one thread, then (a spell) slower by a little over the margin.
    runCalls(outcomes, 'layer', SETTLED + 20, 9, 9);
    const choices = runCalls(outcomes, 'layer', 3 + FIRST_THREADS_RETRY_CALLS, 9 * (1 + 1.5 * (ONE_THREAD_MARGIN - 1)), 9);
    // The median moves after the third slower call; one thread until the threads' retry.
    expect(ways(choices)).toEqual([...new Array(3).fill('threads'), ...new Array(FIRST_THREADS_RETRY_CALLS).fill('one')]);
  });

  it('moves to one thread once the threads are slower in the median of the calls kept, and says why', () => {
    const outcomes = new ThreadOutcomes();
    // Long enough on threads that a retry of them would be due, were the wait not restarted.
    runCalls(outcomes, 'layer', SETTLED + THREADS_RETRY_CALLS, 5, 9);
    // The machine gets busy: calls on threads now take 20 ms. The median moves after the third.
    const choices = runCalls(outcomes, 'layer', 3, 20, 9);
    expect(outcomes.peek('layer')).withContext('peeked after the third').toEqual({way: 'one', reason: 'measured'});
    choices.push(...runCalls(outcomes, 'layer', 3, 20, 9));
    expect(ways(choices)).toEqual(['threads', 'threads', 'threads', 'one', 'one', 'one']);
    expect(choices[3]).toEqual({way: 'one', reason: 'measured'});
  });

  it('does not move on one slow call', () => {
    const outcomes = new ThreadOutcomes();
    runCalls(outcomes, 'layer', SETTLED + 5, 5, 9);
    runCalls(outcomes, 'layer', 1, 50, 9);
    expect(ways(runCalls(outcomes, 'layer', 20, 5, 9))).toEqual(new Array(20).fill('threads'));
  });

  it(`on one thread, tries the threads in runs of ${TRIAL_CALLS} calls, after ${FIRST_THREADS_RETRY_CALLS} calls, then twice as many each time up to ${THREADS_RETRY_CALLS}, while they stay slower`, () => {
    const outcomes = new ThreadOutcomes();
    // Slower by less than TRY_LOSS, so that each try runs its calls.
    const choices = runCalls(outcomes, 'layer', SETTLED + 6 * THREADS_RETRY_CALLS, 12, 9);
    const tries = runStarts(choices, 'threads');
    // Each wait counts from the start of the try before it: the first from the try of one thread.
    const waits = tries.slice(1).map((at, i) => at - (i === 0 ? TRIAL_CALLS : tries[i]));
    const doubling = Array.from({length: 7}, (_, i) => Math.min(THREADS_RETRY_CALLS, FIRST_THREADS_RETRY_CALLS * 2 ** i));
    expect(doubling.slice(-2)).withContext('the spec reaches the longest wait').toEqual([THREADS_RETRY_CALLS, THREADS_RETRY_CALLS]);
    expect(waits.slice(0, 7)).toEqual(doubling);
    expect(waits.every(w => w <= THREADS_RETRY_CALLS)).toBeTrue();
    expect(runLengths(choices, 'threads').every(length => length === TRIAL_CALLS)).toBeTrue();
  });

  it(`after a time on threads, a move to one thread tries the threads again after ${FIRST_THREADS_RETRY_CALLS} calls`, () => {
    const outcomes = new ThreadOutcomes();
    runCalls(outcomes, 'layer', SETTLED, 20, 9);
    runCalls(outcomes, 'layer', 3 * THREADS_RETRY_CALLS, 20, 9);  // the waits have grown to their longest
    // The machine gets quiet: at the next try the threads win, and stay for a while.
    runCalls(outcomes, 'layer', THREADS_RETRY_CALLS + 20, 5, 9);
    expect(outcomes.peek('layer')).toEqual({way: 'threads'});
    // Busy again: the threads' median moves after three slow calls; the first retry comes soon.
    const choices = runCalls(outcomes, 'layer', 3 + 2 * FIRST_THREADS_RETRY_CALLS, 20, 9);
    const tries = runStarts(choices, 'threads').filter(at => at > 0);
    expect(tries.length).withContext(ways(choices).join(' ')).toBeGreaterThan(0);
    expect(tries[0]).toBeLessThanOrEqual(3 + FIRST_THREADS_RETRY_CALLS);
  });

  it('goes back to threads with the first try after the machine got quiet, though its first call is slow', () => {
    const outcomes = new ThreadOutcomes();
    runCalls(outcomes, 'layer', SETTLED + 2 * THREADS_RETRY_CALLS, 20, 9);
    // Threads take 5 ms again, but the first call of a try pays for waking the workers: 12 ms.
    const choices: ThreadChoice[] = [];
    for (let i = 0; i < THREADS_RETRY_CALLS + 10; i++) {
      const choice = outcomes.next('layer');
      const first = choice.way === 'threads' && (i === 0 || choices[i - 1].way !== 'threads');
      outcomes.record('layer', choice.way, choice.way === 'one' ? 9 : first ? 12 : 5);
      choices.push(choice);
    }
    const firstTry = choices.findIndex(c => c.way === 'threads');
    expect(firstTry).toBeLessThan(THREADS_RETRY_CALLS);
    expect(ways(choices.slice(firstTry))).toEqual(new Array(choices.length - firstTry).fill('threads'));
  });

  it(`on threads, tries one thread in runs of ${TRIAL_CALLS} calls every ${ONE_THREAD_RETRY_CALLS} calls times the threads' gain`, () => {
    // Threads 2× faster: a try every 1,024 calls; 8× faster (8 cores): every 4,096.
    for (const [threadsMs, spacing] of [[4.5, 2 * ONE_THREAD_RETRY_CALLS], [9 / 8, 8 * ONE_THREAD_RETRY_CALLS]]) {
      const outcomes = new ThreadOutcomes();
      const choices = runCalls(outcomes, 'layer', TRIAL_CALLS + 2 * spacing + TRIAL_CALLS, threadsMs, 9);
      expect(runStarts(choices, 'one')).withContext(`threads ${threadsMs} ms`).toEqual([TRIAL_CALLS, TRIAL_CALLS + spacing, TRIAL_CALLS + 2 * spacing]);
    }
    const outcomes = new ThreadOutcomes();
    const choices = runCalls(outcomes, 'layer', TRIAL_CALLS + 2 * ONE_THREAD_RETRY_CALLS + TRIAL_CALLS, 9, 9);
    expect(runStarts(choices, 'one')).withContext('no gain').toEqual([TRIAL_CALLS, TRIAL_CALLS + ONE_THREAD_RETRY_CALLS, TRIAL_CALLS + 2 * ONE_THREAD_RETRY_CALLS]);
    expect(runLengths(choices, 'one')).toEqual([TRIAL_CALLS, TRIAL_CALLS, TRIAL_CALLS]);
    expect(choices.filter(c => c.way === 'one').every(c => c.reason === 'timing one thread')).toBeTrue();
  });

  it(`on threads, tries one thread as soon as the threads' median grows over ${THREADS_SLOWDOWN}× its lowest, and moves there when it is faster now`, () => {
    const outcomes = new ThreadOutcomes();
    // Settled on threads (5 ms against 9), the periodic try of one thread ~900 calls away.
    runCalls(outcomes, 'layer', SETTLED + SLOWDOWN_RETRY_CALLS, 5, 9);
    // The worker now shares the calling thread's core: 8 ms on threads, where one thread would take 6.
    const choices = runCalls(outcomes, 'layer', 3 + FIRST_THREADS_RETRY_CALLS, 8, 6);
    const tryStart = runStarts(choices, 'one')[0];
    // The median moves after the third slow call; the try starts with the next.
    expect(tryStart).withContext(ways(choices).join(' ')).toBe(3);
    expect(choices.slice(tryStart, tryStart + TRIAL_CALLS)).toEqual(new Array(TRIAL_CALLS).fill({way: 'one', reason: 'timing one thread'}));
    // Then one thread, until the threads' first retry, FIRST_THREADS_RETRY_CALLS after the try began.
    expect(choices.slice(tryStart + TRIAL_CALLS)).toEqual(new Array(FIRST_THREADS_RETRY_CALLS - TRIAL_CALLS).fill({way: 'one', reason: 'measured'}));
  });

  it(`on threads, keeps them without a try while their median stays under ${THREADS_SLOWDOWN}× its lowest, and after a try that finds them still faster`, () => {
    const outcomes = new ThreadOutcomes();
    // Threads 6× faster: the periodic try of one thread is 3,000 calls away.
    runCalls(outcomes, 'layer', SETTLED + SLOWDOWN_RETRY_CALLS, 5, 30);
    expect(count(runCalls(outcomes, 'layer', 200, 6, 30), 'one')).withContext('1.2× slower').toBe(0);
    // 2× slower, one thread 3× slower still: one try, ended by its first kept call, then threads
    // again, compared anew.
    const choices = runCalls(outcomes, 'layer', 200, 10, 30);
    expect(runStarts(choices, 'one').length).withContext(ways(choices).join(' ')).toBe(1);
    expect(runLengths(choices, 'one')).toEqual([2]);
  });

  it(`after a few slow calls on one thread move it to threads, tries one thread again ${FIRST_THREADS_RETRY_CALLS} calls later`, () => {
    const outcomes = new ThreadOutcomes();
    // Settled on one thread (9 ms against 12 on threads), the threads' first retry not yet due.
    runCalls(outcomes, 'layer', SETTLED + 2, 12, 9);
    expect(outcomes.peek('layer')).toEqual({way: 'one', reason: 'measured'});
    // Three calls on one thread take 20 ms (the machine, for a moment): its median passes the
    // threads' and the problem moves to them.
    runCalls(outcomes, 'layer', 3, 12, 20);
    const choices = runCalls(outcomes, 'layer', 2 * FIRST_THREADS_RETRY_CALLS, 12, 9);
    expect(choices[0]).withContext(ways(choices).join(' ')).toEqual({way: 'threads'});
    // One thread is tried again when FIRST_THREADS_RETRY_CALLS calls have passed since the move,
    // not hundreds of calls later, and wins.
    expect(runStarts(choices, 'one')[0]).withContext(ways(choices).join(' ')).toBe(FIRST_THREADS_RETRY_CALLS);
    // Then one thread, until the threads' own retry FIRST_THREADS_RETRY_CALLS calls after that try began.
    expect(ways(choices.slice(FIRST_THREADS_RETRY_CALLS, 2 * FIRST_THREADS_RETRY_CALLS))).withContext(ways(choices).join(' '))
        .toEqual(new Array(FIRST_THREADS_RETRY_CALLS).fill('one'));
  });

  it(`tries one thread for a slowdown at most every ${SLOWDOWN_RETRY_CALLS} calls, on a machine that changes back and forth`, () => {
    const outcomes = new ThreadOutcomes();
    runCalls(outcomes, 'layer', SETTLED + SLOWDOWN_RETRY_CALLS, 5, 30);
    const choices: ThreadChoice[] = [];
    for (let block = 0; block < 40; block++) choices.push(...runCalls(outcomes, 'layer', 10, block % 2 === 0 ? 5 : 8, 30));
    const tries = runStarts(choices, 'one');
    expect(tries.length).withContext(ways(choices).join(' ')).toBeGreaterThan(0);
    expect(tries.slice(1).every((at, i) => at - tries[i] >= SLOWDOWN_RETRY_CALLS)).toBeTrue();
    expect(count(choices, 'one')).toBeLessThanOrEqual(TRIAL_CALLS * Math.ceil(choices.length / SLOWDOWN_RETRY_CALLS));
  });

  it('keeps each problem apart, peeks without counting, and forgets the least recently used beyond its limit', () => {
    const outcomes = new ThreadOutcomes();
    runCalls(outcomes, 'slow on threads', SETTLED + KEPT_CALLS, 20, 9);
    runCalls(outcomes, 'fast on threads', SETTLED + KEPT_CALLS, 5, 9);
    expect(outcomes.peek('slow on threads')).toEqual({way: 'one', reason: 'measured'});
    expect(outcomes.peek('fast on threads')).toEqual({way: 'threads'});
    expect(outcomes.peek('never called')).toEqual({way: 'threads'});
    // Peeking many times changes nothing: the next call of a new problem is still its first.
    for (let i = 0; i < 5; i++) outcomes.peek('new');
    const tally = {...outcomes.tally};
    expect(outcomes.next('new')).toEqual({way: 'threads'});
    // The tally counts the calls next() chose (benches report the share on threads), not peeks.
    expect(outcomes.tally).toEqual({threads: tally.threads + 1, one: tally.one});
    expect(tally.threads + tally.one).toBe(2 * (SETTLED + KEPT_CALLS));
    for (let i = 0; i < KEPT_PROBLEMS; i++) runCalls(outcomes, `other ${i}`, 1, 5, 9);
    expect(outcomes.peek('slow on threads')).withContext('forgotten: a first call again').toEqual({way: 'threads'});
  });
});

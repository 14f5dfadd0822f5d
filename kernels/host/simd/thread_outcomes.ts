/**
 * Whether threads pay for a problem, judged by how its calls went. On a machine whose other cores
 * are busy (another process, the engine's own garbage collector or compiler), the workers share a
 * core with the calling thread or with that work, and a threaded call can take longer than the
 * calling thread alone (docs/threads.md, "When threads do not pay"). So each problem keeps the
 * wall times of its last calls on threads and on one thread, and runs on one thread while that
 * is faster, trying the threads again from time to time.
 *
 * The values do not depend on the choice: one thread and N threads sum every output in the same
 * blocks and order.
 */

/** Calls kept per problem and way; the choice compares their medians, so one slow call moves nothing. */
export const KEPT_CALLS = 5;
/** While one thread is faster, every this many calls tries the threads once. */
export const THREADS_RETRY_CALLS = 32;
/** While threads are faster, every this many calls times one thread once (the machine may have changed). */
export const ONE_THREAD_RETRY_CALLS = 256;
/** Problems remembered: the least recently used is forgotten beyond this. */
export const KEPT_PROBLEMS = 256;

/** How a call runs: on the threads asked for, or on the calling thread alone. */
export type ThreadWay = 'threads'|'one';

/** The way of the next call of a problem, and why. */
export interface ThreadChoice {
  readonly way: ThreadWay;
  /**
   * Why one thread (undefined on threads): `measured` while one thread has been faster,
   * `timing one thread` for the call that times it, the problem's second and then every
   * ONE_THREAD_RETRY_CALLS-th while threads are faster.
   */
  readonly reason?: 'measured'|'timing one thread';
}

interface Outcome {
  threads: number[];
  one: number[];
  /** Calls since the way not taken was last tried. */
  sinceRetry: number;
  /** The last try of the threads beat one thread's median: try again on the next call. */
  retryAgain: boolean;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The wall times of each problem's recent calls on threads and on one thread, and the choice they make. */
export class ThreadOutcomes {
  private readonly outcomes = new Map<string, Outcome>();

  /** The way the next call of `key` runs, counted as a call (the caller then records its time). */
  next(key: string): ThreadChoice {
    const outcome = this.outcomeOf(key);
    const choice = this.choose(outcome);
    outcome.sinceRetry = choice.way === this.preferred(outcome) ? outcome.sinceRetry + 1 : 0;
    return choice;
  }

  /** The way a call of `key` would run now, without counting it (plans for tests and benches). */
  peek(key: string): ThreadChoice {
    const outcome = this.outcomes.get(key);
    return outcome === undefined ? {way: 'threads'} : this.choose(outcome);
  }

  /** Adds a call's wall time. */
  record(key: string, way: ThreadWay, ms: number) {
    const outcome = this.outcomeOf(key);
    const times = way === 'threads' ? outcome.threads : outcome.one;
    // A try of the threads while one thread is preferred that beats one thread: the next call tries again.
    outcome.retryAgain = way === 'threads' && this.preferred(outcome) === 'one' && ms < median(outcome.one);
    times.push(ms);
    if (times.length > KEPT_CALLS) times.shift();
  }

  /** Forgets every problem (tests). */
  clear() {
    this.outcomes.clear();
  }

  /** The faster way by the medians kept; threads until both have been timed. */
  private preferred(outcome: Outcome): ThreadWay {
    if (outcome.threads.length === 0 || outcome.one.length === 0) return 'threads';
    return median(outcome.threads) < median(outcome.one) ? 'threads' : 'one';
  }

  private choose(outcome: Outcome): ThreadChoice {
    // The first call on threads, the second on one thread: both ways timed.
    if (outcome.threads.length === 0) return {way: 'threads'};
    if (outcome.one.length === 0) return {way: 'one', reason: 'timing one thread'};
    if (this.preferred(outcome) === 'threads') {
      return outcome.sinceRetry + 1 >= ONE_THREAD_RETRY_CALLS ? {way: 'one', reason: 'timing one thread'} :
                                                                {way: 'threads'};
    }
    return outcome.retryAgain || outcome.sinceRetry + 1 >= THREADS_RETRY_CALLS ? {way: 'threads'} :
                                                                                 {way: 'one', reason: 'measured'};
  }

  /** The outcome of `key`, made the most recently used (created if new; the least recent forgotten). */
  private outcomeOf(key: string): Outcome {
    let outcome = this.outcomes.get(key);
    if (outcome === undefined) {
      outcome = {threads: [], one: [], sinceRetry: 0, retryAgain: false};
      if (this.outcomes.size >= KEPT_PROBLEMS) this.outcomes.delete(this.outcomes.keys().next().value!);
    } else {
      this.outcomes.delete(key);
    }
    this.outcomes.set(key, outcome);
    return outcome;
  }
}

/**
 * Whether threads pay for a problem, judged by how its calls went. On a machine whose other cores
 * are busy (another process, the engine's own garbage collector or compiler), or whose OS puts a
 * woken worker on the calling thread's core (docs/threads.md, "Where a woken worker runs"), the
 * workers share a core with the calling thread or with that work, and a threaded call can take
 * longer than the calling thread alone (docs/threads.md, "When threads do not pay"). So each
 * problem keeps the wall times of its last calls on threads and on one thread, and runs on one
 * thread while that is faster, trying the threads again from time to time.
 *
 * The way not taken is tried in a run of TRIAL_CALLS calls, whose times but the first replace
 * those kept of that way: the first call on threads after a while on one thread pays for waking
 * the workers, the first on one thread runs with a cold cache, and a problem's very first call
 * grows the memory and takes the page faults, so a try's first call judges a way by its worst
 * case; older times are from before the machine changed. A try ends early at a kept call that
 * takes TRY_LOSS times the other way's median: that call is enough of a verdict, and the calls
 * left would each pay the loss again.
 *
 * The values do not depend on the choice: one thread and N threads sum every output in the same
 * blocks and order.
 */

/** Calls kept per problem and way; the choice compares their medians, so one slow call moves nothing. */
export const KEPT_CALLS = 5;
/** Calls in a try of a way (the first is not kept; the others' times replace those kept of that way). */
export const TRIAL_CALLS = 4;
/**
 * A try's kept call this much slower than the other way's median ends the try: calls vary by
 * about 10% from one to the next, so the way lost (and a verdict that a pause of the engine
 * made is retried like any other). On a machine where the threads lose by 2×, a retry of them
 * then costs one call's loss after the first, not three.
 */
export const TRY_LOSS = 1.5;
/**
 * While one thread is faster, the threads are tried again after FIRST_THREADS_RETRY_CALLS calls,
 * then after twice as many each time they lose again, up to THREADS_RETRY_CALLS. A problem's
 * first calls on threads run while the engine still compiles the workers' code and the pool's
 * loops (a process's first ~100 threaded calls are slower than its later ones), so a first
 * verdict for one thread is retried soon; one the threads keep losing, less and less often: a
 * retry of threads that lose by 2× costs about 2 calls' time, 1% of the 256 calls between two
 * retries at the longest.
 */
export const FIRST_THREADS_RETRY_CALLS = 16;
export const THREADS_RETRY_CALLS = 256;
/**
 * While threads are faster, one thread is tried every this many calls times the threads' gain
 * (one thread's median ÷ theirs): the machine may have changed, and a try costs 4 calls at
 * 1/gain speed, so spacing tries by the gain keeps their cost near 4 / 512 of the time on any
 * number of cores.
 */
export const ONE_THREAD_RETRY_CALLS = 512;
/**
 * One thread is preferred when the threads' median is this much slower than its own. The
 * margin is what a problem can lose for good while on threads (when a spell of the machine
 * leaves them no gain, they run at up to this much of one thread's time), so it is small; a
 * median of KEPT_CALLS calls that crosses it by chance sends the problem to one thread until the
 * threads' retry FIRST_THREADS_RETRY_CALLS calls later, which costs no more than the ways differ.
 */
export const ONE_THREAD_MARGIN = 1.03;
/**
 * While threads are preferred, one thread is tried as soon as the threads' median has grown this
 * much over the lowest it has been since the two ways were last compared: the machine changed
 * (another process took a core, or the OS put the worker beside the calling thread), and waiting
 * for the next periodic try (ONE_THREAD_RETRY_CALLS × gain calls) would run hundreds of calls the
 * slow way. Calls vary by about 10% from one to the next; a median of KEPT_CALLS
 * that grows by a quarter does not come from that. Such a try comes at most every
 * SLOWDOWN_RETRY_CALLS calls, so a machine that changes back and forth costs at most 4 calls in
 * 64 at one thread's speed.
 */
export const THREADS_SLOWDOWN = 1.25;
export const SLOWDOWN_RETRY_CALLS = 64;
/** Problems remembered: the least recently used is forgotten beyond this. */
export const KEPT_PROBLEMS = 256;

/** How a call runs: on the threads asked for, or on the calling thread alone. */
export type ThreadWay = 'threads'|'one';

/** The way of the next call of a problem, and why. */
export interface ThreadChoice {
  readonly way: ThreadWay;
  /**
   * Why one thread (undefined on threads): `measured` while one thread has been faster, `timing
   * one thread` in a try of it (the problem's first TRIAL_CALLS calls after its first
   * TRIAL_CALLS on threads, then from time to time while threads are faster).
   */
  readonly reason?: 'measured'|'timing one thread';
}

interface Outcome {
  threads: number[];
  one: number[];
  /** Calls since the last try of the way not taken began. */
  sinceTrial: number;
  /** The way being tried and the calls of the try still to come. */
  trial?: {way: ThreadWay; callsLeft: number};
  /** The call now running is a try's first: its time is not kept. */
  dropTime: boolean;
  /** Retries of the threads since they were last preferred (each lost, or is running). */
  threadsTries: number;
  /** The way the last call ran when it was the way preferred; undefined after a call in a try. */
  settledOn?: ThreadWay;
  /**
   * One thread's own calls moved the problem to threads (their median rose over the threads'
   * kept one, which is older): one thread is tried again FIRST_THREADS_RETRY_CALLS calls later,
   * so that a few slow calls on one thread do not keep the problem on threads until the
   * periodic try, ONE_THREAD_RETRY_CALLS × gain calls away.
   */
  retryOne: boolean;
  /** The threads' lowest median since they were last compared with one thread and kept (THREADS_SLOWDOWN). */
  threadsReference?: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const choiceOf = (way: ThreadWay, trial: boolean): ThreadChoice =>
    way === 'threads' ? {way} : {way, reason: trial ? 'timing one thread' : 'measured'};

/** The wall times of each problem's recent calls on threads and on one thread, and the choice they make. */
export class ThreadOutcomes {
  private readonly outcomes = new Map<string, Outcome>();
  /** The calls `next` has chosen, per way, over all problems (benches report the share on threads). */
  readonly tally: Record<ThreadWay, number> = {threads: 0, one: 0};

  /** The way the next call of `key` runs, counted as a call (the caller then records its time). */
  next(key: string): ThreadChoice {
    const outcome = this.outcomeOf(key);
    const {way, trial, movedToOne} = this.wayOf(outcome);
    if (movedToOne) outcome.sinceTrial = 0;
    if (outcome.settledOn === 'one' && way === 'threads' && !trial) [outcome.sinceTrial, outcome.retryOne] = [0, true];
    outcome.dropTime = trial && outcome.trial === undefined;
    outcome.settledOn = trial ? undefined : way;
    if (outcome.settledOn === 'threads') {
      outcome.threadsTries = 0;
      outcome.threadsReference = Math.min(outcome.threadsReference ?? Infinity, median(outcome.threads));
    }
    if (outcome.trial !== undefined) {
      if (--outcome.trial.callsLeft === 0) outcome.trial = undefined;
    } else if (trial) {
      // A retry of the threads (the problem's first try of them is not one) lengthens the next wait.
      if (way === 'threads' && outcome.one.length > 0) outcome.threadsTries++;
      if (way === 'one') outcome.retryOne = false;
      // A try replaces the times kept of its way: they are from before the machine changed.
      (way === 'threads' ? outcome.threads : outcome.one).length = 0;
      outcome.threadsReference = undefined;
      outcome.trial = TRIAL_CALLS > 1 ? {way, callsLeft: TRIAL_CALLS - 1} : undefined;
      outcome.sinceTrial = 0;
    }
    outcome.sinceTrial++;
    this.tally[way]++;
    return choiceOf(way, trial);
  }

  /** The way a call of `key` would run now, without counting it (plans for tests and benches). */
  peek(key: string): ThreadChoice {
    const outcome = this.outcomes.get(key);
    if (outcome === undefined) return {way: 'threads'};
    const {way, trial} = this.wayOf(outcome);
    return choiceOf(way, trial);
  }

  /** Adds the wall time of the call `next` chose last (none for a try's first call). */
  record(key: string, way: ThreadWay, ms: number) {
    const outcome = this.outcomeOf(key);
    if (outcome.dropTime) {
      outcome.dropTime = false;
      return;
    }
    const [times, others] = way === 'threads' ? [outcome.threads, outcome.one] : [outcome.one, outcome.threads];
    times.push(ms);
    if (times.length > KEPT_CALLS) times.shift();
    if (outcome.trial?.way === way && others.length > 0 && ms > TRY_LOSS * median(others)) outcome.trial = undefined;
  }

  /**
   * The way of the next call, whether it is (or starts) a try of the way not preferred, and
   * whether the threads' own recent calls (not a try) just moved the problem to one thread: then
   * a retry of them would time what was just timed, so the wait for it starts at this call.
   */
  private wayOf(outcome: Outcome): {way: ThreadWay; trial: boolean; movedToOne?: boolean} {
    const {way, trial} = this.preferredWayOf(outcome);
    return outcome.settledOn === 'threads' && (way === 'threads' ? trial : !trial) ? {way: 'one', trial: false, movedToOne: true} :
                                                                       {way, trial};
  }

  private preferredWayOf(outcome: Outcome): {way: ThreadWay; trial: boolean} {
    // The first TRIAL_CALLS calls on threads, the next TRIAL_CALLS on one thread: both ways timed.
    if (outcome.trial !== undefined) return {way: outcome.trial.way, trial: true};
    if (outcome.threads.length === 0) return {way: 'threads', trial: true};
    if (outcome.one.length === 0) return {way: 'one', trial: true};
    const [threads, one] = [median(outcome.threads), median(outcome.one)];
    if (threads <= ONE_THREAD_MARGIN * one) {
      const retryCalls = ONE_THREAD_RETRY_CALLS * Math.max(1, one / threads);
      const slowedDown = outcome.threadsReference !== undefined && threads > THREADS_SLOWDOWN * outcome.threadsReference &&
          outcome.sinceTrial >= SLOWDOWN_RETRY_CALLS;
      const retryDue = outcome.sinceTrial >= (outcome.retryOne ? FIRST_THREADS_RETRY_CALLS : retryCalls);
      return retryDue || slowedDown ? {way: 'one', trial: true} : {way: 'threads', trial: false};
    }
    const retryCalls = Math.min(THREADS_RETRY_CALLS, FIRST_THREADS_RETRY_CALLS * 2 ** outcome.threadsTries);
    return outcome.sinceTrial >= retryCalls ? {way: 'threads', trial: true} : {way: 'one', trial: false};
  }

  /** The outcome of `key`, made the most recently used (created if new; the least recent forgotten). */
  private outcomeOf(key: string): Outcome {
    let outcome = this.outcomes.get(key);
    if (outcome === undefined) {
      outcome = {threads: [], one: [], sinceTrial: 0, dropTime: false, threadsTries: 0, retryOne: false};
      if (this.outcomes.size >= KEPT_PROBLEMS) this.outcomes.delete(this.outcomes.keys().next().value!);
    } else {
      this.outcomes.delete(key);
    }
    this.outcomes.set(key, outcome);
    return outcome;
  }
}

/**
 * The fuzzer's randomness: one small deterministic generator (mulberry32, as in
 * test/helpers/util.ts seededValues), so that every problem is reproducible from one 32-bit seed
 * in Node and in the browser alike.
 */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [low, high], both included. */
  int(low: number, high: number): number {
    return low + Math.floor(this.next() * (high - low + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(values: readonly T[]): T {
    return values[Math.floor(this.next() * values.length)];
  }

  /** One of `choices`, each [weight, value]. */
  weighted<T>(choices: ReadonlyArray<readonly [number, T]>): T {
    const total = choices.reduce((sum, [weight]) => sum + weight, 0);
    let u = this.next() * total;
    for (const [weight, value] of choices) {
      if (u < weight) return value;
      u -= weight;
    }
    return choices[choices.length - 1][1];
  }

  /** A fresh 32-bit seed. */
  seed(): number {
    return Math.floor(this.next() * 4294967296) >>> 0;
  }
}

/**
 * The seed of problem `index` of a run started with `runSeed` (murmur3's finalizer over both):
 * problems are independent of each other, so `--problem <seed>` regenerates any one of them.
 */
export function problemSeed(runSeed: number, index: number): number {
  let h = (Math.imul(runSeed >>> 0, 0x9e3779b1) ^ (index >>> 0)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

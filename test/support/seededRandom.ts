/**
 * Seeded pseudo-random numbers for tests and benchmarks (mulberry32: 32 bits of state, period
 * 2^32, good enough for address sets, client mixes and statistical tests with stated bounds). The
 * same seed always gives the same sequence, so a failing case can be replayed.
 */

/** Uniform unsigned 32-bit integers (0 … 2^32 − 1), one per call. */
export function seededUint32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Uniform numbers in [0, 1), one per call: {@link seededUint32} / 2^32 (a drop-in for `Math.random`). */
export function seededRandom(seed: number): () => number {
  const next = seededUint32(seed);
  return () => next() / 4294967296;
}

/**
 * {@link seededRandom} whose state can be copied: a reference run given a copy draws exactly what
 * the run under test draws next (differential tests of the decision cache against the pipeline).
 */
export class CopyableRandom {
  constructor(private state: number) {}

  /** The next number in [0, 1); bound, so it can be passed as a `ResolveContext.random`. */
  next = (): number => {
    const draw = seededUint32(this.state);
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    return draw() / 4294967296;
  };

  copy(): CopyableRandom {
    return new CopyableRandom(this.state);
  }
}

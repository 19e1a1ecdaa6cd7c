import { RotationStore } from './rotationStore.js';

/**
 * What a decision may take from outside its inputs, injected so tests can fix it: the random
 * source, the clock and the rotation store. The engine has one context for its lifetime.
 */
export interface ResolveContext {
  /** Uniform random number in [0, 1). */
  random(): number;
  /** Current time in ms since the Unix epoch. */
  now(): number;
  readonly rotation: RotationStore;
}

/** The production context: `Math.random`, `Date.now` and a fresh rotation store. */
export function systemContext(): ResolveContext {
  return { random: Math.random, now: Date.now, rotation: new RotationStore() };
}

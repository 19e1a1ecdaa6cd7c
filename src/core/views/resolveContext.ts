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
  /**
   * True for answers nobody asked ({@link unaskedContext}): stages then leave the state later
   * queries read as it is — a cache's use marks and counters, the agents' probe demand.
   * Absent (false) for every query a client sent.
   */
  readonly unasked?: boolean;
}

/** The production context: `Math.random`, `Date.now` and a fresh rotation store. */
export function systemContext(): ResolveContext {
  return { random: Math.random, now: Date.now, rotation: new RotationStore() };
}

/**
 * The draw of an unasked answer. A draw decides only answers that vary from query to query
 * (a random balance among several endpoints, a weighted tie between data centers), which are
 * never reused, so any fixed value in [0, 1) does; 0 keeps the draw loops' first iteration.
 */
const UNASKED_DRAW = 0;

/**
 * A context over `ctx` for answers nobody asked (the standalone listener's fast path answering
 * its templates' queries again after a publish, `src/doors/dns/README.md`): the same clock and
 * the live rotation read through {@link RotationStore.readOnlyView} (never advanced), a fixed
 * draw instead of `ctx`'s random source (whose sequence is left as it is), and
 * {@link ResolveContext.unasked} set. Any answer that would rotate or draw is one that varies, so
 * what such a context computes differently from a real query is never reused; every answer that
 * does not vary is the one a real query would get at that moment.
 */
export function unaskedContext(ctx: ResolveContext): ResolveContext {
  return { random: () => UNASKED_DRAW, now: () => ctx.now(), rotation: ctx.rotation.readOnlyView(), unasked: true };
}

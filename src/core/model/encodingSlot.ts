/**
 * Where a front door keeps what it encoded from one long-lived answer object — a reused
 * decision's frozen records and their frozen array (`decisionCache.ts`), a zone's static record:
 * on the object itself, in a slot each door reads and writes under its own symbol, instead of in
 * a module-wide WeakMap. Why (issue 17): V8 marks every WeakMap entry as an ephemeron in the
 * atomic pause of a full collection, and with the three doors' caches (the compact frame tails,
 * PowerDNS's reply texts, its static contents) a 20,000-record engine under load held an entry
 * per record and door; right after a publish every query also inserted into those growing
 * tables, which held the event loop 46–51 ms while the new decisions were first encoded.
 *
 * The slot is a non-enumerable property: a spread copy of the object (`{ ...record, name }`) does
 * not take it, so a copy never reads its original's encodings.
 */
const SLOT = Symbol('door encodings');

/** A door's cached encodings of one object, under the door's own symbols. */
export type EncodingSlot = Record<symbol, unknown>;

type Holder = { readonly [SLOT]?: EncodingSlot };

/** Gives `o` an empty slot and returns it: done before `o` is frozen (a frozen object can take none later). */
export function withEncodingSlot<T extends object>(o: T): T {
  Object.defineProperty(o, SLOT, { value: {}, enumerable: false });
  return o;
}

/**
 * The slot of `o`: the one it was given, else a new one when `o` can still take properties;
 * undefined for a frozen or sealed object given none (its encodings are then not kept).
 */
export function encodingSlot(o: object): EncodingSlot | undefined {
  const slot = (o as Holder)[SLOT];
  if (slot !== undefined || !Object.isExtensible(o)) return slot;
  withEncodingSlot(o);
  return (o as Holder)[SLOT];
}

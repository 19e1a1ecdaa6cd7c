import type { NameContents } from '../../zones/nameRrsets.js';

/** Longest time (ms) a selection waits for the second lookup of the same query. */
export const PAIRING_WINDOW_MS = 1000;
/** Entries kept per connection; more are never needed (one query at a time per connection). */
const MAX_ENTRIES = 32;

interface Entry {
  readonly contents: NameContents;
  readonly snapshot: object;
  readonly atMs: number;
}

/**
 * Makes PowerDNS's two lookups of one name per query cost one selection, so round-robin advances
 * once per DNS query, not twice (which would pin a two-endpoint rotation to one endpoint).
 *
 * Why: for a name below the zone apex, PowerDNS 4.7 looks the name up with qtype ANY twice per
 * query, on the same connection and with the same client: once in the referral search
 * (`getBestReferralNS`) and once for the answer (packethandler.cc, notes §4). The two requests
 * are identical, so they cannot be told apart; instead, a selection made by the first lookup is
 * handed, once, to the next identical lookup on the same connection within
 * {@link PAIRING_WINDOW_MS}, made on the same snapshot (a reload or a health change publishes a
 * new one). The answer lookup therefore
 * either reuses the selection its own referral lookup made moments before, or (when that one
 * consumed a leftover entry) selects afresh; either way each query advances rotation once and
 * answers with a selection made after any earlier state change.
 *
 * Callers pair only lookups PowerDNS repeats: names below the apex (the referral search stops at
 * the apex), not `*` owners (looked up once, by the wildcard search), not packet-less lookups,
 * and only with `consistent-backends=yes` (the default: every lookup is qtype ANY).
 */
export class LookupPairing {
  private readonly entries = new Map<string, Entry>();

  /** The selection made for the same key by the previous lookup, once; undefined otherwise. */
  take(key: string, snapshot: object, nowMs: number): NameContents | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    if (e.snapshot !== snapshot || nowMs - e.atMs > PAIRING_WINDOW_MS || nowMs < e.atMs) return undefined;
    return e.contents;
  }

  /** Keeps a fresh selection made on `snapshot` for the next identical lookup. */
  put(key: string, contents: NameContents, snapshot: object, nowMs: number): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, { contents, snapshot, atMs: nowMs });
  }
}

/** Longest time (ms) a selection waits for the second lookup of the same query. */
export const PAIRING_WINDOW_MS = 1000;
/**
 * Entries kept per connection: PowerDNS handles one query at a time per connection, and between
 * the two lookups of a name it makes at most a few others (referral checks of the parent names).
 */
const SLOTS = 8;

interface Entry {
  /** The request line as received. */
  line: string;
  qname: string;
  realRemote: string;
  remote: string;
  /** The reply text the selection produced. */
  reply: string;
  snapshot: object;
  atMs: number;
}

/**
 * Makes PowerDNS's two lookups of one name per query cost one selection, so round-robin advances
 * once per DNS query, not twice (which would pin a two-endpoint rotation to one endpoint).
 *
 * Why: for a name below the zone apex, PowerDNS 4.7 looks the name up with qtype ANY twice per
 * query, on the same connection and with the same client: once in the referral search
 * (`getBestReferralNS`) and once for the answer (packethandler.cc, docs/notes/powerdns-remote-backend.md §4). The two requests
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
  /** A small ring searched linearly: cheaper than building and hashing a key per lookup. */
  private readonly slots: (Entry | undefined)[] = new Array<Entry | undefined>(SLOTS).fill(undefined);
  private next = 0;

  /** The reply of the selection made for the same lookup by a previous one, once; undefined otherwise. */
  take(qname: string, realRemote: string, remote: string, snapshot: object, nowMs: number): string | undefined {
    for (let i = 0; i < SLOTS; i++) {
      const e = this.slots[i];
      if (e === undefined || e.qname !== qname || e.realRemote !== realRemote || e.remote !== remote) continue;
      return this.consume(i, e, snapshot, nowMs);
    }
    return undefined;
  }

  /**
   * {@link take} for a request line equal to the one that made a selection (PowerDNS repeats the
   * line exactly), checked before the line is parsed; undefined when no entry has this line.
   * `clock.now()` (ms) is read only when one has (most lines have none).
   */
  takeLine(line: string, snapshot: object, clock: { now(): number }): string | undefined {
    for (let i = 0; i < SLOTS; i++) {
      const e = this.slots[i];
      if (e !== undefined && e.line === line) return this.consume(i, e, snapshot, clock.now());
    }
    return undefined;
  }

  private consume(i: number, e: Entry, snapshot: object, nowMs: number): string | undefined {
    this.slots[i] = undefined;
    if (e.snapshot !== snapshot || nowMs - e.atMs > PAIRING_WINDOW_MS || nowMs < e.atMs) return undefined;
    return e.reply;
  }

  /** Keeps a fresh selection's reply, made on `snapshot` for request `line`, for the next identical lookup (the oldest entry makes room). */
  put(line: string, qname: string, realRemote: string, remote: string, reply: string, snapshot: object, nowMs: number): void {
    this.slots[this.next] = { line, qname, realRemote, remote, reply, snapshot, atMs: nowMs };
    this.next = (this.next + 1) % SLOTS;
  }
}

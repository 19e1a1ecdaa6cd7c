import type { AnswerRecord } from '../../core/dns/records.js';
import { rdataBytes } from '../../core/wire/wireResponse.js';

/** The RRSIGs of one RRset, as the cache keeps them. */
export interface CachedSignatures {
  /** The RRset they were looked up for (the records' identities serve the next lookup of the same objects). */
  readonly rrset: readonly AnswerRecord[];
  /** The content key ({@link contentKey}). */
  readonly key: string;
  /** The key state that made them (`ZoneKeyState.id`, `zoneKeys.ts`). */
  readonly stateId: string;
  /** The RRSIG records, frozen: every answer with this RRset carries these objects. */
  readonly rrsigs: readonly AnswerRecord[];
  /** Seconds since the epoch from which they are signed afresh (some time before they expire). */
  readonly refreshAt: number;
}

/**
 * The signature cache: RRSIGs by the exact content of the RRset they cover — owner name as
 * answered, type, TTL, every record's RDATA — and by the keys that sign (the zone's key state).
 * Each ECS variant of a GSLB RRset is different content, so it is signed once, its signatures are
 * reused for every client that gets the same variant, and no other variant can ever match them
 * (docs/PRODUCT.md §10).
 *
 * Two ways in, the same entries: the records' identities first (the decision cache hands out the
 * same frozen record objects for every query a decision serves, `src/pipeline/README.md`, so the
 * warm path compares a few references and builds no key), then the content key. Bounded: at most
 * `maxEntries` content keys, the oldest inserted going first, and an identity hit counts only
 * while its entry is still held under its content key. The identity map is a WeakMap on the
 * records, so it keeps nothing alive beyond what the engine still holds.
 */
export class SignatureCache {
  private readonly byContent = new Map<string, CachedSignatures>();
  private readonly byRecord = new WeakMap<AnswerRecord, CachedSignatures>();
  /** Lookups answered from the cache. */
  hits = 0;
  /** Lookups that had to sign. */
  misses = 0;

  constructor(readonly maxEntries: number) {}

  /** Entries held (content keys). */
  get size(): number {
    return this.byContent.size;
  }

  /**
   * The signatures of `rrset` (records `from` to `to` − 1 of `records`) made with the key state
   * `stateId`, still fresh at `now` (seconds), or undefined. Counts a hit when found.
   */
  get(records: readonly AnswerRecord[], from: number, to: number, stateId: string, now: number): CachedSignatures | undefined {
    const first = records[from]!;
    const known = this.byRecord.get(first);
    // Still held under its content key (the bound applies to both ways in); the key string's hash is cached by V8.
    if (
      known !== undefined &&
      known.refreshAt > now &&
      known.stateId === stateId &&
      sameRecords(known.rrset, records, from, to) &&
      this.byContent.get(known.key)?.rrsigs === known.rrsigs
    ) {
      this.hits++;
      return known;
    }
    const key = contentKey(records, from, to, stateId);
    const found = this.byContent.get(key);
    if (found === undefined || found.refreshAt <= now) return undefined;
    this.hits++;
    // The same content in other record objects (another query's copy): remember these too.
    this.byRecord.set(first, { ...found, rrset: records.slice(from, to) });
    return found;
  }

  /** Stores the signatures of `rrset` under its content key (made with {@link contentKey}); counts a miss. */
  set(rrset: readonly AnswerRecord[], key: string, stateId: string, rrsigs: readonly AnswerRecord[], refreshAt: number): CachedSignatures {
    this.misses++;
    const entry: CachedSignatures = { rrset, key, stateId, rrsigs, refreshAt };
    if (!this.byContent.has(key) && this.byContent.size >= this.maxEntries) this.byContent.delete(this.byContent.keys().next().value!);
    this.byContent.delete(key);
    this.byContent.set(key, entry);
    this.byRecord.set(rrset[0]!, entry);
    return entry;
  }

  /** Drops every entry (new keys or settings). */
  clear(): void {
    this.byContent.clear();
  }
}

/**
 * The content key of records `from`…`to` − 1 (one RRset): the key state, owner as answered,
 * type, the smallest TTL (the signatures' original TTL), then each record's RDATA with its
 * length, sorted (an RRset is a set: the order the engine listed it in does not matter).
 */
export function contentKey(records: readonly AnswerRecord[], from: number, to: number, stateId: string): string {
  const first = records[from]!;
  let ttl = first.ttl;
  const rdatas: string[] = [];
  for (let i = from; i < to; i++) {
    const r = records[i]!;
    if (r.ttl < ttl) ttl = r.ttl;
    rdatas.push(rdataBytes(r.type, r.data).toString('latin1'));
  }
  if (rdatas.length > 1) rdatas.sort();
  return `${stateId}\0${first.name}\0${first.type}\0${ttl}\0${rdatas.join('')}`;
}

function sameRecords(rrset: readonly AnswerRecord[], records: readonly AnswerRecord[], from: number, to: number): boolean {
  if (rrset.length !== to - from) return false;
  for (let i = 0; i < rrset.length; i++) if (rrset[i] !== records[from + i]) return false;
  return true;
}

import type { AnswerRecord, DnskeyData, DsData } from '../../core/dns/records.js';
import { dsOf } from './dnskey.js';
import type { DnssecKey, KeyTiming } from './keyFiles.js';

/** A signed zone as configured: its apex, its keys and what it publishes at the apex. */
export interface SignedZone {
  /** The apex, canonical. */
  readonly zone: string;
  readonly keys: readonly DnssecKey[];
  /** TTL (s) of the DNSKEY, CDS and CDNSKEY RRsets. */
  readonly dnskeyTtl: number;
  /** Publish CDS and CDNSKEY (RFC 7344) for the key-signing keys that sign. */
  readonly cds: boolean;
}

/**
 * The keys of a zone at one moment: which are published, which sign what, and the apex RRsets
 * that follow from that. A new state begins at every timing event of a key (BIND's metadata),
 * which is how a pre-published rollover happens without a reload: the successor appears in the
 * DNSKEY RRset at its `Publish` time, signs from its `Activate` time, and its predecessor stops
 * signing at its `Inactive` time and leaves the RRset at its `Delete` time.
 */
export interface ZoneKeyState {
  /** Names the signing keys: two states with the same id make the same signatures (part of the signature cache key). */
  readonly id: string;
  /** Seconds since the epoch from which this state holds (the last timing event; −Infinity when none). */
  readonly since: number;
  /** Seconds since the epoch from which this state no longer holds (the next timing event; Infinity when none). */
  readonly until: number;
  /** Keys that sign every RRset other than DNSKEY, CDS and CDNSKEY (the active ZSKs; the active KSKs when there are none). */
  readonly dataSigners: readonly DnssecKey[];
  /** Keys that sign DNSKEY, CDS and CDNSKEY (the active KSKs; the active ZSKs when there are none). */
  readonly keySigners: readonly DnssecKey[];
  /** The DNSKEY RRset: every published key. */
  readonly dnskey: readonly AnswerRecord[];
  /** The CDS RRset (SHA-256 digests) of the key-signing keys in their sync window; empty when none. */
  readonly cds: readonly AnswerRecord[];
  /** The CDNSKEY RRset matching {@link cds}. */
  readonly cdnskey: readonly AnswerRecord[];
}

/** True when `t` lies in [from, to); an absent bound is open. */
const within = (t: number, from: number | undefined, to: number | undefined): boolean => (from === undefined || from <= t) && (to === undefined || t < to);

/**
 * Whether a key is in the DNSKEY RRset at `now` (seconds): from `Publish` (else `Activate`) until
 * `Delete`. A key without `Publish` and `Activate` (`dnssec-keygen -C` or `-G`) is always published,
 * as dnssec-signzone treats keys without timing metadata.
 */
export function isPublished(t: KeyTiming, now: number): boolean {
  return within(now, t.publish ?? t.activate, t.delete);
}

/** Whether a published key signs at `now`: from `Activate` until `Inactive` (a key with neither `Publish` nor `Activate` always). */
export function isActive(t: KeyTiming, now: number): boolean {
  if (!isPublished(t, now)) return false;
  const start = t.activate ?? (t.publish === undefined ? undefined : Infinity);
  return within(now, start, t.inactive);
}

/** The state of `zone`'s keys at `now` (seconds since the epoch). */
export function keyStateAt(zone: SignedZone, now: number): ZoneKeyState {
  const published = zone.keys.filter((k) => isPublished(k.timing, now));
  const active = published.filter((k) => isActive(k.timing, now));
  const zsks = active.filter((k) => !k.ksk);
  const ksks = active.filter((k) => k.ksk);
  const dataSigners = zsks.length > 0 ? zsks : ksks;
  const keySigners = ksks.length > 0 ? ksks : zsks;
  const syncing = zone.cds ? ksks.filter((k) => within(now, k.timing.syncPublish, k.timing.syncDelete)) : [];
  const record = <T extends 'DNSKEY' | 'CDS' | 'CDNSKEY'>(type: T, data: T extends 'CDS' ? DsData : DnskeyData): AnswerRecord =>
    Object.freeze({ name: zone.zone, type, ttl: zone.dnskeyTtl, data });
  let since = -Infinity;
  let until = Infinity;
  for (const k of zone.keys) {
    for (const t of Object.values(k.timing)) {
      if (t === undefined) continue;
      if (t > now && t < until) until = t;
      if (t <= now && t > since) since = t;
    }
  }
  const tags = (keys: readonly DnssecKey[]): string => keys.map((k) => `${k.algorithm.number}+${k.keyTag}`).join(',');
  return {
    id: `${zone.zone}|${tags(dataSigners)}|${tags(keySigners)}`,
    since,
    until,
    dataSigners,
    keySigners,
    dnskey: published.map((k) => record('DNSKEY', k.dnskey)),
    cds: syncing.map((k) => record('CDS', dsOf(zone.zone, k.dnskey))),
    cdnskey: syncing.map((k) => record('CDNSKEY', k.dnskey)),
  };
}

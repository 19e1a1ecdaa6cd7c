import { asciiLower, canonicalName, parentName } from '../../core/dns/name.js';
import { RCODE } from '../../core/dns/rcode.js';
import { TYPE_CODES, type AnswerRecord, type NsecData, type ResourceRecord } from '../../core/dns/records.js';
import type { Answer, Query } from '../../core/model/query.js';
import { rrsigOf, type SignatureWindow } from './rrsig.js';
import { contentKey, type SignatureCache } from './signatureCache.js';
import type { ZoneContents } from './zoneContents.js';
import { keyStateAt, type SignedZone, type ZoneKeyState } from './zoneKeys.js';

/** NXNAME, the meta-type that marks a nonexistent name in a compact answer's NSEC (RFC 9824 §2). */
export const NXNAME = 128;
const RRSIG = TYPE_CODES.RRSIG;
const NSEC = TYPE_CODES.NSEC;
const DNSKEY = TYPE_CODES.DNSKEY;
const CDS = TYPE_CODES.CDS;
const CDNSKEY = TYPE_CODES.CDNSKEY;
const CNAME = TYPE_CODES.CNAME;
const NS = TYPE_CODES.NS;
const ANY = TYPE_CODES.ANY;
const DOT = 0x2e;

/** How signatures are timed, in seconds (the `dnssec.signatures` section). */
export interface SignatureTiming {
  /** How long a fresh signature is valid, from now. */
  readonly validity: number;
  /** Up to this much is taken off each expiration at random, so signatures made together do not all expire together. */
  readonly jitter: number;
  /** A cached signature is made afresh once less than this is left before it expires. */
  readonly refresh: number;
  /** How far before now inception lies (clock skew of validators; at least an hour). */
  readonly inceptionOffset: number;
}

/** One signed zone as the signer uses it: its keys, its contents, and its current key state. */
export interface SignerZone {
  readonly config: SignedZone;
  readonly contents: ZoneContents;
}

/** What the signer knows of the configuration: every zone (signed or not, by apex) and the timing. */
export interface SignerSetup {
  /** Every configured zone by canonical apex: its signing set-up, or null when it is not signed. */
  readonly zones: ReadonlyMap<string, SignerZone | null>;
  readonly timing: SignatureTiming;
}

/** What the signer did to one RRset, for `/explain`. */
export interface SigningNote {
  readonly owner: string;
  readonly type: string;
  /** Key tags of the RRSIGs it carries; empty when no key signs in its zone now. */
  readonly keyTags: readonly number[];
  /** True when the RRSIGs came from the signature cache. */
  readonly fromCache: boolean;
}

/** Where the signer counts what it does (plain numbers the metrics add at scrape time). */
export interface SignerCounts {
  /** One fresh signature made with an algorithm (its number). */
  signature(algorithm: number): void;
  /** One answer changed: `signed` (RRSIGs added), `denial` (compact denial), `keys` (DNSKEY, CDS or CDNSKEY at the apex). */
  answer(kind: 'signed' | 'denial' | 'keys'): void;
}

const NO_RECORDS: readonly AnswerRecord[] = Object.freeze([]);

/**
 * Online signing of the engine's answers for the zones that have keys (docs/PRODUCT.md §10), run
 * as the front doors' after-answer hook (`src/core/contracts/frontDoor.ts`) on the answer the
 * engine built for one client:
 *
 * - only for doors whose protocol carries the DO bit (`Query.dnssecOk` set: the standalone
 *   listener); CoreDNS and PowerDNS sign themselves;
 * - DNSKEY (and CDS, CDNSKEY, RFC 7344) at the apex, with or without DO, signed with DO;
 * - with DO: an RRSIG after every RRset of the answer, authority and additional sections that
 *   lies in a signed zone (positive answers, every step of a CNAME chain, wildcard expansions
 *   signed under the query name, RFC 9824 §3.4), from the {@link SignatureCache};
 * - negative answers by compact denial (RFC 9824, as CoreDNS's `dnssec` plugin does): the
 *   signed SOA, and one NSEC at the name denied (the query name, or the end of its CNAME chain)
 *   whose next name is its immediate successor `\000.name`; a nonexistent name becomes NODATA
 *   (NOERROR) with NXNAME in the NSEC's types, an existing one lists its configured types less
 *   the one asked for and CNAME (RFC 9824 §3);
 * - a referral gets an NSEC at the zone cut without DS (delegations are insecure);
 * - an explicit query for NXNAME is FORMERR (RFC 9824 §3.5).
 *
 * Never mutates the engine's answer or its records: a signed answer is a new object.
 */
export class AnswerSigner {
  private readonly states = new Map<SignerZone, ZoneKeyState>();
  /** The last name {@link zoneOf} resolved (most RRsets of an answer share the query name). */
  private lastName = '';
  private lastZone: SignerZone | undefined;

  constructor(
    private readonly setup: SignerSetup,
    private readonly cache: SignatureCache,
    private readonly clock: () => number,
    readonly counts: SignerCounts,
  ) {}

  /** The after-answer hook: the signed answer, or `answer` itself when there is nothing to sign. */
  sign(query: Query, answer: Answer, notes?: SigningNote[]): Answer {
    const dnssecOk = query.dnssecOk;
    if (dnssecOk === undefined) return answer;
    const qname = query.name.charCodeAt(query.name.length - 1) === DOT ? query.name.slice(0, -1) : query.name;
    const zone = this.zoneOf(qname);
    if (zone === undefined) return answer;
    if (query.type === NXNAME) return { rcode: RCODE.FORMERR, authoritative: false, answers: [], authority: [], additional: [], scope: 0, dcs: [] };
    if (answer.rcode !== RCODE.NOERROR && answer.rcode !== RCODE.NXDOMAIN) return answer;
    const now = Math.floor(this.clock() / 1000);
    const apex = asciiLower(qname) === zone.config.zone;
    if (apex && (query.type === DNSKEY || query.type === CDS || query.type === CDNSKEY)) {
      const keys = this.keysAnswer(zone, query.type, now, dnssecOk, notes);
      if (keys !== undefined) return keys;
    }
    if (!dnssecOk) return answer;
    if (!answer.authoritative) return this.referral(answer, now, notes);
    let answers: readonly AnswerRecord[] = answer.answers;
    if (apex && query.type === ANY && query.transport === 'tcp' && answer.answers.length > 0) {
      const state = this.stateOf(zone, now);
      answers = [...answers, ...state.dnskey, ...state.cds, ...state.cdnskey];
    }
    const soa = answer.authority[answer.authority.length - 1];
    if (soa?.type === 'SOA') return this.denial(query, qname, answer, answers, soa, now, notes);
    this.counts.answer('signed');
    return {
      rcode: answer.rcode,
      authoritative: true,
      answers: this.signSection(answers, now, notes),
      authority: this.signSection(answer.authority, now, notes),
      additional: this.signSection(answer.additional, now, notes),
      scope: answer.scope,
      dcs: answer.dcs,
      zone: answer.zone,
      selected: answer.selected,
      moreSelected: answer.moreSelected,
    };
  }

  /** The zone's DNSKEY, CDS or CDNSKEY RRset as the answer (signed with DO); undefined when it is empty. */
  private keysAnswer(zone: SignerZone, type: number, now: number, dnssecOk: boolean, notes: SigningNote[] | undefined): Answer | undefined {
    const state = this.stateOf(zone, now);
    const rrset = type === DNSKEY ? state.dnskey : type === CDS ? state.cds : state.cdnskey;
    if (rrset.length === 0) return undefined;
    this.counts.answer('keys');
    const answers = dnssecOk ? [...rrset, ...this.signatures(rrset, 0, rrset.length, zone, now, notes)] : [...rrset];
    return { rcode: RCODE.NOERROR, authoritative: true, answers, authority: [], additional: [], scope: 0, dcs: [], zone: zone.config.zone };
  }

  /**
   * A negative answer as a compact answer (RFC 9824 §3): NOERROR, the answer's CNAME chain signed,
   * the SOA signed, and the NSEC of the name denied, signed.
   */
  private denial(
    query: Query,
    qname: string,
    answer: Answer,
    answers: readonly AnswerRecord[],
    soa: AnswerRecord,
    now: number,
    notes: SigningNote[] | undefined,
  ): Answer {
    const zone = this.setup.zones.get(soa.name);
    const signedAnswers = this.signSection(answers, now, notes);
    if (!zone) return { ...answer, answers: signedAnswers };
    const last = answers[answers.length - 1];
    const owner = last?.type === 'CNAME' ? (last.data as string) : qname;
    const nxdomain = answer.rcode === RCODE.NXDOMAIN;
    const nsec: AnswerRecord = {
      name: owner,
      type: 'NSEC',
      ttl: soa.ttl,
      data: { nextName: `\\000.${owner}`, types: this.deniedTypes(zone, owner, query.type, nxdomain, now) } satisfies NsecData,
    };
    const authority: AnswerRecord[] = [];
    for (let i = 0; i < answer.authority.length; i++) {
      const r = answer.authority[i]!;
      authority.push(r, ...this.signatures(answer.authority, i, i + 1, zone, now, notes));
    }
    authority.push(nsec, ...this.signatures([nsec], 0, 1, zone, now, notes));
    this.counts.answer('denial');
    return {
      rcode: RCODE.NOERROR,
      authoritative: true,
      answers: signedAnswers,
      authority,
      additional: [],
      scope: answer.scope,
      dcs: answer.dcs,
      zone: answer.zone,
      selected: answer.selected,
      moreSelected: answer.moreSelected,
    };
  }

  /**
   * The NSEC types of a denial: RRSIG, NSEC and NXNAME for a nonexistent name; else the types
   * configured at the name (the DNSKEY, CDS and CDNSKEY published at the apex) with RRSIG and
   * NSEC, less the type asked for and CNAME, which a validator must not find there (RFC 4035 §5.4).
   */
  private deniedTypes(zone: SignerZone, owner: string, qtype: number, nxdomain: boolean, now: number): number[] {
    if (nxdomain) return [RRSIG, NSEC, NXNAME];
    const name = canonicalName(owner);
    const types = new Set(zone.contents.typesAt(name));
    types.add(RRSIG).add(NSEC);
    if (name === zone.config.zone) {
      const state = this.stateOf(zone, now);
      if (state.dnskey.length > 0) types.add(DNSKEY);
      if (state.cds.length > 0) types.add(CDS).add(CDNSKEY);
    }
    types.delete(qtype);
    types.delete(CNAME);
    return [...types].sort((a, b) => a - b);
  }

  /**
   * A referral from a signed zone: the NS RRset stays unsigned (RFC 4035 §2.2), and an NSEC at
   * the cut, listing NS but no DS, proves the delegation insecure. Its next name sorts after
   * every name below the cut (`cut\000.parent`), as CoreDNS's plugin writes it.
   */
  private referral(answer: Answer, now: number, notes: SigningNote[] | undefined): Answer {
    const ns = answer.authority[0];
    if (ns?.type !== 'NS') return answer;
    const zone = this.zoneOf(ns.name);
    if (zone === undefined) return answer;
    const dot = ns.name.indexOf('.');
    const next = dot < 0 ? `${ns.name}\\000` : `${ns.name.slice(0, dot)}\\000${ns.name.slice(dot)}`;
    const nsec: AnswerRecord = { name: ns.name, type: 'NSEC', ttl: ns.ttl, data: { nextName: next, types: [NS, RRSIG, NSEC] } satisfies NsecData };
    this.counts.answer('signed');
    return { ...answer, authority: [...answer.authority, nsec, ...this.signatures([nsec], 0, 1, zone, now, notes)] };
  }

  /** `records` with the RRSIGs of each RRset (a run of one owner and type) after it, for the RRsets in signed zones. */
  private signSection(records: readonly AnswerRecord[], now: number, notes: SigningNote[] | undefined): AnswerRecord[] {
    const out: AnswerRecord[] = [];
    for (let i = 0; i < records.length;) {
      const first = records[i]!;
      let j = i + 1;
      while (j < records.length && records[j]!.name === first.name && records[j]!.type === first.type) j++;
      for (let k = i; k < j; k++) out.push(records[k]!);
      const zone = first.type === 'RRSIG' ? undefined : this.zoneOf(first.name);
      if (zone !== undefined) {
        const sigs = this.signatures(records, i, j, zone, now, notes);
        for (let k = 0; k < sigs.length; k++) out.push(sigs[k]!);
      }
      i = j;
    }
    return out;
  }

  /** The RRSIGs of records `from`…`to` − 1 (one RRset) in `zone`: cached, or made now and cached. */
  private signatures(
    records: readonly AnswerRecord[],
    from: number,
    to: number,
    zone: SignerZone,
    now: number,
    notes: SigningNote[] | undefined,
  ): readonly AnswerRecord[] {
    const state = this.stateOf(zone, now);
    const type = records[from]!.type;
    const keys = type === 'DNSKEY' || type === 'CDS' || type === 'CDNSKEY' ? state.keySigners : state.dataSigners;
    if (keys.length === 0) {
      notes?.push({ owner: records[from]!.name, type, keyTags: [], fromCache: false });
      return NO_RECORDS;
    }
    const cached = this.cache.get(records, from, to, state.id, now);
    if (cached !== undefined) {
      notes?.push({ owner: records[from]!.name, type, keyTags: keys.map((k) => k.keyTag), fromCache: true });
      return cached.rrsigs;
    }
    const rrset = records.slice(from, to);
    const window = this.window(now);
    const rrsigs = keys.map((key) => {
      const data = Object.freeze(rrsigOf(rrset, key, zone.config.zone, window));
      this.counts.signature(key.algorithm.number);
      return Object.freeze({ name: rrset[0]!.name, type: 'RRSIG', ttl: data.originalTtl, data }) satisfies ResourceRecord<'RRSIG'>;
    });
    this.cache.set(rrset, contentKey(records, from, to, state.id), state.id, rrsigs, window.expiration - this.setup.timing.refresh);
    notes?.push({ owner: rrset[0]!.name, type, keyTags: keys.map((k) => k.keyTag), fromCache: false });
    return rrsigs;
  }

  /** A fresh signature's validity: inception backdated, expiration with jitter. */
  private window(now: number): SignatureWindow {
    const t = this.setup.timing;
    return { inception: now - t.inceptionOffset, expiration: now + t.validity - Math.floor(Math.random() * t.jitter) };
  }

  /** The zone's key state at `now`, recomputed at each timing event of its keys. */
  private stateOf(zone: SignerZone, now: number): ZoneKeyState {
    let state = this.states.get(zone);
    if (state === undefined || now >= state.until || now < state.since) {
      state = keyStateAt(zone.config, now);
      this.states.set(zone, state);
    }
    return state;
  }

  /** The signed zone that holds `name` (the most specific configured zone, if it has keys), or undefined. */
  private zoneOf(name: string): SignerZone | undefined {
    if (name === this.lastName) return this.lastZone;
    let n = canonicalName(name);
    let found: SignerZone | undefined;
    for (;;) {
      const z = this.setup.zones.get(n);
      if (z !== undefined) {
        found = z ?? undefined;
        break;
      }
      if (n === '') break;
      n = parentName(n);
    }
    this.lastName = name;
    this.lastZone = found;
    return found;
  }
}

import { randomBytes, randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { connect, isIPv6 } from 'node:net';
import dnsPacket from 'dns-packet';
import type { AnswerRecord, RecordType } from '../../core/dns/records.js';
import type { Client, DelegationHop } from '../../core/model/query.js';
import { formatIp, maskAddress } from '../../core/net/ipAddress.js';
import type { DelegatedAnswer, DelegationAttempt, DelegationRequest, DelegationTrace } from '../../core/views/proximityView.js';
import { DELEGATION_HOP_OPTION_CODE, ENGINE_ID_OCTETS, encodeDelegationHop } from '../../core/wire/delegationHopOption.js';
import { ECS_OPTION_CODE } from '../../core/wire/ecsOption.js';

/** A name server of a delegated zone. */
export interface SubTierNameServer {
  readonly name: string;
  readonly address: string;
  readonly port: number;
}

/** Delegations by outcome (Prometheus `gslbd_proximity_delegations_total{result}`). */
export interface DelegationCounts {
  /** A sub-tier answered. */
  answered: number;
  /** Served from the answer cache. */
  cached: number;
  /** No sub-tier answered within the budget: the selection's own answer (the next zone) was given. */
  failed: number;
  /** Refused by loop protection (the query carried this engine's id, or the hop limit was reached). */
  refused: number;
}

/** Engines a query may pass through by delegation (RFC-less; issue: "more than 2 hops" is refused). */
export const MAX_DELEGATION_HOPS = 2;
/** The widest client networks forwarded as ECS (RFC 7871 §11.1: /24 for IPv4, /56 for IPv6). */
const ECS_MAX = { 4: 24, 6: 56 } as const;
/** The UDP payload size advertised to sub-tiers (RFC 9715's 1232). */
const UDP_PAYLOAD = 1232;
/** Latencies kept between two scrapes at most (later ones are not observed). */
const LATENCIES_KEPT = 4096;
/** Answers kept at most (least recently used dropped first). */
const CACHE_SIZE = 10_000;
/** Record types taken from a sub-tier's answer section (the GSLB answer types of this engine). */
const TAKEN = new Set<string>(['A', 'AAAA', 'CNAME']);

interface CachedAnswer {
  readonly zone: string;
  readonly records: readonly AnswerRecord[];
  readonly scope: number;
  readonly expiresMs: number;
}

/**
 * Recursive delegation to sub-tiers (docs/PRODUCT.md §5; seed 000 step 6: "the PDNS begins a
 * recursive query of the name server to determine an authoritative response"): the engine asks a
 * delegated zone's name servers for the query name itself — UDP with a timeout per attempt and a
 * retry, TCP when the reply is truncated (RFC 7766 §5) — forwarding the client network as ECS,
 * never wider than /24 or /56 (RFC 7871 §11.1), and answers with the sub-tier's authoritative
 * records: TTLs capped by the record's, the ECS scope capped by the prefix forwarded. A reply
 * counts when it comes from the name server asked, echoes the query's id and question (RFC 5452
 * §4.3), has AA set, NOERROR and at least one record; otherwise the next name server, then the
 * next delegated zone, is asked (a name server that did not reply at all is asked once more),
 * all within the request's budget; when the budget runs out the
 * query keeps the selection's own answer (the next zone's data centers).
 *
 * Loop protection: every query carries the delegation hop option (`delegationHopOption.ts`) with
 * the id of the engine that delegated first and the hop count; a query that comes back with this
 * engine's id, or would exceed {@link MAX_DELEGATION_HOPS}, is refused instead of delegated again.
 * Answers are cached per (name, type, forwarded client network) for their TTL.
 *
 * A trial (`/explain`, a `trace` given) asks the same name servers the same way and reads the
 * cache, but neither fills the cache nor counts or times anything: the metrics and the cache stay
 * those of the query path, and the next query is answered as it would have been without the trial.
 */
export class SubTierResolver {
  /** This engine's id in the delegation hop option (random per process). */
  readonly engineId = randomBytes(ENGINE_ID_OCTETS).toString('hex');
  readonly counts: DelegationCounts = { answered: 0, cached: 0, failed: 0, refused: 0 };
  /** Seconds each delegation that went to the network took, for the latency histogram (read and emptied at scrape time). */
  readonly latencies: number[] = [];
  private readonly cache = new Map<string, CachedAnswer>();

  /** Empties the answer cache (a reload: the zones or their name servers may have changed). */
  clear(): void {
    this.cache.clear();
  }

  /** See `ProximityView.delegate`; `servers` gives each delegated zone's name servers. Never rejects. */
  async delegate(
    request: DelegationRequest,
    servers: ReadonlyMap<string, readonly SubTierNameServer[]>,
    name: string,
    type: RecordType,
    client: Client,
    hop: DelegationHop | undefined,
    nowMs: number,
    trace?: DelegationTrace,
  ): Promise<DelegatedAnswer | 'refused' | undefined> {
    const started = performance.now();
    // A query counts its outcome (and times it when it went to the network); a trial reports it in its trace.
    const done = <T extends DelegatedAnswer | 'refused' | undefined>(result: keyof DelegationCounts, answer: T): T => {
      if (trace !== undefined) {
        trace.result = result;
        trace.ms = performance.now() - started;
      } else {
        this.counts[result]++;
        if (result === 'answered' || result === 'failed') this.observe(started);
      }
      return answer;
    };
    if (hop !== undefined && (hop.origin === this.engineId || hop.hops >= MAX_DELEGATION_HOPS)) return done('refused', 'refused');
    const a = client.address;
    const prefix = Math.min(client.sourcePrefix, ECS_MAX[a.family]);
    const network = formatIp(maskAddress(a, prefix));
    const key = `${name.toLowerCase()}|${type}|${network}/${prefix}`;
    const hit = this.cache.get(key);
    if (hit !== undefined) {
      if (trace === undefined) this.cache.delete(key);
      if (hit.expiresMs > nowMs) {
        if (trace === undefined) this.cache.set(key, hit);
        const left = Math.max(1, Math.floor((hit.expiresMs - nowMs) / 1000));
        return done('cached', { zone: hit.zone, scope: hit.scope, records: hit.records.map((r) => (r.ttl > left ? { ...r, ttl: left } : r)) });
      }
    }
    const next: DelegationHop = hop === undefined ? { origin: this.engineId, hops: 1 } : { origin: hop.origin, hops: hop.hops + 1 };
    const ask: Ask = { name, type, family: a.family, network, prefix, hop: encodeDelegationHop(next) };
    const deadline = started + request.budgetMs;
    for (const zone of request.zones) {
      // A name server that replied (with anything) is not asked again; one that stayed silent is retried once.
      let silent = servers.get(zone) ?? [];
      for (let round = 0; round < 2 && silent.length > 0; round++) {
        const unanswered: SubTierNameServer[] = [];
        for (const ns of silent) {
          const left = deadline - performance.now();
          if (left <= 0) return done('failed', undefined);
          const asked = performance.now();
          const got = await query(ns, ask, Math.min(left, request.attemptMs));
          const answer = got === undefined ? undefined : delegatedAnswer(got.reply, zone, name, request.ttl, prefix);
          trace?.attempts.push(attempt(zone, ns, got, answer, performance.now() - asked));
          if (got === undefined) {
            unanswered.push(ns);
            continue;
          }
          if (answer === undefined) continue;
          if (trace === undefined) this.remember(key, answer, nowMs + Math.min(...answer.records.map((r) => r.ttl)) * 1000);
          return done('answered', answer);
        }
        silent = unanswered;
      }
    }
    return done('failed', undefined);
  }

  private observe(started: number): void {
    if (this.latencies.length < LATENCIES_KEPT) this.latencies.push((performance.now() - started) / 1000);
  }

  private remember(key: string, answer: DelegatedAnswer, expiresMs: number): void {
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { zone: answer.zone, records: answer.records, scope: answer.scope, expiresMs });
  }
}

/** One question to a sub-tier. */
interface Ask {
  readonly name: string;
  readonly type: RecordType;
  readonly family: 4 | 6;
  /** The forwarded client network and its prefix length (the ECS option). */
  readonly network: string;
  readonly prefix: number;
  /** The delegation hop option's payload. */
  readonly hop: Buffer;
}

/** A decoded reply that passed the checks of {@link query}. */
type Reply = dnsPacket.Packet;

/** The query message for `ask` with `id`. */
function message(ask: Ask, id: number): dnsPacket.Packet {
  return {
    type: 'query',
    id,
    flags: 0,
    questions: [{ type: ask.type as dnsPacket.RecordType, name: ask.name }],
    additionals: [
      {
        type: 'OPT',
        name: '.',
        udpPayloadSize: UDP_PAYLOAD,
        flags: 0,
        options: [
          { code: ECS_OPTION_CODE, family: ask.family === 4 ? 1 : 2, sourcePrefixLength: ask.prefix, scopePrefixLength: 0, ip: ask.network },
          { code: DELEGATION_HOP_OPTION_CODE, data: ask.hop },
        ],
      } as dnsPacket.Answer,
    ],
  };
}

/** True when `reply` answers `ask`'s message `id`: a response with its id and its question (RFC 5452 §4.3). */
function matches(reply: dnsPacket.Packet, ask: Ask, id: number): boolean {
  const q = reply.questions?.[0];
  return reply.type === 'response' && reply.id === id && q !== undefined && q.type === ask.type && q.name.toLowerCase() === ask.name.toLowerCase();
}

/** A reply that passed the checks of {@link query}, and the transport that brought it. */
interface Received {
  readonly reply: Reply;
  readonly transport: 'udp' | 'tcp';
}

/** Asks `ns` over UDP, then over TCP when the reply is truncated; undefined on a timeout, an error or a reply that does not match. Never rejects. */
async function query(ns: SubTierNameServer, ask: Ask, timeoutMs: number): Promise<Received | undefined> {
  const started = performance.now();
  const reply = await overUdp(ns, ask, timeoutMs);
  if (reply === undefined) return undefined;
  if (!truncated(reply)) return { reply, transport: 'udp' };
  const tcp = await overTcp(ns, ask, timeoutMs - (performance.now() - started));
  return tcp && { reply: tcp, transport: 'tcp' };
}

/** One attempt as `/explain` shows it. */
function attempt(zone: string, ns: SubTierNameServer, got: Received | undefined, answer: DelegatedAnswer | undefined, ms: number): DelegationAttempt {
  const nameServer = `${ns.name} (${ns.address.includes(':') ? `[${ns.address}]` : ns.address}:${ns.port})`;
  if (got === undefined) return { zone, nameServer, transport: 'udp', rcode: undefined, outcome: 'no reply', ms };
  const flags = got.reply.flags ?? 0;
  const rcode = flags & 0x0f;
  const outcome =
    answer !== undefined
      ? 'answered'
      : (flags & dnsPacket.AUTHORITATIVE_ANSWER) === 0
        ? 'not authoritative'
        : rcode !== 0
          ? 'rcode'
          : 'no A, AAAA or CNAME records';
  return { zone, nameServer, transport: got.transport, rcode, outcome, ms };
}

function truncated(reply: Reply): boolean {
  return ((reply.flags ?? 0) & dnsPacket.TRUNCATED_RESPONSE) !== 0;
}

function overUdp(ns: SubTierNameServer, ask: Ask, timeoutMs: number): Promise<Reply | undefined> {
  return new Promise((resolve) => {
    const id = randomInt(0, 65536);
    const socket = createSocket(isIPv6(ns.address) ? 'udp6' : 'udp4');
    let settled = false;
    const done = (reply: Reply | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.close();
      resolve(reply);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.on('error', () => done(undefined));
    socket.on('message', (msg, from) => {
      if (from.port !== ns.port || from.address !== ns.address) return;
      try {
        const reply = dnsPacket.decode(msg);
        if (matches(reply, ask, id)) done(reply);
      } catch {
        // Not a DNS message: keep waiting for the reply.
      }
    });
    socket.send(dnsPacket.encode(message(ask, id)), ns.port, ns.address, (e) => {
      if (e) done(undefined);
    });
  });
}

function overTcp(ns: SubTierNameServer, ask: Ask, timeoutMs: number): Promise<Reply | undefined> {
  if (timeoutMs <= 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const id = randomInt(0, 65536);
    const socket = connect({ host: ns.address, port: ns.port });
    let buffered = Buffer.alloc(0);
    let settled = false;
    const done = (reply: Reply | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(reply);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.on('error', () => done(undefined));
    socket.on('close', () => done(undefined));
    socket.on('connect', () => socket.write(dnsPacket.streamEncode(message(ask, id))));
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 2 || buffered.length < 2 + buffered.readUInt16BE(0)) return;
      try {
        const reply = dnsPacket.streamDecode(buffered.subarray(0, 2 + buffered.readUInt16BE(0)));
        done(matches(reply, ask, id) ? reply : undefined);
      } catch {
        done(undefined);
      }
    });
  });
}

/**
 * The sub-tier's answer as this engine gives it, or undefined when the reply does not count (not
 * authoritative, not NOERROR, no A, AAAA or CNAME record): records owned by the query name keep
 * its spelling, TTLs are capped by `ttl`, the scope by the forwarded `prefix`.
 */
function delegatedAnswer(reply: Reply, zone: string, name: string, ttl: number, prefix: number): DelegatedAnswer | undefined {
  const flags = reply.flags ?? 0;
  // The RCODE is the flags word's low four bits (RFC 1035 §4.1.1): NOERROR only.
  if ((flags & dnsPacket.AUTHORITATIVE_ANSWER) === 0 || (flags & 0x0f) !== 0) return undefined;
  const lower = name.toLowerCase();
  const records: AnswerRecord[] = [];
  for (const r of reply.answers ?? []) {
    if (!TAKEN.has(r.type) || !('data' in r) || typeof r.data !== 'string') continue;
    const owner = r.name.toLowerCase();
    records.push({
      name: owner === lower ? name : owner,
      type: r.type as RecordType,
      ttl: Math.min(r.ttl ?? 0, ttl),
      data: r.type === 'CNAME' ? r.data.toLowerCase() : r.data,
    });
  }
  if (records.length === 0) return undefined;
  let scope = 0;
  for (const a of reply.additionals ?? []) {
    if (a.type !== 'OPT') continue;
    for (const o of (a as dnsPacket.OptAnswer).options ?? [])
      if (o.code === ECS_OPTION_CODE) scope = Math.min((o as { scopePrefixLength?: number }).scopePrefixLength ?? 0, prefix);
  }
  return { zone, records, scope };
}

import { performance } from 'node:perf_hooks';
import type { ZoneSigningKeys } from '../../core/contracts/zoneSigningKeys.js';
import { canonicalName } from '../../core/dns/name.js';
import { RECORD_TYPES, type RecordType } from '../../core/dns/records.js';
import type { Logger } from '../../core/telemetry/logger.js';
import type { RateLimitedLog } from '../../core/telemetry/rateLimitedLog.js';
import type { AnswerWrapper } from '../answerWrapper.js';
import type { DoorEngine } from '../doorHost.js';
import type { ResolveContext } from '../../core/views/resolveContext.js';
import type { Snapshot } from '../../pipeline/snapshot.js';
import type { NameContents } from '../../pipeline/zones/nameRrsets.js';
import type { ZoneData } from '../../pipeline/zones/zoneIndex.js';
import { LookupPairing } from './lookupPairing.js';
import { parseLookupLine, type LookupLine } from './lookupLine.js';
import { lookupReply, NO_RECORDS } from './lookupReply.js';
import type { PowerDnsMetrics, ProtocolErrorReason, RequestOutcome } from './metrics.js';
import { fallbackClient, remoteClient, type RemoteClient } from './remoteClient.js';
import { StaticLines, staticRepliesOf } from './staticReplies.js';
import { zoneIdsOf } from './zoneIds.js';
import { zoneListing } from './zoneListing.js';

/** What the protocol handler needs from the process. */
export interface RemoteBackendDeps {
  readonly engine: DoorEngine;
  readonly metrics: PowerDnsMetrics;
  /**
   * The door's shared answer wrapper (`src/doors/answerWrapper.ts`): its timing-sample policy,
   * its data-center counts and its failure log line. One per door, shared by its connections.
   */
  readonly answers: AnswerWrapper;
  readonly log: Logger;
  /** Warnings about peers' bad requests, one line per kind and minute for the whole door (`RateLimitedLog`). */
  readonly warnings: RateLimitedLog;
  /** The engine's context with a read-only rotation view, for packet-less lookups. */
  readonly lookOnlyCtx: ResolveContext;
  /** The signing keys of signed zones (the DNSSEC capability), handed to PowerDNS for live signing; absent: no zone is signed. */
  readonly zoneKeys?: ZoneSigningKeys;
}

/** The reply to one request line, and whether the connection closes after it. */
export interface Reply {
  /** The reply document followed by its newline, ready to write. */
  readonly text: string;
  readonly close: boolean;
  /** Set when the connection closes because of bad input. */
  readonly protocolError?: ProtocolErrorReason;
}

/**
 * Methods of the PowerDNS 4.x remote backend API (4.7.3 remotebackend.cc and docs/backends/remote.rst)
 * that gslbd does not offer. They are answered `{"result": false}`, which PowerDNS reads as "not
 * supported / nothing": key and metadata writes, TSIG, secondary and primary operation, updates,
 * searches, and `getBeforeAndAfterNamesAbsolute`, which PowerDNS asks only for NSEC and
 * non-narrow NSEC3 (signed zones are NSEC3 narrow, {@link SIGNED_ZONE_METADATA}).
 */
const NOT_OFFERED = new Set([
  'getBeforeAndAfterNamesAbsolute',
  'setDomainMetadata',
  'addDomainKey',
  'removeDomainKey',
  'activateDomainKey',
  'deactivateDomainKey',
  'publishDomainKey',
  'unpublishDomainKey',
  'getTSIGKey',
  'getTSIGKeys',
  'setTSIGKey',
  'deleteTSIGKey',
  'setNotified',
  'isMaster',
  'superMasterBackend',
  'createSlaveDomain',
  'replaceRRSet',
  'feedRecord',
  'feedEnts',
  'feedEnts3',
  'startTransaction',
  'commitTransaction',
  'abortTransaction',
  'calculateSOASerial',
  'directBackendCmd',
  'searchRecords',
  'getUpdatedMasters',
  'getUnfreshSlaveInfos',
  'setStale',
  'setFresh',
  'APILookup',
]);

const OFFERED = new Set(['initialize', 'lookup', 'list', 'getAllDomains', 'getAllDomainMetadata', 'getDomainMetadata', 'getDomainInfo', 'getDomainKeys']);

/**
 * The domain metadata of a signed zone (PowerDNS's `NSEC3PARAM` and `NSEC3NARROW` kinds): NSEC3
 * with SHA-1, no opt-out, no extra iterations and no salt (RFC 9276 §3.1), in narrow mode, where
 * PowerDNS answers denials with NSEC3 records made from the queried name's hash alone (hash − 1
 * to hash + 1) and so never asks the backend for an ordered name chain, which an engine whose
 * names and answers depend on the client could not give. Unsigned zones have none.
 */
export const SIGNED_ZONE_METADATA: Readonly<Record<string, readonly string[]>> = { NSEC3PARAM: ['1 0 0 -'], NSEC3NARROW: ['1'] };
const RECORD_TYPE_NAMES: ReadonlySet<string> = new Set(RECORD_TYPES);
const NOT_OFFERED_REPLY = '{"result":false}';
const NOT_OFFERED_LINE = `${NOT_OFFERED_REPLY}\n`;

/** An invalid request: answered without a `result` key (PowerDNS: SERVFAIL), connection kept. */
class InvalidRequest extends Error {}

/**
 * One connection's side of the PowerDNS remote backend protocol (docs/notes/powerdns-remote-backend.md §2–§6): turns each
 * request line into exactly one JSON reply document. Never throws.
 *
 * - `initialize`: `{"result": true}`; every connection-string option arrives as a string, and
 *   `instance=` names the PowerDNS front-end in logs and metrics.
 * - `getAllDomains`, `getDomainInfo`: our zones as native zones with their serials (never an
 *   empty list: the socket opens only after the configuration loaded, and an empty list makes
 *   PowerDNS refuse the zones for up to 300 s).
 * - `getDomainKeys`: the signing keys of a signed zone (`deps.zoneKeys`), with their active and
 *   published state now, for PowerDNS live signing (`remote-dnssec=yes`); `[]` for other zones.
 * - `getAllDomainMetadata`, `getDomainMetadata`: NSEC3 narrow for a signed zone
 *   ({@link SIGNED_ZONE_METADATA}); `{}` / `[]` for other zones.
 * - `lookup`: the records of one owner name, GSLB records selected for the client (see
 *   {@link lookupReply}).
 * - `list`: every record of a zone, GSLB records with every endpoint ({@link zoneListing}), so
 *   `pdnsutil check-zone` and `list-zone` work.
 * - the rest of the API: `{"result": false}`.
 *
 * Failures: an exception inside the engine, or a request with invalid parameters, is answered
 * with an object without `result`, which PowerDNS turns into SERVFAIL (and reconnects) — never
 * `result: false` or `[]`, which PowerDNS would turn into a cached NXDOMAIN. Malformed JSON, a
 * line that is not a request object, and unknown method names close the connection after that
 * error reply; other connections are unaffected.
 */
export class RemoteBackendSession {
  /** The `instance` option of the connection string, once initialized. */
  instance: string | undefined;
  private readonly pairing = new LookupPairing();
  private readonly staticLines = new StaticLines();
  private lastRealRemote = '';
  private lastRemote = '';
  private lastClient: RemoteClient | undefined;

  constructor(private readonly deps: RemoteBackendDeps) {}

  /**
   * Handles one request line (without its newline). The reply is a promise only for a lookup whose
   * GSLB selection delegates to a sub-tier's name servers (recursive delegation,
   * `Engine.nameRrsetsFollowing`), within the delegation budget; PowerDNS waits for it, as it keeps
   * one request outstanding per connection. Never rejects.
   */
  handle(line: string): Reply | Promise<Reply> {
    const repeated = this.repeatedLookup(line);
    if (repeated !== undefined) return { text: repeated, close: false };
    const lookup = parseLookupLine(line);
    if (lookup !== undefined) return this.answer('lookup', lookup, lookup, line);
    let request: unknown;
    try {
      request = JSON.parse(line);
    } catch (e) {
      return this.reject('malformed_json', `request is not JSON: ${(e as Error).message}`);
    }
    if (typeof request !== 'object' || request === null || Array.isArray(request) || typeof (request as { method?: unknown }).method !== 'string') {
      return this.reject('not_a_request', 'request is not an object with a string "method"');
    }
    const method = (request as { method: string }).method;
    const params = (request as { parameters?: unknown }).parameters;
    if (!OFFERED.has(method)) {
      if (NOT_OFFERED.has(method)) {
        this.count(method, 'not_offered');
        return { text: NOT_OFFERED_LINE, close: false };
      }
      return this.reject('unknown_method', `unknown method ${JSON.stringify(method.slice(0, 64))}`);
    }
    const p = typeof params === 'object' && params !== null && !Array.isArray(params) ? (params as Record<string, unknown>) : {};
    return this.answer(method, p, undefined, line);
  }

  /**
   * The reply to an offered method with parameters `p`; `lookup` holds a lookup's parameters when
   * {@link parseLookupLine} read them from the line (else they are read from `p`).
   */
  private answer(method: string, p: object, lookup: LookupLine | undefined, line: string): Reply | Promise<Reply> {
    try {
      const params = p as Record<string, unknown>;
      if (method === 'lookup') {
        const text = this.lookup(lookup ?? lookupParams(params), line);
        if (typeof text !== 'string')
          return text.then(
            (t) => {
              this.count(method, 'ok');
              return { text: t, close: false };
            },
            (e: unknown) => this.failure(method, p, e),
          );
        this.count(method, 'ok');
        return { text, close: false };
      }
      const text = this.dispatch(method, params);
      this.count(method, text === NOT_OFFERED_REPLY ? 'not_offered' : 'ok');
      return { text: `${text}\n`, close: false };
    } catch (e) {
      return this.failure(method, p, e);
    }
  }

  /** The error reply (PowerDNS: SERVFAIL) to a request that failed with `e`, counted and logged. */
  private failure(method: string, p: object, e: unknown): Reply {
    const invalid = e instanceof InvalidRequest;
    this.count(method, invalid ? 'invalid' : 'error');
    const message = (e as Error).message;
    if (invalid)
      this.deps.warnings.warn('invalid', { instance: this.instance, method, reason: message }, 'invalid remote backend request; answering an error (SERVFAIL)');
    else
      this.deps.answers.logFailure(
        e,
        { instance: this.instance, method, params: p },
        'remote backend request failed in the engine; answering an error (SERVFAIL)',
      );
    return { text: errorReply(invalid ? message : `engine error: ${message}`), close: false };
  }

  private dispatch(method: string, p: Record<string, unknown>): string {
    switch (method) {
      case 'initialize':
        return this.initialize(p);
      case 'getAllDomains':
        return this.getAllDomains();
      case 'getDomainInfo':
        return this.getDomainInfo(p);
      case 'list':
        return this.list(p);
      case 'getAllDomainMetadata':
        return JSON.stringify({ result: this.signed(p) ? SIGNED_ZONE_METADATA : {} });
      case 'getDomainMetadata':
        return JSON.stringify({ result: (this.signed(p) && typeof p.kind === 'string' ? SIGNED_ZONE_METADATA[p.kind] : undefined) ?? [] });
      case 'getDomainKeys':
        return JSON.stringify({ result: this.keysOf(p) ?? [] });
      default:
        return '{"result":[]}';
    }
  }

  /**
   * The records of the zone `p.zonename` ({@link zoneListing}); `{"result": false}` for a name that
   * is no zone of ours.
   * @throws InvalidRequest when `zonename` is not a string.
   */
  private list(p: Record<string, unknown>): string {
    if (typeof p.zonename !== 'string') throw new InvalidRequest('list needs a string "zonename"');
    const zones = this.deps.engine.snapshot.zones;
    const zone = zones.zone(canonicalName(p.zonename));
    return zone ? zoneListing(zone, zoneIdsOf(zones).idOf(zone)) : NOT_OFFERED_REPLY;
  }

  /**
   * The keys of the zone `p.name` (PowerDNS's key objects: `id`, `flags`, `active`, `published`,
   * `content` = the BIND private key text); undefined when the zone is not signed.
   * @throws InvalidRequest when `name` is not a string.
   */
  private keysOf(p: Record<string, unknown>): object[] | undefined {
    if (typeof p.name !== 'string') throw new InvalidRequest('a key or metadata request needs a string "name"');
    const keys = this.deps.zoneKeys?.keysOf(canonicalName(p.name), Math.floor(this.deps.engine.ctx.now() / 1000));
    return keys?.map((k) => ({ id: k.id, flags: k.flags, active: k.active, published: k.published, content: k.privateKeyText }));
  }

  private signed(p: Record<string, unknown>): boolean {
    return this.keysOf(p) !== undefined;
  }

  private initialize(p: Record<string, unknown>): string {
    this.instance = typeof p.instance === 'string' ? p.instance : '';
    this.deps.log.debug({ instance: this.instance, options: p }, 'PowerDNS connection initialized');
    return JSON.stringify({
      result: true,
      log: [`gslbd remote backend ready (instance "${this.instance}", generation ${this.deps.engine.snapshot.generation})`],
    });
  }

  private getAllDomains(): string {
    const zones = this.deps.engine.snapshot.zones;
    const ids = zoneIdsOf(zones);
    return JSON.stringify({ result: [...zones.zones].map((z) => domainInfo(z, ids.idOf(z))) });
  }

  private getDomainInfo(p: Record<string, unknown>): string {
    if (typeof p.name !== 'string') throw new InvalidRequest('getDomainInfo needs a string "name"');
    const zones = this.deps.engine.snapshot.zones;
    const zone = zones.zone(canonicalName(p.name));
    return zone ? JSON.stringify({ result: domainInfo(zone, zoneIdsOf(zones).idOf(zone)) }) : NOT_OFFERED_REPLY;
  }

  /**
   * The reply to a lookup line PowerDNS sent before in the same form, without parsing it: a
   * static reply of this snapshot, or the paired selection of the previous identical lookup
   * ({@link LookupPairing.takeLine}). PowerDNS repeats such lines around every query (the zone's
   * SOA, the second lookup of a name), and parsing them was most of their cost. Undefined for
   * any other line, which then takes the full path.
   */
  private repeatedLookup(line: string): string | undefined {
    const { engine, metrics } = this.deps;
    const snapshot = engine.snapshot;
    let reply = this.staticLines.reply(snapshot, line);
    if (reply === undefined) {
      reply = this.pairing.takeLine(line, snapshot, engine.ctx);
      if (reply === undefined) return undefined;
      metrics.reuses++;
    }
    metrics.lookups++;
    // Only ANY lookups are remembered as lines (static replies and pairing).
    metrics.anyLookups++;
    this.count('lookup', 'ok');
    return reply;
  }

  private lookup(p: LookupLine, line: string): string | Promise<string> {
    const metrics = this.deps.metrics;
    metrics.lookups++;
    metrics.countLookupType(p.qtype);
    // Timing every lookup would cost as much as a cheap lookup: the doors' one sample policy.
    const started = this.deps.answers.startTiming();
    const reply = this.lookupReply(p, line);
    if (started < 0) return reply;
    if (typeof reply === 'string') {
      metrics.observeLookup((performance.now() - started) / 1000);
      return reply;
    }
    return reply.then((text) => {
      metrics.observeLookup((performance.now() - started) / 1000);
      return text;
    });
  }

  private lookupReply(p: LookupLine, line: string): string | Promise<string> {
    const { qname, qtype, remote, realRemote, zoneId } = p;
    const rc = this.clientOf(realRemote, remote);
    const { engine } = this.deps;
    const snapshot = engine.snapshot;
    const allTypes = qtype === 'ANY';
    const replies = allTypes ? staticRepliesOf(snapshot, qname) : undefined;
    const known = replies?.get(zoneId);
    if (known !== undefined) {
      this.staticLines.remember(snapshot, line, known);
      return known;
    }
    let type: RecordType | undefined;
    if (!allTypes) {
      const upper = qtype.toUpperCase();
      if (!RECORD_TYPE_NAMES.has(upper)) return NO_RECORDS;
      type = upper as RecordType;
    }
    // Configured names hold only letters, digits, '-', '_' and '*'; a name PowerDNS had to
    // escape (\DDD, \., \\) can be no owner of ours.
    if (qname.includes('\\')) return NO_RECORDS;

    const pairs = allTypes && !rc.packetless;
    const now = engine.ctx.now();
    const paired = pairs ? this.pairing.take(qname, realRemote, remote, snapshot, now) : undefined;
    if (paired !== undefined) {
      this.deps.metrics.reuses++;
      return paired;
    }
    const name = canonicalName(qname);
    const ids = zoneIdsOf(snapshot.zones);
    const hinted: ZoneData | undefined = zoneId >= 0 ? ids.zoneOf(zoneId) : undefined;
    // A lookup for a query may wait for a sub-tier (recursive delegation); a packet-less one (the
    // zone's SOA before a query, a transfer) only reads, and never delegates.
    const contents = rc.packetless
      ? engine.nameRrsets(name, rc.client, this.deps.lookOnlyCtx, type, hinted)
      : engine.nameRrsetsFollowing(name, rc.client, engine.ctx, type, hinted);
    if (contents instanceof Promise) return contents.then((c) => this.dynamicReply(p, line, c, rc, name, pairs, snapshot, engine.ctx.now()));
    if (!contents) {
      if (replies) {
        replies.set(zoneId, NO_RECORDS);
        this.staticLines.remember(snapshot, line, NO_RECORDS);
      }
      return NO_RECORDS;
    }
    if (!contents.dynamic) {
      const reply = lookupReply(p.qnameJson, contents, rc, ids.idOf(contents.zone), allTypes);
      if (replies) {
        replies.set(zoneId, reply);
        this.staticLines.remember(snapshot, line, reply);
      }
      return reply;
    }
    return this.dynamicReply(p, line, contents, rc, name, pairs, snapshot, now);
  }

  /**
   * The reply to a lookup whose result depends on the client (a GSLB selection): counted by data
   * center and record, and remembered for the query's second lookup (`lookupPairing.ts`).
   */
  private dynamicReply(
    p: LookupLine,
    line: string,
    contents: NameContents,
    rc: RemoteClient,
    name: string,
    pairs: boolean,
    snapshot: Snapshot,
    now: number,
  ): string {
    const reply = lookupReply(p.qnameJson, contents, rc, zoneIdsOf(snapshot.zones).idOf(contents.zone), p.qtype === 'ANY');
    if (!rc.packetless) {
      const answers = this.deps.answers;
      for (const rrset of contents.rrsets) {
        answers.countDcs(rrset.dcs);
        if (rrset.record !== undefined) answers.countRecord(rrset.record);
      }
    }
    if (pairs && name !== contents.zone.name && !name.startsWith('*.')) this.pairing.put(line, p.qname, p.realRemote, p.remote, reply, snapshot, now);
    return reply;
  }

  /** The client of a lookup; the two or three lookups of one query repeat the same strings. */
  private clientOf(realRemote: string, remote: string): RemoteClient {
    if (realRemote !== this.lastRealRemote || remote !== this.lastRemote || !this.lastClient) {
      try {
        this.lastClient = remoteClient(realRemote, remote);
      } catch (e) {
        this.deps.warnings.warn(
          'real-remote',
          { instance: this.instance, reason: (e as Error).message },
          'lookup with an invalid or missing "real-remote": answering for the resolver address (or the default policy)',
        );
        this.lastClient = fallbackClient(remote);
      }
      this.lastRealRemote = realRemote;
      this.lastRemote = remote;
    }
    return this.lastClient;
  }

  private reject(reason: ProtocolErrorReason, message: string): Reply {
    this.deps.metrics.protocolErrors.inc({ reason });
    this.deps.warnings.warn(reason, { instance: this.instance, reason: message }, 'bad remote backend request; closing the connection');
    return { text: errorReply(message), close: true, protocolError: reason };
  }

  private count(method: string, outcome: RequestOutcome): void {
    this.deps.metrics.countRequest(method, outcome);
  }
}

/**
 * A lookup's parameters from its parsed `parameters` object (any key order, escapes; what
 * {@link parseLookupLine} does not read). `zone-id` is −1 when absent or not a number.
 * @throws InvalidRequest when `qname`, `qtype` or `remote` is not a string.
 */
function lookupParams(p: Record<string, unknown>): LookupLine {
  const { qname, qtype, remote } = p;
  // A missing or non-string real-remote is answered for the resolver (`clientOf`).
  const realRemote = typeof p['real-remote'] === 'string' ? p['real-remote'] : '';
  if (typeof qname !== 'string' || typeof qtype !== 'string' || typeof remote !== 'string') {
    throw new InvalidRequest('lookup needs string "qname", "qtype" and "remote"');
  }
  const zoneId = typeof p['zone-id'] === 'number' ? p['zone-id'] : -1;
  return { qname, qnameJson: JSON.stringify(qname), qtype, remote, realRemote, zoneId };
}

/** A reply line without `result`: PowerDNS raises "No 'result' field", answers SERVFAIL and reconnects (docs/notes/powerdns-remote-backend.md §6). */
export function errorReply(message: string): string {
  return `${JSON.stringify({ error: message })}\n`;
}

/** The domain-info object PowerDNS reads (`parseDomainInfo`, docs/notes/powerdns-remote-backend.md §3.1): a native zone with its serial. */
function domainInfo(zone: ZoneData, id: number): object {
  const serial = zone.soa.data.serial;
  return { id, zone: zone.name === '' ? '.' : `${zone.name}.`, kind: 'native', serial, notified_serial: serial, last_check: 0, masters: [] };
}

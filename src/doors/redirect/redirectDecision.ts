import { TYPE_CODES } from '../../core/dns/records.js';
import type { IpAddress } from '../../core/net/ipAddress.js';
import type { Answer, Query } from '../../core/model/query.js';
import { clientFor } from '../../core/wire/ecsOption.js';
import type { Snapshot } from '../../pipeline/snapshot.js';
import type { RedirectHostConfig } from './listenerSchema.js';
import { redirectUrl } from './requestTarget.js';

/** What a redirect answers: a redirect to a site, or 503 when no site can be named. */
export interface RedirectDecision {
  /** The configured redirect status, or 503. */
  readonly status: number;
  /** The `Location` (present with a redirect status). */
  readonly location: string | undefined;
  /** `Cache-Control: max-age` of a redirect (s): the record's answer TTL; the `Retry-After` of a 503. */
  readonly maxAge: number;
  /** The data center redirected to; '' for a 503. */
  readonly dc: string;
  /** Why a 503 (for the log and the explain route); '' for a redirect. */
  readonly reason: string;
}

/** Seconds a client is asked to wait after a 503 when the answer carries no TTL. */
const RETRY_AFTER_S = 5;

const A = TYPE_CODES.A;
const AAAA = TYPE_CODES.AAAA;

/** Record types per GSLB record name, per snapshot's record list (a reload compiles a new one). */
const typesByRecords = new WeakMap<readonly { readonly name: string; readonly type: string }[], Map<string, Set<string>>>();

/**
 * The record type a redirect asks for: A for an IPv4 client, AAAA for IPv6, or the other one when
 * the host's record has only that type (the data center is chosen from the client's address
 * whatever the record's type; the endpoints of the type answered are the candidates).
 */
export function recordTypeFor(snapshot: Pick<Snapshot, 'records'>, record: string, family: 4 | 6): number {
  let types = typesByRecords.get(snapshot.records);
  if (types === undefined) {
    types = new Map();
    for (const r of snapshot.records) {
      let set = types.get(r.name);
      if (set === undefined) types.set(r.name, (set = new Set()));
      set.add(r.type);
    }
    typesByRecords.set(snapshot.records, types);
  }
  const has = types.get(record);
  if (family === 4) return has === undefined || has.has('A') || !has.has('AAAA') ? A : AAAA;
  return has === undefined || has.has('AAAA') || !has.has('A') ? AAAA : A;
}

/**
 * The engine question for a redirect host and client: the host's record, of the type for the
 * client's family, for the client's own address (full prefix, not ECS: docs/PRODUCT.md §6, the
 * real client address of the TCP connection).
 */
export function redirectQuery(snapshot: Pick<Snapshot, 'records'>, host: RedirectHostConfig, client: IpAddress): Query {
  return { name: host.record, type: recordTypeFor(snapshot, host.record, client.family), client: clientFor(undefined, client), transport: 'tcp' };
}

/**
 * The redirect for the engine's `answer` to {@link redirectQuery}: the first data center of the
 * answer (best first) that has a URL, with the request's `path` (query included) appended to its
 * base URL; `Cache-Control: max-age` the smallest TTL of the answer's records, so a browser keeps
 * the redirect no longer than a resolver keeps the DNS answer. 503 when the answer names no data
 * center (the record's fail-safe list or NODATA answered: no site to send the client to) or none
 * with a URL.
 */
export function decideRedirect(host: RedirectHostConfig, answer: Answer, path: string, status: number): RedirectDecision {
  let ttl = -1;
  for (const r of answer.answers) if (ttl < 0 || r.ttl < ttl) ttl = r.ttl;
  const retry = ttl > 0 ? ttl : RETRY_AFTER_S;
  if (answer.dcs.length === 0) return { status: 503, location: undefined, maxAge: retry, dc: '', reason: 'the record answered no data center' };
  for (const dc of answer.dcs) {
    const base = host.urls[dc];
    if (base === undefined) continue;
    const location = redirectUrl(base, path);
    if (location === undefined) return { status: 400, location: undefined, maxAge: 0, dc: '', reason: 'the path does not make a URL of the site' };
    return { status, location, maxAge: Math.max(ttl, 0), dc, reason: '' };
  }
  return { status: 503, location: undefined, maxAge: retry, dc: '', reason: `no URL for data center ${answer.dcs.join(', ')}` };
}

/** The record types a redirect may ask for, by code, for messages. */
export function typeName(code: number): 'A' | 'AAAA' {
  return code === AAAA ? 'AAAA' : 'A';
}

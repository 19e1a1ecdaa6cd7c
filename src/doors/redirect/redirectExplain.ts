import type { AdminReply, AdminRoute } from '../../core/contracts/adminRoute.js';
import { canonicalName } from '../../core/dns/name.js';
import { presentData } from '../../core/dns/presentation.js';
import { formatQualifiers } from '../../core/location/location.js';
import { unpackId, unpackPrefix } from '../../core/lpm/rangeTable.js';
import { formatIp, parseIp, type IpAddress } from '../../core/net/ipAddress.js';
import { resolve, type ExplainedSelection } from '../../pipeline/zones/authoritative.js';
import type { DoorEngine } from '../doorHost.js';
import type { RedirectHostConfig } from './listenerSchema.js';
import { decideRedirect, redirectQuery, typeName, type RedirectDecision } from './redirectDecision.js';

/** What `GET /explain/redirect` returns. */
export interface RedirectExplanation {
  readonly host: string;
  readonly path: string;
  readonly client: { readonly address: string; readonly location: string; readonly locationPrefix: number };
  readonly record: string;
  readonly type: 'A' | 'AAAA';
  readonly redirect: RedirectDecision;
  readonly answer: { readonly rcode: number; readonly scope: number; readonly dcs: readonly string[]; readonly answers: readonly string[] };
  /** The decision trace of the record's selection, as `/explain` shows it for DNS. */
  readonly selections: readonly ExplainedSelection[];
}

/**
 * The admin route `GET /explain/redirect?host=&client=[&path=]`: where the redirect door would
 * send `client` (one address: the door decides from a connection's address, never a prefix)
 * asking for `host` (`path`, default `/`, with its query): the record and type it asks, the
 * client's location, the engine's answer and decision trace (as `/explain` gives for DNS), and the
 * reply — status, `Location`, max-age, data center. Runs on the current snapshot without
 * advancing rotation. 400 for a missing or invalid parameter, 404 for a host the door does not
 * redirect.
 */
export function redirectExplainRoute(hosts: ReadonlyMap<string, RedirectHostConfig>, engine: DoorEngine, status: number): AdminRoute {
  return {
    method: 'GET',
    path: '/explain/redirect',
    mutating: false,
    handle({ url }): AdminReply {
      const hostParam = url.searchParams.get('host');
      const clientParam = url.searchParams.get('client');
      const path = url.searchParams.get('path') ?? '/';
      if (!hostParam || !clientParam) return { status: 400, json: { error: 'host and client are required (path defaults to /)' } };
      if (!path.startsWith('/')) return { status: 400, json: { error: 'path starts with "/"' } };
      let address: IpAddress;
      try {
        address = parseIp(clientParam);
      } catch (e) {
        return { status: 400, json: { error: `client: ${(e as Error).message}` } };
      }
      const host = hosts.get(canonicalName(hostParam));
      if (!host) return { status: 404, json: { error: `"${hostParam}" is not a redirect host` } };
      return { status: 200, json: explainRedirect(host, engine, status, address, path) };
    },
  };
}

function explainRedirect(host: RedirectHostConfig, engine: DoorEngine, status: number, address: IpAddress, path: string): RedirectExplanation {
  const snap = engine.snapshot;
  const query = redirectQuery(snap, host, address);
  const selections: ExplainedSelection[] = [];
  const answer = resolve(query, snap, { ...engine.ctx, rotation: engine.ctx.rotation.clone() }, selections);
  const packed = snap.env.geo.lookup(address);
  return {
    host: host.host,
    path,
    client: {
      address: formatIp(address),
      location: unpackId(packed) === 0 ? 'unknown' : formatQualifiers(snap.env.geo.location(unpackId(packed)).qualifiers),
      locationPrefix: unpackPrefix(packed),
    },
    record: host.record,
    type: typeName(query.type),
    redirect: decideRedirect(host, answer, path, status),
    answer: {
      rcode: answer.rcode,
      scope: answer.scope,
      dcs: answer.dcs,
      answers: answer.answers.map((r) => `${r.name}. ${r.ttl} IN ${r.type} ${presentData(r.type, r.data)}`),
    },
    selections,
  };
}

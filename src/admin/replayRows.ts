import { configuredName } from '../core/dns/name.js';
import { TYPE_CODES, type RecordType } from '../core/dns/records.js';
import type { Query } from '../core/model/query.js';
import { familyBits, parseCidr } from '../core/net/ipAddress.js';
import type { ResolveContext } from '../core/views/resolveContext.js';
import type { Snapshot } from '../pipeline/snapshot.js';
import { resolve } from '../pipeline/zones/authoritative.js';
import type { ReplayRow } from './whatIfRoutes.js';

/**
 * Replays queries on two snapshots — `base` (the running configuration) and `whatIf` (the
 * hypothesis) — and gives per query the response code and data centers of each, or why the query
 * could not be asked. Each side resolves with its own copy of `ctx`'s rotation counters, so
 * round-robin and smooth weights advance neither `ctx` nor the other side. The one path of
 * `POST /what-if/replay` (over the live state) and `gslbd simulate --against FILE` (offline).
 */
export function replayRows(
  base: Snapshot,
  whatIf: Snapshot,
  ctx: ResolveContext,
  queries: readonly { readonly name: string; readonly type: string; readonly client: string }[],
): ReplayRow[] {
  const liveCtx = { ...ctx, rotation: ctx.rotation.clone() };
  const whatIfCtx = { ...ctx, rotation: ctx.rotation.clone() };
  return queries.map((q) => {
    let query: Query;
    try {
      query = replayQuery(q.name, q.type, q.client);
    } catch (e) {
      return { error: (e as Error).message };
    }
    const a = resolve(query, base, liveCtx);
    const b = resolve(query, whatIf, whatIfCtx);
    return { live: { rcode: a.rcode, dcs: [...a.dcs] }, whatIf: { rcode: b.rcode, dcs: [...b.dcs] } };
  });
}

/** A replayed query as the DNS front door would ask it: `client` an address or an ECS source prefix. */
function replayQuery(name: string, type: string, client: string): Query {
  const code = /^\d+$/.test(type) ? Number(type) : TYPE_CODES[type.toUpperCase() as RecordType];
  if (code === undefined) throw new Error(`unknown record type "${type}"`);
  const prefix = parseCidr(client);
  const fromEcs = prefix.prefix < familyBits(prefix.address.family);
  return {
    name: configuredName(name),
    type: code,
    client: { address: prefix.address, sourcePrefix: prefix.prefix, fromEcs },
    transport: 'udp',
    dnssecOk: false,
  };
}

import { configuredName } from '../core/dns/name.js';
import { TYPE_CODES, type RecordType } from '../core/dns/records.js';
import type { Answer, Query } from '../core/model/query.js';
import { familyBits, parseCidr, type IpAddress } from '../core/net/ipAddress.js';
import type { ResolveContext } from '../core/views/resolveContext.js';
import type { Snapshot } from '../pipeline/snapshot.js';
import { resolve } from '../pipeline/zones/authoritative.js';
import type { ReplayOutcome, ReplayRow } from './whatIfRoutes.js';

/**
 * Replays queries on two snapshots — `base` (the running configuration) and `whatIf` (the
 * hypothesis) — and gives per query the response code and data centers of each (and the record
 * whose all-down fallback answered, if any), or why the query could not be asked. Each side
 * resolves with its own copy of `ctx`'s rotation counters, so round-robin and smooth weights
 * advance neither `ctx` nor the other side. The one path of `POST /what-if/replay` (over the live
 * state) and `gslbd simulate` (offline).
 *
 * Queries are asked in (name, type, family, address) order, and a query is not asked again when the
 * previous one of its side had the same name, type and source prefix and its answer's
 * `reuseScope` (`src/core/model/query.ts`: the client block for which the whole answer is the
 * same until the snapshot or state changes — the decision cache's answer class and subnet
 * membership) holds this client: its outcome is reused. Answers computed for one query alone
 * (`reuseScope` −1: rotation, random, client metrics) are asked for every query, as before.
 * `test/e2e/replayReuse.test.ts` checks the outcomes equal asking every query alone.
 */
export function replayRows(
  base: Snapshot,
  whatIf: Snapshot,
  ctx: ResolveContext,
  queries: readonly { readonly name: string; readonly type: string; readonly client: string }[],
): ReplayRow[] {
  const asked: (Query | string)[] = queries.map((q) => {
    try {
      return replayQuery(q.name, q.type, q.client);
    } catch (e) {
      return (e as Error).message;
    }
  });
  const order = asked.map((_, i) => i).sort((i, j) => compareQueries(asked[i]!, asked[j]!));
  const live = new ReusingSide(base, { ...ctx, rotation: ctx.rotation.clone() });
  const hypothetical = new ReusingSide(whatIf, { ...ctx, rotation: ctx.rotation.clone() });
  const rows: ReplayRow[] = new Array<ReplayRow>(queries.length);
  for (const i of order) {
    const q = asked[i]!;
    rows[i] = typeof q === 'string' ? { error: q } : { live: live.outcome(q), whatIf: hypothetical.outcome(q) };
  }
  return rows;
}

/** One side of a replay: a snapshot, its rotation counters, and the last answer that may be reused. */
class ReusingSide {
  private last: { query: Query; scope: number; outcome: ReplayOutcome } | undefined;

  constructor(
    private readonly snapshot: Snapshot,
    private readonly ctx: ResolveContext,
  ) {}

  outcome(q: Query): ReplayOutcome {
    const l = this.last;
    if (
      l !== undefined &&
      l.scope >= 0 &&
      l.query.type === q.type &&
      l.query.name === q.name &&
      l.query.client.sourcePrefix === q.client.sourcePrefix &&
      sameBlock(l.query.client.address, q.client.address, l.scope)
    )
      return l.outcome;
    const a = resolve(q, this.snapshot, this.ctx);
    const outcome = outcomeOf(a);
    // Absent reuseScope: the answer does not depend on the client (scope 0, every client).
    this.last = { query: q, scope: a.reuseScope ?? 0, outcome };
    return outcome;
  }
}

function outcomeOf(a: Answer): ReplayOutcome {
  // The fallback answered: a GSLB selection ran and no data center was picked (the all-down policy's data or NODATA).
  if (a.selected !== undefined && a.dcs.length === 0 && a.rcode === 0) return { rcode: a.rcode, dcs: [], failsafe: `${a.selected.name}/${a.selected.type}` };
  return { rcode: a.rcode, dcs: [...a.dcs] };
}

/** True when `a` and `b` are in the same /`bits` block (same family). */
function sameBlock(a: IpAddress, b: IpAddress, bits: number): boolean {
  if (a.family !== b.family) return false;
  const words = [a.w0 ^ b.w0, a.w1 ^ b.w1, a.w2 ^ b.w2, a.w3 ^ b.w3];
  for (let w = 0; w < 4 && bits > 0; w++, bits -= 32) {
    const mask = bits >= 32 ? 0xffffffff : ~(0xffffffff >>> bits);
    if ((words[w]! & mask) !== 0) return false;
  }
  return true;
}

/** Errors first, then by name, type, family, address words and source prefix: neighbours in a block follow each other. */
function compareQueries(a: Query | string, b: Query | string): number {
  if (typeof a === 'string' || typeof b === 'string') return (typeof a === 'string' ? 0 : 1) - (typeof b === 'string' ? 0 : 1);
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  if (a.type !== b.type) return a.type - b.type;
  const x = a.client.address;
  const y = b.client.address;
  return x.family - y.family || x.w0 - y.w0 || x.w1 - y.w1 || x.w2 - y.w2 || x.w3 - y.w3 || a.client.sourcePrefix - b.client.sourcePrefix;
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

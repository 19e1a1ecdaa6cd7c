import { configuredName } from '../core/dns/name.js';
import { TYPE_CODES, type RecordType } from '../core/dns/records.js';
import type { Answer, Query } from '../core/model/query.js';
import { familyBits, ipv4, parseCidr, type IpAddress, type IpPrefix } from '../core/net/ipAddress.js';
import type { ResolveContext } from '../core/views/resolveContext.js';
import type { Snapshot } from '../pipeline/snapshot.js';
import { resolve } from '../pipeline/zones/authoritative.js';
import { runSteps, type Steps } from '../pipeline/selection/steps.js';
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
  return runSteps(replayRowsSteps(base, whatIf, ctx, queries));
}

/** Queries read or replayed between two yields of {@link replayRowsSteps}: well under a millisecond of resolves. */
export const REPLAY_STEP = 32;

/**
 * {@link replayRows} as steps of {@link REPLAY_STEP} queries (`src/pipeline/selection/steps.ts`),
 * for `POST /what-if/replay` under `runInSlices`: a request of 5,000 queries, 10,000 resolves,
 * held the event loop 230-350 ms in one go (issue 17).
 */
export function* replayRowsSteps(
  base: Snapshot,
  whatIf: Snapshot,
  ctx: ResolveContext,
  queries: readonly { readonly name: string; readonly type: string; readonly client: string }[],
): Steps<ReplayRow[]> {
  const names = new Map<string, string>();
  const types = new Map<string, number>();
  const asked: (Query | string)[] = [];
  for (const q of queries) {
    try {
      asked.push(replayQuery(q.name, q.type, q.client, names, types));
    } catch (e) {
      asked.push((e as Error).message);
    }
    if (asked.length % REPLAY_STEP === 0) yield;
  }
  const order = asked.map((_, i) => i).sort((i, j) => compareQueries(asked[i]!, asked[j]!));
  yield;
  const live = new ReusingSide(base, { ...ctx, rotation: ctx.rotation.clone() });
  const hypothetical = new ReusingSide(whatIf, { ...ctx, rotation: ctx.rotation.clone() });
  const rows: ReplayRow[] = new Array<ReplayRow>(queries.length);
  let n = 0;
  for (const i of order) {
    const q = asked[i]!;
    rows[i] = typeof q === 'string' ? { error: q } : { live: live.outcome(q), whatIf: hypothetical.outcome(q) };
    if (++n % REPLAY_STEP === 0) yield;
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
  return (
    sameBits(a.w0, b.w0, bits) &&
    (bits <= 32 || sameBits(a.w1, b.w1, bits - 32)) &&
    (bits <= 64 || sameBits(a.w2, b.w2, bits - 64)) &&
    (bits <= 96 || sameBits(a.w3, b.w3, bits - 96))
  );
}

/** The first `bits` bits (all when ≥ 32, none when ≤ 0) of two 32-bit words are equal. */
function sameBits(x: number, y: number, bits: number): boolean {
  if (bits <= 0) return true;
  const mask = bits >= 32 ? 0xffffffff : ~(0xffffffff >>> bits);
  return ((x ^ y) & mask) === 0;
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

/**
 * A replayed query as the DNS front door would ask it: `client` an address or an ECS source prefix.
 * `names` and `types` keep the canonical name and type code per text: a log holds few of each.
 */
function replayQuery(name: string, type: string, client: string, names: Map<string, string>, types: Map<string, number>): Query {
  let code = types.get(type);
  if (code === undefined) {
    code = /^\d+$/.test(type) ? Number(type) : TYPE_CODES[type.toUpperCase() as RecordType];
    if (code === undefined) throw new Error(`unknown record type "${type}"`);
    types.set(type, code);
  }
  let qname = names.get(name);
  if (qname === undefined) {
    qname = configuredName(name);
    names.set(name, qname);
  }
  const prefix = dottedPrefix(client) ?? parseCidr(client);
  const fromEcs = prefix.prefix < familyBits(prefix.address.family);
  return {
    name: qname,
    type: code,
    client: { address: prefix.address, sourcePrefix: prefix.prefix, fromEcs },
    transport: 'udp',
    dnssecOk: false,
  };
}

const DOTTED = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/;

/**
 * `a.b.c.d/len` as `parseCidr` reads it, for the common case of the query log (its IPv4 networks
 * are dotted quads over /24): one regular expression instead of the address library's parser,
 * which dominated a replay's profile. Undefined for anything else — a leading zero, an octet or
 * length out of range, host bits set, IPv6 — which `parseCidr` then reads (or refuses).
 */
function dottedPrefix(text: string): IpPrefix | undefined {
  const m = DOTTED.exec(text);
  if (!m) return undefined;
  let value = 0;
  for (let i = 1; i <= 4; i++) {
    const octet = m[i]!;
    if ((octet.length > 1 && octet[0] === '0') || Number(octet) > 255) return undefined;
    value = value * 256 + Number(octet);
  }
  const len = m[5] === undefined ? 32 : Number(m[5]);
  if (len > 32 || (m[5] !== undefined && m[5].length > 1 && m[5][0] === '0')) return undefined;
  if (len < 32 && value % 2 ** (32 - len) !== 0) return undefined;
  return { address: ipv4(value), prefix: len };
}

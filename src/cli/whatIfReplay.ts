import { readFileSync } from 'node:fs';
import type { ReplayRow } from '../admin/whatIfRoutes.js';
import type { QueryFileOptions } from './queryLog/queryFormats.js';

/** One distinct query of a query log and how many times the log holds it. */
export interface LoggedQuery {
  readonly name: string;
  readonly type: string;
  /** The client network as logged (`a.b.c.0/24`, `x:y:z::/48`): asked as an ECS source prefix. */
  readonly client: string;
  readonly count: number;
}

/**
 * The distinct queries of a file for a replay: one of the formats of `queryLog/queryFormats.ts`
 * (packet captures, dnstap, dnsperf files; recognised by their first bytes) or else the engine's
 * query log (`queryLogScan.ts`). The readers are loaded here, when a file is read, so `gslbd ctl`
 * and its help load none of them (test/e2e/cliLazyLoad.test.ts).
 * @throws Error when the file cannot be read, or a QueryFileError naming the file and the offset of a damaged record.
 */
export async function readQueryFile(file: string, options: QueryFileOptions = {}): Promise<{ queries: LoggedQuery[]; skipped: number }> {
  const bytes = readFileSync(file);
  const formatted = (await import('./queryLog/queryFormats.js')).readQueryFormats(file, bytes, options);
  return formatted ? await formatted : (await import('./queryLogScan.js')).readQueryLog(bytes);
}

/** A move of answers from one set of data centers to another. */
export interface Move {
  /** The data centers answered live (`-` for none: NODATA, fail-safe list, an error). */
  readonly from: string;
  /** The data centers answered under the hypothesis. */
  readonly to: string;
  readonly queries: number;
  /** Distinct client networks that move this way. */
  readonly networks: number;
}

/** What a replay found: per-DC shares live and under the hypothesis, and the queries that move. */
export interface ReplaySummary {
  /** Queries replayed (the log's lines), and distinct (name, type, client network) among them. */
  readonly queries: number;
  readonly distinct: number;
  /** Queries the engine could not ask (bad name or type), by distinct query. */
  readonly errors: number;
  /** Per data center, its share of answers in percent (a query answered by two DCs counts half to each); `-` for answers without one. */
  readonly shareBefore: Readonly<Record<string, number>>;
  readonly shareAfter: Readonly<Record<string, number>>;
  /** Queries and distinct client networks whose answer changes data center. */
  readonly movedQueries: number;
  readonly movedNetworks: number;
  /** Moves by (from, to), most queries first. */
  readonly moves: readonly Move[];
  /** The client networks that move with most queries (at most 20): network, name, from, to, queries. */
  readonly topNetworks: readonly { client: string; name: string; type: string; from: string; to: string; queries: number }[];
  /** GSLB records whose all-down fallback answers some replayed query, live or under the hypothesis, by `name/type`. */
  readonly failsafe: readonly FailsafeUse[];
  /** Data centers whose share, live or under the hypothesis, exceeds the capacity given for them ({@link summariseReplay}'s `capacity`). */
  readonly overCapacity: readonly OverCapacity[];
}

/** A record answered by its all-down fallback (fail-safe list, fail-open, NODATA) for replayed queries: queries and distinct client networks, live and under the hypothesis. */
export interface FailsafeUse {
  readonly record: string;
  readonly before: { readonly queries: number; readonly networks: number };
  readonly after: { readonly queries: number; readonly networks: number };
}

/** A data center over its capacity: the capacity and its shares, in percent of answered queries. */
export interface OverCapacity {
  readonly dc: string;
  readonly capacity: number;
  readonly before: number;
  readonly after: number;
}

const dcsText = (dcs: readonly string[]): string => (dcs.length === 0 ? '-' : dcs.join('+'));

/**
 * Sums a replay: `rows[i]` is the engine's outcome for `queries[i]` (`POST /what-if/replay`),
 * weighted by the query's count in the log. Shares are in percent of answered queries, rounded to
 * 0.01. `capacity` gives, per data center, the most of the answers (percent) it may take; a data
 * center whose share before or after exceeds it is listed in `overCapacity`.
 */
export function summariseReplay(queries: readonly LoggedQuery[], rows: readonly ReplayRow[], capacity: Readonly<Record<string, number>> = {}): ReplaySummary {
  const failsafe = new Map<string, { before: number; after: number; networksBefore: Set<string>; networksAfter: Set<string> }>();
  const fellBack = (record: string | undefined, q: LoggedQuery, after: boolean): void => {
    if (record === undefined) return;
    const f = failsafe.get(record) ?? { before: 0, after: 0, networksBefore: new Set<string>(), networksAfter: new Set<string>() };
    failsafe.set(record, f);
    if (after) {
      f.after += q.count;
      f.networksAfter.add(q.client);
    } else {
      f.before += q.count;
      f.networksBefore.add(q.client);
    }
  };
  const before = new Map<string, number>();
  const after = new Map<string, number>();
  const moves = new Map<string, { from: string; to: string; queries: number; networks: Set<string> }>();
  const movedNetworks = new Set<string>();
  const top: ReplaySummary['topNetworks'][number][] = [];
  let total = 0;
  let errors = 0;
  let moved = 0;
  const add = (shares: Map<string, number>, dcs: readonly string[], n: number): void => {
    if (dcs.length === 0) shares.set('-', (shares.get('-') ?? 0) + n);
    for (const dc of dcs) shares.set(dc, (shares.get(dc) ?? 0) + n / dcs.length);
  };
  queries.forEach((q, i) => {
    const row = rows[i]!;
    total += q.count;
    if ('error' in row) {
      errors++;
      return;
    }
    add(before, row.live.dcs, q.count);
    add(after, row.whatIf.dcs, q.count);
    fellBack(row.live.failsafe, q, false);
    fellBack(row.whatIf.failsafe, q, true);
    const from = dcsText(row.live.dcs);
    const to = dcsText(row.whatIf.dcs);
    if (from === to) return;
    moved += q.count;
    movedNetworks.add(q.client);
    const key = `${from}>${to}`;
    const m = moves.get(key) ?? { from, to, queries: 0, networks: new Set<string>() };
    m.queries += q.count;
    m.networks.add(q.client);
    moves.set(key, m);
    top.push({ client: q.client, name: q.name, type: q.type, from, to, queries: q.count });
  });
  const answered = total - queries.reduce((n, q, i) => n + ('error' in rows[i]! ? q.count : 0), 0);
  const share = (m: Map<string, number>): Record<string, number> =>
    Object.fromEntries([...m].sort(([a], [b]) => a.localeCompare(b)).map(([dc, n]) => [dc, answered === 0 ? 0 : Math.round((n / answered) * 10000) / 100]));
  const shareBefore = share(before);
  const shareAfter = share(after);
  return {
    queries: total,
    distinct: queries.length,
    errors,
    shareBefore,
    shareAfter,
    movedQueries: moved,
    movedNetworks: movedNetworks.size,
    moves: [...moves.values()].sort((a, b) => b.queries - a.queries).map((m) => ({ from: m.from, to: m.to, queries: m.queries, networks: m.networks.size })),
    topNetworks: top.sort((a, b) => b.queries - a.queries).slice(0, 20),
    failsafe: [...failsafe]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([record, f]) => ({
        record,
        before: { queries: f.before, networks: f.networksBefore.size },
        after: { queries: f.after, networks: f.networksAfter.size },
      })),
    overCapacity: Object.entries(capacity)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([dc, cap]) => ({ dc, capacity: cap, before: shareBefore[dc] ?? 0, after: shareAfter[dc] ?? 0 }))
      .filter((c) => c.before > c.capacity || c.after > c.capacity),
  };
}

/**
 * Capacities from `dc=share%` texts (`--capacity eu-west=40%`; the `%` may be left out): the most
 * of the answers, in percent (0–100], a data center may take.
 * @throws Error for a malformed text, a share outside (0, 100], or a data center given twice.
 */
export function parseCapacities(texts: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of texts) {
    const m = /^([^=\s]+)=(\d+(?:\.\d+)?)%?$/.exec(t);
    if (!m) throw new Error(`--capacity ${t}: expected DC=SHARE% (e.g. eu-west=40%)`);
    const share = Number(m[2]);
    if (share <= 0 || share > 100) throw new Error(`--capacity ${t}: the share must be above 0 and at most 100 %`);
    if (m[1]! in out) throw new Error(`--capacity ${t}: data center "${m[1]}" given twice`);
    out[m[1]!] = share;
  }
  return out;
}

/** The summary as a table for a terminal. */
export function formatReplaySummary(s: ReplaySummary): string {
  const lines: string[] = [];
  lines.push(`${s.queries} queries (${s.distinct} distinct name, type and client network)${s.errors > 0 ? `, ${s.errors} could not be asked` : ''}`);
  lines.push(`${s.movedQueries} queries from ${s.movedNetworks} client networks change data center`);
  lines.push('', 'data center     before %   after %');
  for (const dc of [...new Set([...Object.keys(s.shareBefore), ...Object.keys(s.shareAfter)])].sort()) {
    lines.push(`${dc.padEnd(14)} ${String(s.shareBefore[dc] ?? 0).padStart(9)} ${String(s.shareAfter[dc] ?? 0).padStart(9)}`);
  }
  if (s.moves.length > 0) {
    lines.push('', 'from -> to                      queries  networks');
    for (const m of s.moves) lines.push(`${`${m.from} -> ${m.to}`.padEnd(30)} ${String(m.queries).padStart(8)} ${String(m.networks).padStart(9)}`);
    lines.push('', 'client networks moving most');
    for (const n of s.topNetworks) lines.push(`  ${n.client.padEnd(24)} ${n.name} ${n.type}: ${n.from} -> ${n.to} (${n.queries})`);
  }
  if (s.failsafe.length > 0) {
    lines.push('', 'records answered by fail-safe   queries before  after   networks before  after');
    for (const f of s.failsafe)
      lines.push(
        `${f.record.padEnd(30)} ${String(f.before.queries).padStart(15)} ${String(f.after.queries).padStart(6)} ${String(f.before.networks).padStart(17)} ${String(f.after.networks).padStart(6)}`,
      );
  }
  if (s.overCapacity.length > 0) {
    lines.push('', 'over capacity   capacity %  before %   after %');
    for (const c of s.overCapacity)
      lines.push(`${c.dc.padEnd(14)} ${String(c.capacity).padStart(11)} ${String(c.before).padStart(9)} ${String(c.after).padStart(9)}`);
  }
  return `${lines.join('\n')}\n`;
}

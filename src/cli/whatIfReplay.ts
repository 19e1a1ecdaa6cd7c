import { readFileSync } from 'node:fs';
import type { ReplayRow } from '../admin/whatIfRoutes.js';
import { readQueryFormats, type QueryFileOptions } from './queryLog/queryFormats.js';

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
 * query log ({@link readQueryLog}).
 * @throws Error when the file cannot be read, or a QueryFileError naming the file and the offset of a damaged record.
 */
export async function readQueryFile(file: string, options: QueryFileOptions = {}): Promise<{ queries: LoggedQuery[]; skipped: number }> {
  const bytes = readFileSync(file);
  const formatted = readQueryFormats(file, bytes, options);
  return formatted ? await formatted : readQueryLog(bytes.toString('utf8'));
}

/**
 * The distinct queries of a query log: the JSON lines the DNS front door writes for sampled
 * queries (`component: "query-log"`, with `qname`, `qtype` and `client` truncated to /24 or /48,
 * `src/doors/dns/handleMessage.ts`); other lines (every other log line of the engine) are skipped.
 * @returns the queries in first-seen order, and how many lines were skipped as not query-log JSON.
 */
export function readQueryLog(text: string): { queries: LoggedQuery[]; skipped: number } {
  const byKey = new Map<string, { name: string; type: string; client: string; count: number }>();
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      skipped++;
      continue;
    }
    const e = entry as { component?: unknown; qname?: unknown; qtype?: unknown; client?: unknown };
    if (e.component !== 'query-log' || typeof e.qname !== 'string' || typeof e.qtype !== 'string' || typeof e.client !== 'string') {
      skipped++;
      continue;
    }
    const key = `${e.qname}\u0000${e.qtype}\u0000${e.client}`;
    const seen = byKey.get(key);
    if (seen) seen.count++;
    else byKey.set(key, { name: e.qname, type: e.qtype, client: e.client, count: 1 });
  }
  return { queries: [...byKey.values()], skipped };
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
}

const dcsText = (dcs: readonly string[]): string => (dcs.length === 0 ? '-' : dcs.join('+'));

/**
 * Sums a replay: `rows[i]` is the engine's outcome for `queries[i]` (`POST /what-if/replay`),
 * weighted by the query's count in the log. Shares are in percent of answered queries, rounded to
 * 0.01.
 */
export function summariseReplay(queries: readonly LoggedQuery[], rows: readonly ReplayRow[]): ReplaySummary {
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
  return {
    queries: total,
    distinct: queries.length,
    errors,
    shareBefore: share(before),
    shareAfter: share(after),
    movedQueries: moved,
    movedNetworks: movedNetworks.size,
    moves: [...moves.values()].sort((a, b) => b.queries - a.queries).map((m) => ({ from: m.from, to: m.to, queries: m.queries, networks: m.networks.size })),
    topNetworks: top.sort((a, b) => b.queries - a.queries).slice(0, 20),
  };
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
  return `${lines.join('\n')}\n`;
}

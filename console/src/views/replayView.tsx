import { useState } from 'preact/hooks';
import { post } from '../api.js';
import type { ReplayRow } from '../types.js';
import { useHypothesis } from './hypothesis.js';

/** At most this many queries a request (the engine's replay bound, `src/admin/whatIfLimits.ts`). */
const BATCH = 5000;

interface Diff {
  queries: number;
  errors: number;
  before: Map<string, number>;
  after: Map<string, number>;
  moves: Map<string, number>;
  /** Per record answered by its all-down fallback: queries live and under the hypothesis. */
  failsafe: Map<string, { before: number; after: number }>;
}

/** The data centers of one side as a label (`-` for none: NODATA, fail-safe, error rcode). */
const side = (dcs: readonly string[] | undefined): string => (dcs && dcs.length > 0 ? [...dcs].sort().join('+') : '-');

/** Tallies replayed queries: answers per data center before and after, and the moves (from → to). */
function tally(rows: readonly ReplayRow[]): Diff {
  const d: Diff = { queries: 0, errors: 0, before: new Map(), after: new Map(), moves: new Map(), failsafe: new Map() };
  const fellBack = (record: string | undefined, after: boolean): void => {
    if (record === undefined) return;
    const f = d.failsafe.get(record) ?? { before: 0, after: 0 };
    if (after) f.after++;
    else f.before++;
    d.failsafe.set(record, f);
  };
  for (const r of rows) {
    if (!r.live || !r.whatIf) {
      d.errors++;
      continue;
    }
    d.queries++;
    const from = side(r.live.dcs);
    const to = side(r.whatIf.dcs);
    d.before.set(from, (d.before.get(from) ?? 0) + 1);
    d.after.set(to, (d.after.get(to) ?? 0) + 1);
    fellBack(r.live.failsafe, false);
    fellBack(r.whatIf.failsafe, true);
    if (from !== to) d.moves.set(`${from} → ${to}`, (d.moves.get(`${from} → ${to}`) ?? 0) + 1);
  }
  return d;
}

/** Capacities typed as `dc=share%` separated by spaces or commas (`gslbd simulate --capacity`); malformed parts are left out. */
function capacities(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const part of text.split(/[\s,]+/)) {
    const m = /^([^=]+)=(\d+(?:\.\d+)?)%?$/.exec(part);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

/**
 * Replay: queries (one per line, `name [type] client`) asked live and under a hypothesis
 * (`POST /what-if/replay`, in batches of 5,000): the answer share per data center before and after
 * (a data center above the capacity typed for it marked over capacity), the moves, and the records
 * answered by their fail-safe fallback before and after. `gslbd ctl what-if` and
 * `gslbd simulate` do the same over a query log.
 */
export function ReplayView({ dataCenters }: { dataCenters: readonly string[] }) {
  const [text, setText] = useState('');
  const [capacityText, setCapacityText] = useState('');
  const [diff, setDiff] = useState<Diff | { error: string } | null>(null);
  const { hypothesis, fields } = useHypothesis('r', dataCenters);
  const run = async (ev: Event): Promise<void> => {
    ev.preventDefault();
    const queries = text
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f.length >= 2 && f[0] !== '')
      .map((f) => (f.length >= 3 ? { name: f[0]!, type: f[1]!, client: f[2]! } : { name: f[0]!, client: f[1]! }));
    const rows: ReplayRow[] = [];
    for (let i = 0; i < queries.length; i += BATCH) {
      const r = await post<{ results: ReplayRow[] }>('/what-if/replay', { whatIf: hypothesis, queries: queries.slice(i, i + BATCH) });
      if (!r.ok) {
        setDiff({ error: r.body.error ?? String(r.status) });
        return;
      }
      rows.push(...r.body.results);
    }
    setDiff(tally(rows));
  };
  const share = (n: number, d: Diff): number => Math.round((1000 * n) / Math.max(1, d.queries)) / 10;
  const percent = (n: number, d: Diff): string => `${share(n, d)} %`;
  const capacity = capacities(capacityText);
  const over = (dc: string, n: number, d: Diff): boolean => capacity.has(dc) && share(n, d) > capacity.get(dc)!;
  return (
    <section id="v-replay" aria-labelledby="h-replay">
      <h2 id="h-replay">Replay</h2>
      <form id="replay" onSubmit={(e) => void run(e)}>
        <label for="r-queries">queries, one per line: name [type] client</label>
        <br />
        <textarea id="r-queries" rows={6} cols={60} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
        {fields}
        <label for="r-capacity">capacity per data center (dc=share%, optional)</label>
        <input id="r-capacity" value={capacityText} onInput={(e) => setCapacityText((e.target as HTMLInputElement).value)} />
        <button type="submit">Replay</button>
      </form>
      <div id="replay-result" aria-live="polite">
        {diff && 'error' in diff ? <p class="refused">Error: {diff.error}</p> : null}
        {diff && !('error' in diff) ? (
          <>
            <p>
              {diff.queries} queries replayed{diff.errors > 0 ? `, ${diff.errors} could not be asked` : ''}.
            </p>
            <table id="replay-shares">
              <caption>Answer share per data center, live and under the hypothesis</caption>
              <thead>
                <tr>
                  <th scope="col">data centers</th>
                  <th scope="col">live</th>
                  <th scope="col">what if</th>
                  <th scope="col">capacity</th>
                </tr>
              </thead>
              <tbody>
                {[...new Set([...diff.before.keys(), ...diff.after.keys()])].sort().map((dc) => (
                  <tr key={dc} data-dc={dc}>
                    <th scope="row">{dc}</th>
                    <td class={over(dc, diff.before.get(dc) ?? 0, diff) ? 'refused' : undefined}>{percent(diff.before.get(dc) ?? 0, diff)}</td>
                    <td class={over(dc, diff.after.get(dc) ?? 0, diff) ? 'refused' : undefined}>{percent(diff.after.get(dc) ?? 0, diff)}</td>
                    <td>
                      {capacity.has(dc) ? `${capacity.get(dc)} %` : ''}
                      {over(dc, diff.before.get(dc) ?? 0, diff) || over(dc, diff.after.get(dc) ?? 0, diff) ? ' (over capacity)' : ''}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <table id="replay-moves">
              <caption>Queries that move</caption>
              <thead>
                <tr>
                  <th scope="col">from → to</th>
                  <th scope="col">queries</th>
                </tr>
              </thead>
              <tbody>
                {[...diff.moves].map(([move, n]) => (
                  <tr key={move}>
                    <td>{move}</td>
                    <td>{n}</td>
                  </tr>
                ))}
                {diff.moves.size === 0 ? (
                  <tr>
                    <td colSpan={2}>none</td>
                  </tr>
                ) : null}
              </tbody>
            </table>
            <table id="replay-failsafe">
              <caption>Queries answered by a record's fail-safe fallback</caption>
              <thead>
                <tr>
                  <th scope="col">record</th>
                  <th scope="col">live</th>
                  <th scope="col">what if</th>
                </tr>
              </thead>
              <tbody>
                {[...diff.failsafe].map(([record, f]) => (
                  <tr key={record} data-record={record}>
                    <th scope="row">{record}</th>
                    <td>{f.before}</td>
                    <td>{f.after}</td>
                  </tr>
                ))}
                {diff.failsafe.size === 0 ? (
                  <tr>
                    <td colSpan={3}>none</td>
                  </tr>
                ) : null}
              </tbody>
            </table>
          </>
        ) : null}
      </div>
    </section>
  );
}

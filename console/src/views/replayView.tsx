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
}

/** The data centers of one side as a label (`-` for none: NODATA, fail-safe, error rcode). */
const side = (dcs: readonly string[] | undefined): string => (dcs && dcs.length > 0 ? [...dcs].sort().join('+') : '-');

/** Tallies replayed queries: answers per data center before and after, and the moves (from → to). */
function tally(rows: readonly ReplayRow[]): Diff {
  const d: Diff = { queries: 0, errors: 0, before: new Map(), after: new Map(), moves: new Map() };
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
    if (from !== to) d.moves.set(`${from} → ${to}`, (d.moves.get(`${from} → ${to}`) ?? 0) + 1);
  }
  return d;
}

/**
 * Replay: queries (one per line, `name [type] client`) asked live and under a hypothesis
 * (`POST /what-if/replay`, in batches of 5,000): the answer share per data center before and after,
 * and the moves. `gslbd ctl what-if` and `gslbd simulate` do the same over a query log.
 */
export function ReplayView({ dataCenters }: { dataCenters: readonly string[] }) {
  const [text, setText] = useState('');
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
  const percent = (n: number, d: Diff): string => `${Math.round((1000 * n) / Math.max(1, d.queries)) / 10} %`;
  return (
    <section id="v-replay" aria-labelledby="h-replay">
      <h2 id="h-replay">Replay</h2>
      <form id="replay" onSubmit={(e) => void run(e)}>
        <label for="r-queries">queries, one per line: name [type] client</label>
        <br />
        <textarea id="r-queries" rows={6} cols={60} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
        {fields}
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
                </tr>
              </thead>
              <tbody>
                {[...new Set([...diff.before.keys(), ...diff.after.keys()])].sort().map((dc) => (
                  <tr key={dc} data-dc={dc}>
                    <th scope="row">{dc}</th>
                    <td>{percent(diff.before.get(dc) ?? 0, diff)}</td>
                    <td>{percent(diff.after.get(dc) ?? 0, diff)}</td>
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
          </>
        ) : null}
      </div>
    </section>
  );
}

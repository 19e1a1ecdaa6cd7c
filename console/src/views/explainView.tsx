import { useState } from 'preact/hooks';
import { get, post } from '../api.js';
import type { Explanation } from '../types.js';
import { isEmpty, useHypothesis } from './hypothesis.js';
import { Trace } from './trace.js';

type Result = { live: Explanation; hypothetical?: Explanation; changed?: boolean } | { error: string };

/**
 * Explain a query (`GET /explain`), or, with a hypothesis, the live and the hypothetical traces
 * side by side and whether the answer changes (`POST /explain/what-if`); both rendered as steps.
 */
export function ExplainView({ dataCenters }: { dataCenters: readonly string[] }) {
  const [result, setResult] = useState<Result | null>(null);
  const { hypothesis, fields } = useHypothesis('x', dataCenters);
  const submit = async (ev: Event): Promise<void> => {
    ev.preventDefault();
    const form = new FormData(ev.target as HTMLFormElement);
    const field = (k: string): string => {
      const v = form.get(k);
      return typeof v === 'string' ? v.trim() : '';
    };
    const q = { name: field('name'), type: field('type') || 'A', client: field('client') };
    if (isEmpty(hypothesis)) {
      const r = await get<Explanation>(`/explain?${new URLSearchParams(q)}`);
      setResult(r.ok ? { live: r.body } : { error: r.body.error ?? String(r.status) });
      return;
    }
    const r = await post<{ live: Explanation; hypothetical: Explanation; changed: boolean }>('/explain/what-if', { ...q, whatIf: hypothesis });
    setResult(r.ok ? r.body : { error: r.body.error ?? String(r.status) });
  };
  return (
    <section id="v-explain" aria-labelledby="h-explain">
      <h2 id="h-explain">Explain and what-if</h2>
      <form id="explain" onSubmit={(e) => void submit(e)}>
        <label for="x-name">name</label>
        <input id="x-name" name="name" required />
        <label for="x-type">type</label>
        <input id="x-type" name="type" value="A" size={6} />
        <label for="x-client">client</label>
        <input id="x-client" name="client" required placeholder="192.0.2.1 or 192.0.2.0/24" />
        {fields}
        <button type="submit">Explain</button>
      </form>
      <div id="explanation" aria-live="polite">
        {result && 'error' in result ? <p class="refused">Error: {result.error}</p> : null}
        {result && 'live' in result && result.hypothetical ? (
          <>
            <p id="what-if-changed">{result.changed ? 'The answer changes under the hypothesis.' : 'The answer stays the same under the hypothesis.'}</p>
            <h3>Live</h3>
            <Trace e={result.live} id="trace-live" />
            <h3>What if</h3>
            <Trace e={result.hypothetical} id="trace-what-if" />
          </>
        ) : null}
        {result && 'live' in result && !result.hypothetical ? <Trace e={result.live} id="trace-live" /> : null}
      </div>
    </section>
  );
}

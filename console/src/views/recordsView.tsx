import { useEffect, useState } from 'preact/hooks';
import { get } from '../api.js';
import type { ConsoleRecord, Explanation } from '../types.js';
import { Trace } from './trace.js';

/**
 * Records: policy stages, candidates per data center, fail-safe, and the current answer for a
 * chosen client (`/explain`, rendered as steps); `/console/records` gives the first 200 matching.
 */
export function RecordsView() {
  const [filter, setFilter] = useState('');
  const [records, setRecords] = useState<{ total: number; records: ConsoleRecord[] } | null>(null);
  const [client, setClient] = useState('');
  const [explained, setExplained] = useState<{ record: string; e?: Explanation; error?: string } | null>(null);
  useEffect(() => {
    void get<{ total: number; records: ConsoleRecord[] }>(`/console/records?${new URLSearchParams({ filter })}`).then((r) => setRecords(r.ok ? r.body : null));
  }, [filter]);
  const answer = async (r: ConsoleRecord): Promise<void> => {
    const res = await get<Explanation>(`/explain?${new URLSearchParams({ name: r.name, type: r.type, client })}`);
    setExplained(res.ok ? { record: r.name, e: res.body } : { record: r.name, error: res.body.error ?? String(res.status) });
  };
  return (
    <section id="v-records" aria-labelledby="h-records">
      <h2 id="h-records">Records</h2>
      <p>
        <label for="r-filter">name contains</label>
        <input id="r-filter" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
        <label for="r-client">client</label>
        <input id="r-client" value={client} placeholder="192.0.2.1 or 192.0.2.0/24" onInput={(e) => setClient((e.target as HTMLInputElement).value)} />
      </p>
      <table id="records">
        <caption>GSLB records{records && records.total > records.records.length ? ` (first ${records.records.length} of ${records.total})` : ''}</caption>
        <thead>
          <tr>
            <th scope="col">name</th>
            <th scope="col">type</th>
            <th scope="col">service</th>
            <th scope="col">policy</th>
            <th scope="col">candidates</th>
            <th scope="col">fail-safe</th>
            <th scope="col">answer</th>
          </tr>
        </thead>
        <tbody>
          {(records?.records ?? []).map((r) => (
            <tr key={r.name + r.type} data-record={`${r.name} ${r.type}`}>
              <td>{r.name}</td>
              <td>{r.type}</td>
              <td>{r.service}</td>
              <td>
                <ol class="policy">
                  {r.policy.map((p) => (
                    <li key={p}>{p}</li>
                  ))}
                </ol>
              </td>
              <td>
                <ul class="candidates">
                  {r.candidates.map((c) => (
                    <li key={c.dc}>
                      {c.dc}: {c.endpoints.join(', ')}
                    </li>
                  ))}
                </ul>
              </td>
              <td>{r.failsafe > 0 ? `${r.failsafe} records` : 'none'}</td>
              <td>
                <button type="button" disabled={client === ''} aria-label={`Answer for client: ${r.name} ${r.type}`} onClick={() => void answer(r)}>
                  Answer for client
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div aria-live="polite">
        {explained?.e ? <Trace e={explained.e} id="record-answer" /> : null}
        {explained?.error ? <p class="refused">Error: {explained.error}</p> : null}
      </div>
    </section>
  );
}

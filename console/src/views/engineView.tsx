import { useState } from 'preact/hooks';
import { act, hasToken, setToken } from '../api.js';
import type { ConsoleState } from '../types.js';

/**
 * The engine's condition (fail-safe in use, last reload failed, stale metrics, with since when),
 * the snapshot generation, the reload history, the admin token field and the reload action.
 */
export function EngineView({ state, live }: { state: ConsoleState | null; live: string }) {
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const reload = async (): Promise<void> => {
    const r = await act<{ generation?: number }>('/reload', {});
    setResult(r.ok ? { ok: true, text: `reloaded: generation ${r.body.generation ?? '?'}` } : { ok: false, text: refusal(r.status, r.body.error) });
  };
  return (
    <section id="v-engine" aria-labelledby="h-engine">
      <h2 id="h-engine">Engine</h2>
      <p>
        Condition:{' '}
        <span id="condition" data-status={state?.status ?? ''}>
          {state?.status ?? 'connecting…'}
        </span>
        ; snapshot generation <span id="generation">{state?.generation ?? '?'}</span>; updated <span id="updated">{state?.at ?? 'never'}</span>; live updates:{' '}
        <span id="live">{live}</span>
      </p>
      <ul id="reasons">
        {state?.reasons.map((r) => (
          <li key={r.kind} data-kind={r.kind}>
            {r.kind} since {r.since}: {r.message}
          </li>
        ))}
      </ul>
      <p>
        Fail-safe in use: <span id="failsafe">{state ? (state.reasons.some((r) => r.kind === 'failsafe') ? 'yes' : 'no') : '?'}</span>; stale metrics:{' '}
        <span id="stale">{state ? (state.reasons.some((r) => r.kind === 'stale-metrics') ? 'yes' : 'no') : '?'}</span>
      </p>
      <h3>Admin token</h3>
      <p>
        Actions need the admin token. It stays in this page's memory only (sent in the Authorization header, never stored). <label for="token">token</label>
        <input id="token" type="password" autocomplete="off" onInput={(e) => setToken((e.target as HTMLInputElement).value)} />
      </p>
      <h3>Reloads</h3>
      <p>
        <button id="reload" type="button" onClick={() => void reload()}>
          Reload the configuration
        </button>{' '}
        <span id="reload-result" role="status" class={result ? (result.ok ? 'done' : 'refused') : ''}>
          {result?.text ?? ''}
        </span>
      </p>
      <table id="reloads">
        <caption>Reload history, newest first</caption>
        <thead>
          <tr>
            <th scope="col">time</th>
            <th scope="col">reason</th>
            <th scope="col">result</th>
          </tr>
        </thead>
        <tbody>
          {(state?.reloads ?? []).map((r) => (
            <tr key={r.at + r.reason}>
              <td>{r.at}</td>
              <td>{r.reason}</td>
              <td class={r.error ? 'down' : 'up'}>{r.error ? `failed: ${r.error}` : `generation ${r.generation}`}</td>
            </tr>
          ))}
          {state && state.reloads.length === 0 ? (
            <tr>
              <td colSpan={3}>none since start</td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </section>
  );
}

/** What the page says when the engine refused an action. */
export function refusal(status: number, error: string | undefined): string {
  if (status === 401) return hasToken() ? `refused: wrong admin token (${error ?? '401'})` : 'refused: the admin token is missing (type it above)';
  if (status === 403) return `refused: ${error ?? 'forbidden'}`;
  return `failed (${status}): ${error ?? ''}`;
}

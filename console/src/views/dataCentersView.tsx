import { useState } from 'preact/hooks';
import { act } from '../api.js';
import type { ConsoleState, HealthCheck, HealthReport } from '../types.js';
import { refusal } from './engineView.js';

type Override = 'drain' | 'force-down' | 'force-up' | 'none';
const ACTIONS: readonly [Override, string][] = [
  ['drain', 'Drain'],
  ['force-down', 'Force down'],
  ['force-up', 'Force up'],
  ['none', 'Clear'],
];

/** The last result of an endpoint's checks: latency and error, from `/health`. */
function lastCheck(checks: readonly HealthCheck[]): string {
  if (checks.length === 0) return 'not monitored';
  return checks
    .map(
      (c) =>
        `${c.monitor}: ${c.lastLatencyMs === null ? 'no result yet' : `${Math.round(c.lastLatencyMs * 10) / 10} ms`}${c.lastError ? `, ${c.lastError}` : ''}`,
    )
    .join('; ');
}

/**
 * Data centers and their endpoints: status, since when, last check latency and error, override,
 * and the actions (drain, force down, force up, clear — per endpoint and per data center) that call
 * `POST /health/override` with the token; the result, or the refusal, is announced.
 */
export function DataCentersView({ state, health, afterAction }: { state: ConsoleState | null; health: HealthReport | null; afterAction: () => Promise<void> }) {
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const checksOf = (key: string): HealthCheck[] => {
    const ids = new Set(health?.endpoints.find((e) => e.endpoint === key)?.checks ?? []);
    return (health?.checks ?? []).filter((c) => ids.has(c.check));
  };
  const override = async (target: { endpoint: string } | { dc: string }, value: Override): Promise<void> => {
    const name = 'endpoint' in target ? target.endpoint : `data center ${target.dc}`;
    const r = await act<unknown>('/health/override', { ...target, override: value });
    setResult(r.ok ? { ok: true, text: `${value === 'none' ? 'cleared' : value}: ${name}` } : { ok: false, text: refusal(r.status, r.body.error) });
    await afterAction();
  };
  return (
    <section id="v-dcs" aria-labelledby="h-dcs">
      <h2 id="h-dcs">Data centers and endpoints</h2>
      <p id="action-result" role="status" class={result ? (result.ok ? 'done' : 'refused') : ''}>
        {result?.text ?? ''}
      </p>
      <table id="endpoints">
        <caption>Endpoint health, since when, last check, overrides, and GSLB answers per data center</caption>
        <thead>
          <tr>
            <th scope="col">data center</th>
            <th scope="col">DC status</th>
            <th scope="col">answers, last minute</th>
            <th scope="col">endpoint</th>
            <th scope="col">status</th>
            <th scope="col">override</th>
            <th scope="col">since</th>
            <th scope="col">last check</th>
            <th scope="col">actions</th>
          </tr>
        </thead>
        <tbody>
          {(state?.dataCenters ?? []).flatMap((dc) => {
            const eps = dc.endpoints.length > 0 ? dc.endpoints : [null];
            return eps.map((e, i) => (
              <tr key={`${dc.name}/${e?.key ?? ''}`} data-dc={dc.name} data-endpoint={e?.key}>
                {i === 0 ? (
                  <>
                    <th scope="row" rowSpan={eps.length}>
                      {dc.name}
                      <br />
                      {ACTIONS.map(([value, label]) => (
                        <button
                          key={value}
                          type="button"
                          data-dc-action={value}
                          aria-label={`${label} every endpoint of ${dc.name}`}
                          onClick={() => void override({ dc: dc.name }, value)}
                        >
                          {label}
                        </button>
                      ))}
                    </th>
                    <td rowSpan={eps.length} class={dc.status}>
                      {dc.status}
                    </td>
                    <td rowSpan={eps.length}>{dc.answers.lastMinute}</td>
                  </>
                ) : null}
                {e ? (
                  <>
                    <td>{e.key}</td>
                    <td class={e.status}>{e.status}</td>
                    <td>{e.override ?? '-'}</td>
                    <td>{e.since ?? '-'}</td>
                    <td>{lastCheck(checksOf(e.key))}</td>
                    <td>
                      {ACTIONS.map(([value, label]) => (
                        <button
                          key={value}
                          type="button"
                          data-action={value}
                          aria-label={`${label} ${e.key}`}
                          onClick={() => void override({ endpoint: e.key }, value)}
                        >
                          {label}
                        </button>
                      ))}
                    </td>
                  </>
                ) : (
                  <td colSpan={6}>no endpoints</td>
                )}
              </tr>
            ));
          })}
        </tbody>
      </table>
    </section>
  );
}

import type { ConsoleState } from '../types.js';

const percent = (n: number, total: number): string => (total > 0 ? `${Math.round((1000 * n) / total) / 10} %` : '-');

/**
 * Each data center's share of the GSLB answers per minute over the last minutes (the console's
 * samples of `gslbd_dc_answers_total`, newest first), as a table and as stacked bars.
 */
export function ShareView({ state }: { state: ConsoleState | null }) {
  const dcs = state?.dataCenters ?? [];
  const minutes = Math.max(0, ...dcs.map((d) => d.answers.perMinute.length));
  const totals = Array.from({ length: minutes }, (_, m) => dcs.reduce((n, d) => n + (d.answers.perMinute[m] ?? 0), 0));
  const lastMinute = dcs.reduce((n, d) => n + d.answers.lastMinute, 0);
  const colours = ['#1f4e99', '#a00000', '#0a5d0a', '#7a4a00', '#5b2a86', '#00636e'];
  return (
    <section id="v-share" aria-labelledby="h-share">
      <h2 id="h-share">Answer share per data center</h2>
      <table id="share">
        <caption>Share of GSLB answers per data center: the last minute, then each whole minute before (newest first)</caption>
        <thead>
          <tr>
            <th scope="col">data center</th>
            <th scope="col">last minute</th>
            {totals.map((_, m) => (
              <th scope="col" key={m}>
                {m + 1} min ago
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {dcs.map((d) => (
            <tr key={d.name} data-dc={d.name}>
              <th scope="row">{d.name}</th>
              <td data-last-minute={d.answers.lastMinute}>
                {percent(d.answers.lastMinute, lastMinute)} ({d.answers.lastMinute})
              </td>
              {totals.map((t, m) => (
                <td key={m}>{percent(d.answers.perMinute[m] ?? 0, t)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {minutes > 0 ? (
        <svg role="img" aria-label="Answer share per minute, stacked by data center" viewBox={`0 0 ${minutes * 24} 100`} width={minutes * 24} height="100">
          {totals.map((t, m) => {
            let y = 0;
            return dcs.map((d, i) => {
              const h = t > 0 ? (100 * (d.answers.perMinute[m] ?? 0)) / t : 0;
              const bar = <rect key={`${m}-${d.name}`} x={(minutes - 1 - m) * 24 + 2} y={y} width="20" height={h} fill={colours[i % colours.length]} />;
              y += h;
              return bar;
            });
          })}
        </svg>
      ) : (
        <p>Per-minute shares appear after the first whole minute of watching.</p>
      )}
    </section>
  );
}

import { geoEquirectangular, geoPath } from 'd3-geo';
import { feature } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import land110m from 'world-atlas/land-110m.json';
import type { ConsoleState } from '../types.js';

const WIDTH = 960;
const HEIGHT = 480;
/** Natural Earth's land at 1:110m (the world-atlas package), bundled: the map needs no tile server. */
const topology = land110m as unknown as Topology<{ land: GeometryCollection }>;
const projection = geoEquirectangular().fitSize([WIDTH, HEIGHT], { type: 'Sphere' });
const landPath = geoPath(projection)(feature(topology, topology.objects.land)) ?? '';

/**
 * The world map: data centers at their configured coordinates and the answered clients per country
 * (at the mean coordinates of their located answers) with a line to each data center that answered
 * them, over the last 15 minutes; the same counts as a table (country × data center).
 */
export function MapView({ state }: { state: ConsoleState | null }) {
  const countries = state?.map.countries ?? [];
  const dcAt = new Map<string, [number, number]>();
  for (const d of state?.dataCenters ?? []) {
    const p = d.lat !== undefined && d.lon !== undefined ? projection([d.lon, d.lat]) : null;
    if (p) dcAt.set(d.name, p);
  }
  const rows = countries.flatMap((c) => Object.entries(c.dcs).map(([dc, n]) => ({ country: c.country, dc, n })));
  return (
    <section id="v-map" aria-labelledby="h-map">
      <h2 id="h-map">Where answers go</h2>
      <svg class="map" role="img" aria-labelledby="map-title" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width={WIDTH} height={HEIGHT}>
        <title id="map-title">
          World map of data centers (squares) and answered clients per country (circles), last {state?.map.windowMinutes ?? 15} minutes
        </title>
        <path class="land" d={landPath} />
        {countries.map((c) => {
          const p = c.lat !== undefined && c.lon !== undefined ? projection([c.lon, c.lat]) : null;
          if (!p) return null;
          const total = Object.values(c.dcs).reduce((a, b) => a + b, 0);
          return (
            <g key={c.country} data-country={c.country}>
              {Object.keys(c.dcs).map((dc) => {
                const to = dcAt.get(dc);
                return to ? <line key={dc} class="flow" x1={p[0]} y1={p[1]} x2={to[0]} y2={to[1]} stroke-width={1 + Math.log10(1 + (c.dcs[dc] ?? 0))} /> : null;
              })}
              <circle class="clients" cx={p[0]} cy={p[1]} r={3 + 2 * Math.sqrt(Math.log10(1 + total))}>
                <title>{`${c.country}: ${total} answers`}</title>
              </circle>
            </g>
          );
        })}
        {[...dcAt].map(([name, [x, y]]) => (
          <rect key={name} class="dc" data-dc={name} x={x - 5} y={y - 5} width="10" height="10">
            <title>{`data center ${name}`}</title>
          </rect>
        ))}
      </svg>
      <table id="map-counts">
        <caption>
          Answers per client country and data center, last {state?.map.windowMinutes ?? 15} minutes of watching
          {state && state.map.dropped > 0 ? ` (${state.map.dropped} answers beyond the sampling bound not located)` : ''}
        </caption>
        <thead>
          <tr>
            <th scope="col">country</th>
            <th scope="col">data center</th>
            <th scope="col">answers</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.country}/${r.dc}`} data-country={r.country} data-dc={r.dc}>
              <td>{r.country}</td>
              <td>{r.dc}</td>
              <td>{r.n}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

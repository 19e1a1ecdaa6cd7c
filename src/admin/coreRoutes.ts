import type { Engine } from '../pipeline/engine.js';
import { explainQueryFollowing } from '../pipeline/explain.js';
import type { AdminRoute } from '../core/contracts/adminRoute.js';
import type { AfterAnswerHook } from '../core/contracts/frontDoor.js';
import type { ReloadOutcome } from '../pipeline/capability.js';
import type { EngineMetrics } from '../core/telemetry/engineMetrics.js';
import type { EngineCondition } from './engineCondition.js';
import type { CompiledGslbRecord } from '../pipeline/selection/stage.js';
import { runInSlices, type Steps } from '../pipeline/selection/steps.js';
import { metricsExposition } from './metricsExposition.js';

/** What the core routes read. */
export interface CoreRouteDeps {
  readonly engine: Engine;
  readonly metrics: EngineMetrics;
  /** Re-reads the configuration (as SIGHUP does). */
  readonly reload: (reason: string) => Promise<ReloadOutcome>;
  /** The front doors' after-answer steps (DNSSEC signing), which `/explain` runs too. */
  readonly afterAnswer?: readonly AfterAnswerHook[];
  /** The engine's condition (ok, or degraded with reasons); ok when not given. */
  readonly condition?: () => EngineCondition;
  /** The state store and the nodes sharing it (`/status` `store`), when the composition root gives it. */
  readonly store?: () => object;
}

/**
 * The admin routes every engine has:
 * - `GET /healthz`: 200 while serving, `status` `ok` or `degraded` with its `reasons` (fail-safe in
 *   use, last reload failed, each with since when), and warnings (e.g. the TypeScript location fallback);
 * - `GET /status`: condition, last reload, snapshot generation, zones, records, data centers, location data, health view,
 *   the state store (its connection and the nodes sharing it);
 * - `GET /metrics`: Prometheus exposition, written in slices ({@link metricsExposition});
 * - `GET /explain?name=&type=&client=[&do=1]`: the decision trace (client is an address or `addr/len`),
 *   and with `do=1` what the DNSSEC signer did to the answer (signed, from its cache);
 * - `POST /reload` (token): re-reads the configuration; 422 with the reasons when it is invalid.
 * Capabilities add their own (`/health`, `/metrics/*` pushes, `/reload/geo`).
 */
export function coreRoutes(deps: CoreRouteDeps): AdminRoute[] {
  const { engine, metrics } = deps;
  const condition = deps.condition ?? ((): EngineCondition => ({ status: 'ok', reasons: [] }));
  const routes: AdminRoute[] = [];
  routes.push({
    method: 'GET',
    path: '/healthz',
    mutating: false,
    handle() {
      const warnings: string[] = [];
      const geo = engine.snapshot.env.geo;
      if (geo.implementation === 'typescript' && geo.describe().sources.length > 0) {
        warnings.push('location lookups use the TypeScript reference implementation (native addon not loaded)');
      }
      const c = condition();
      return { status: 200, json: { status: c.status, generation: engine.snapshot.generation, reasons: c.reasons, warnings } };
    },
  });
  routes.push({
    method: 'GET',
    path: '/status',
    mutating: false,
    async handle() {
      const s = engine.snapshot;
      const c = condition();
      const records = await runInSlices(statusRecordsSteps(s.records));
      return {
        status: 200,
        json: {
          status: c.status,
          reasons: c.reasons,
          ...(c.lastReload !== undefined ? { lastReload: c.lastReload } : {}),
          generation: s.generation,
          configFile: s.file,
          loadedAt: new Date(s.loadedAtMs).toISOString(),
          zones: [...s.zones.zones].map((z) => ({ name: z.name, serial: z.soa.data.serial, names: z.nodes.size })),
          records,
          datacenters: s.dataCenters.map((d) => d.name),
          location: s.env.geo.describe(),
          health: s.env.health.description,
          ...(deps.store ? { store: deps.store() } : {}),
        },
      };
    },
  });
  routes.push({
    method: 'GET',
    path: '/metrics',
    mutating: false,
    async handle() {
      return { status: 200, text: await metricsExposition(metrics.registry), contentType: metrics.registry.contentType };
    },
  });
  routes.push({
    method: 'GET',
    path: '/explain',
    mutating: false,
    async handle({ url }) {
      const name = url.searchParams.get('name');
      const client = url.searchParams.get('client');
      if (!name || !client) return { status: 400, json: { error: 'name and client are required (type defaults to A)' } };
      try {
        const dnssecOk = url.searchParams.get('do') === '1';
        // A recursive delegation asks the sub-tier (within its budget) as a trial: `explainQueryFollowing`.
        const json = await explainQueryFollowing(engine, name, url.searchParams.get('type') ?? 'A', client, { dnssecOk, afterAnswer: deps.afterAnswer });
        return { status: 200, json };
      } catch (e) {
        return { status: 400, json: { error: (e as Error).message } };
      }
    },
  });
  routes.push({
    method: 'POST',
    path: '/reload',
    mutating: true,
    async handle() {
      const r = await deps.reload('admin API');
      return r.ok ? { status: 200, json: r } : { status: 422, json: r };
    },
  });
  return routes;
}

/** Records described between two yields of {@link statusRecordsSteps}. */
const STATUS_RECORDS_PER_STEP = 256;

/**
 * `/status`'s `records`: name, type, service and candidate data centers of each, built in steps of
 * {@link STATUS_RECORDS_PER_STEP} records (20,000 records took 10–20 ms in one go; issue 17).
 */
export function* statusRecordsSteps(records: readonly CompiledGslbRecord[]): Steps<object[]> {
  const out: object[] = [];
  for (const r of records) {
    out.push({ name: r.name, type: r.type, service: r.service, dcs: r.candidates.map((c) => c.dc.name) });
    if (out.length % STATUS_RECORDS_PER_STEP === 0) yield;
  }
  return out;
}

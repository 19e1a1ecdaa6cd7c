import { parseConfigText } from '../../src/process/loadConfig.js';
import { TYPE_CODES, type RecordType } from '../../src/core/dns/records.js';
import { presentData } from '../../src/core/dns/presentation.js';
import { type Snapshot } from '../../src/pipeline/snapshot.js';
import { buildSnapshot } from '../../src/process/snapshot.js';
import { parseIp } from '../../src/core/net/ipAddress.js';
import { loadLocationDb } from '../../src/capabilities/geo/loadSources.js';
import { MonitoredHealthView } from '../../src/capabilities/health/monitoredHealthView.js';
import type { AdminOverride, EndpointHealth, HealthStatus, HealthView } from '../../src/core/views/healthView.js';
import { emptyMetricView } from '../../src/core/views/metricView.js';
import { RotationStore } from '../../src/core/views/rotationStore.js';
import type { ResolveContext } from '../../src/core/views/resolveContext.js';
import { resolve, type ExplainedSelection } from '../../src/pipeline/zones/authoritative.js';

/**
 * Resolves GSLB names of a YAML configuration over a chosen health view, without sockets: the
 * selection-level counterpart of the end-to-end health tests. Clients have no location data, so
 * every data center ranks equal; tests use `balanceAlgorithm: all` with a large `pickDcCount`
 * to see every live endpoint.
 */

/** The zone every fixture uses: SOA minimum 60, zone TTL 300. */
export const ZONE_YAML = `
zones:
  - name: example.test
    ttl: 300
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, serial: 1, minimum: 60 }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
      - { name: alias, type: CNAME, data: www.example.test }
`;

/** An answer reduced to what health tests compare. */
export interface SimpleAnswer {
  rcode: number;
  /** `TYPE data` of each answer record, in order. */
  answers: string[];
  /** TTLs of the answer records. */
  ttls: number[];
  /** `TYPE ttl` of each authority record. */
  authority: string[];
  explain: ExplainedSelection[];
}

export function snapshotOf(yaml: string, health: HealthView): Snapshot {
  const config = parseConfigText(yaml);
  return buildSnapshot('/tmp/fixture.yaml', config, { geo: loadLocationDb([], '/tmp/fixture.yaml'), health, metrics: emptyMetricView }, 1_000_000);
}

/** A resolve context with a fixed clock (ms) and fresh rotation. */
export function contextAt(nowMs: number): ResolveContext {
  return { random: () => 0.5, now: () => nowMs, rotation: new RotationStore() };
}

export function ask(snap: Snapshot, name: string, type: RecordType = 'A', ctx: ResolveContext = contextAt(1_000_000)): SimpleAnswer {
  const explain: ExplainedSelection[] = [];
  const a = resolve(
    { name, type: TYPE_CODES[type], client: { address: parseIp('192.0.2.200'), sourcePrefix: 32, fromEcs: false }, transport: 'udp' },
    snap,
    ctx,
    explain,
  );
  return {
    rcode: a.rcode,
    answers: a.answers.map((r) => `${r.type} ${presentData(r.type, r.data)}`),
    ttls: a.answers.map((r) => r.ttl),
    authority: a.authority.map((r) => `${r.type} ${r.ttl}`),
    explain,
  };
}

/** Addresses of the A records of an answer, sorted. */
export function addresses(a: SimpleAnswer): string[] {
  return a.answers
    .filter((x) => x.startsWith('A '))
    .map((x) => x.slice(2))
    .sort();
}

/**
 * A health view from endpoint statuses by key (`service/dc/address`), with optional overrides,
 * data center statuses, and the time unknown endpoints began (ms).
 */
export function viewOf(
  statuses: Record<string, HealthStatus>,
  options: { overrides?: Record<string, AdminOverride>; hosts?: Record<string, HealthStatus>; sinceMs?: number } = {},
): HealthView {
  const health = new Map<string, EndpointHealth>();
  for (const [key, status] of Object.entries(statuses)) health.set(key, { status, override: options.overrides?.[key], sinceMs: options.sinceMs ?? 0 });
  for (const [key, override] of Object.entries(options.overrides ?? {})) {
    if (!health.has(key)) health.set(key, { status: 'up', override, sinceMs: 0 });
  }
  const keys = [...health.keys()];
  const index = { endpoints: new Map(keys.map((k, i) => [k, i])), services: new Map(), monitored: keys.map(() => true) };
  return new MonitoredHealthView(index, [...health.values()], [], new Map(Object.entries(options.hosts ?? {})));
}

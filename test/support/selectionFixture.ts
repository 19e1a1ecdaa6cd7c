import { parseConfigText } from '../../src/process/loadConfig.js';
import { presentData } from '../../src/core/dns/presentation.js';
import { TYPE_CODES, type RecordType } from '../../src/core/dns/records.js';
import { type Snapshot } from '../../src/pipeline/snapshot.js';
import { buildSnapshot } from '../../src/process/snapshot.js';
import { familyBits, parseCidr } from '../../src/core/net/ipAddress.js';
import { emptyLocationDb, type LocationDb } from '../../src/core/location/locationDb.js';
import type { Client } from '../../src/core/model/query.js';
import { UNMONITORED_UP, type HealthView } from '../../src/core/views/healthView.js';
import { emptyMetricView } from '../../src/core/views/metricView.js';
import type { ResolveContext } from '../../src/core/views/resolveContext.js';
import { RotationStore } from '../../src/core/views/rotationStore.js';
import { resolve, type ExplainedSelection } from '../../src/pipeline/zones/authoritative.js';
import { seededRandom } from './seededRandom.js';

/** A health view with these data centers down (every endpoint in them), everything else up. */
export function dcsDown(...names: string[]): HealthView {
  const down = new Set(names);
  return {
    endpointUp: (e) => !down.has(e.dc.name),
    endpointHealth: () => UNMONITORED_UP,
    hostStatus: (dc) => (down.has(dc) ? 'down' : 'up'),
    serviceStatus: (_service, dc) => (down.has(dc) ? 'down' : 'up'),
    description: `down: ${names.join(', ') || 'none'}`,
  };
}

/** A context with a fixed random sequence (mulberry32) and a fresh rotation store. */
export function fixedContext(seed = 1): ResolveContext {
  return {
    random: seededRandom(seed),
    now: () => 1_700_000_000_000,
    rotation: new RotationStore(),
  };
}

/** A snapshot of configuration text over a location database and health view built in code. */
export function snapshotOf(yaml: string, geo: LocationDb = emptyLocationDb(), health: HealthView = dcsDown()): Snapshot {
  return buildSnapshot('<test>', parseConfigText(yaml), { geo, health, metrics: emptyMetricView }, 1_700_000_000_000);
}

/** The client of an explain-style argument: `addr` (resolver, no ECS) or `addr/len` (ECS source prefix). */
export function clientOf(text: string): Client {
  const p = parseCidr(text);
  return { address: p.address, sourcePrefix: p.prefix, fromEcs: p.prefix < familyBits(p.address.family) };
}

/** The parts of an answer tests compare: record data in presentation form, ECS scope, data centers. */
export interface Asked {
  readonly data: string[];
  readonly scope: number;
  readonly dcs: string[];
  readonly rcode: number;
  readonly selections: ExplainedSelection[];
}

/** Answers `name`/`type` for `client` on `snap`, as a front door would. */
export function ask(snap: Snapshot, ctx: ResolveContext, name: string, client: string, type: RecordType = 'A', explain = false): Asked {
  const selections: ExplainedSelection[] = [];
  const a = resolve({ name, type: TYPE_CODES[type], client: clientOf(client), transport: 'udp' }, snap, ctx, explain ? selections : undefined);
  return { data: a.answers.map((r) => presentData(r.type, r.data)), scope: a.scope, dcs: a.dcs, rcode: a.rcode, selections };
}

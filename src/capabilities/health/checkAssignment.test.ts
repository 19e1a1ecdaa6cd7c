import test from 'ava';
import {
  InProcessStateStore,
  type MapOptions,
  type StateMap,
  type StateStore,
  type StateStream,
  type StoreConnection,
  type StreamOptions,
} from '../../core/contracts/stateStore.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';
import { waitFor } from '../../../test/support/waitFor.js';
import { HealthMonitor } from './healthMonitor.js';
import { rendezvousOwners } from './rendezvous.js';

/**
 * r-of-n checking (`health.quorum.checkers`): three nodes' health monitors share one store (in
 * process here, each with its own node name; the Redis store carries the same maps between
 * processes), 30 endpoints with a TCP check each. Each check is run by exactly the 2 nodes
 * rendezvous hashing names, the quorum of 2 still decides on every node, and when a node leaves
 * (its entry in `health.checkers` expires) the other two take over its checks.
 */

const log = createLogger('silent');

/** A node's view of a shared store: its own name, the shared maps, always connected. */
class NodeStore implements StateStore {
  constructor(
    readonly node: string,
    private readonly inner: InProcessStateStore,
  ) {}
  map<V>(name: string, options?: MapOptions): StateMap<V> {
    return this.inner.map<V>(name, options);
  }
  connection(): StoreConnection {
    return { state: 'connected', sinceMs: 0 };
  }
  stream<V>(name: string, options?: StreamOptions): StateStream<V> {
    return this.inner.stream<V>(name, options);
  }
}

const ENDPOINTS = Array.from({ length: 30 }, (_, i) => `127.0.0.${i + 2}`);
// Port 9 on 127.0.0.x: refused at once (down), so every check ends within its interval.
const CHECK_IDS = ENDPOINTS.map((a) => `tcp@${a}:9`);

const config = (checkers: number | undefined) =>
  parseConfigText(`
${EXAMPLE_ZONE}
datacenters: [{ name: dc1 }]
services:
  - name: web
    endpoints:
${ENDPOINTS.map((a) => `      - { dc: dc1, address: 192.0.2.${a.split('.')[3]}, monitors: [tcp], check: { address: ${a}, port: 9 } }`).join('\n')}
health:
  monitors: [{ name: tcp, type: tcp, intervalMs: 100, timeoutMs: 100, rise: 1, fall: 1 }]
  quorum: { observers: 2, voteTtlSeconds: 1, graceSeconds: 30${checkers ? `, checkers: ${checkers}` : ''} }
`);

/** Starts one node per name on a shared store; `runs` collects which node ran which check. */
function nodes(t: { teardown(f: () => unknown): void }, names: readonly string[], checkers: number | undefined) {
  const shared = new InProcessStateStore();
  const runs = new Map<string, Set<string>>();
  const monitors = new Map<string, HealthMonitor>();
  for (const name of names) {
    const m = new HealthMonitor({
      log,
      store: new NodeStore(name, shared),
      onCheck: (id) => {
        if (!runs.has(id)) runs.set(id, new Set());
        runs.get(id)!.add(name);
      },
    });
    t.teardown(() => m.stop());
    m.configure(config(checkers), '/tmp/x.yaml');
    monitors.set(name, m);
  }
  for (const m of monitors.values()) m.start();
  return { runs, monitors };
}

test.serial('each check is run by the 2 of 3 nodes rendezvous hashing names; the quorum decides on every node', async (t) => {
  const { runs, monitors } = nodes(t, ['a', 'b', 'c'], 2);
  await new Promise((r) => setTimeout(r, 200));
  runs.clear();
  await new Promise((r) => setTimeout(r, 1000));
  for (const id of CHECK_IDS) t.deepEqual([...(runs.get(id) ?? [])].sort(), rendezvousOwners(id, ['a', 'b', 'c'], 2).sort(), id);
  const perNode = ['a', 'b', 'c'].map((n) => CHECK_IDS.filter((id) => runs.get(id)?.has(n)).length);
  t.is(
    perNode.reduce((x, y) => x + y),
    60,
  );
  t.log(`checks per node (30 checks, r = 2 of 3): ${perNode.join(', ')}`);
  for (const [name, m] of monitors)
    await waitFor(
      `${name} sees every endpoint down (2 of 2 votes)`,
      () => ENDPOINTS.every((a) => m.view.endpointHealth(`web/dc1/192.0.2.${a.split('.')[3]}`).status === 'down'),
      5000,
    );
});

test.serial('a node that leaves hands its checks to the others once its entry expires', async (t) => {
  const { runs, monitors } = nodes(t, ['a', 'b', 'c'], 2);
  await new Promise((r) => setTimeout(r, 300));
  await monitors.get('c')!.stop();
  // c's entry in health.checkers lives 1 s (the vote TTL) after its last refresh.
  await new Promise((r) => setTimeout(r, 1600));
  runs.clear();
  await new Promise((r) => setTimeout(r, 800));
  for (const id of CHECK_IDS) t.deepEqual([...(runs.get(id) ?? [])].sort(), ['a', 'b'], id);
  for (const name of ['a', 'b'])
    t.true(
      ENDPOINTS.every((a) => monitors.get(name)!.view.endpointHealth(`web/dc1/192.0.2.${a.split('.')[3]}`).status === 'down'),
      `${name}: every endpoint still down`,
    );
});

test.serial('without checkers every node runs every check', async (t) => {
  const { runs } = nodes(t, ['a', 'b', 'c'], undefined);
  await new Promise((r) => setTimeout(r, 1000));
  for (const id of CHECK_IDS) t.deepEqual([...(runs.get(id) ?? [])].sort(), ['a', 'b', 'c'], id);
});

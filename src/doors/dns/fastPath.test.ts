import { join } from 'node:path';
import test from 'ava';
import { readImage } from '../../capabilities/geo/compiledImage.js';
import { loadLocationImage } from '../../capabilities/geo/loadSources.js';
import { openLocationDb } from '../../capabilities/geo/openLocationDb.js';
import type { RangeLocationDb } from '../../capabilities/geo/rangeLocationDb.js';
import { formatIp } from '../../core/net/ipAddress.js';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { allUpHealthView } from '../../core/views/healthView.js';
import { emptyMetricView } from '../../core/views/metricView.js';
import { Engine } from '../../pipeline/engine.js';
import { withHealthView } from '../../pipeline/snapshot.js';
import { loadConfigFile } from '../../process/loadConfig.js';
import { buildSnapshot } from '../../process/snapshot.js';
import { clientMix } from '../../../test/bench/harness/clientMix.js';
import { CITY_IMAGE, readCityImage, repoRoot } from '../../../test/geo/cityImage.js';
import { buildQuery } from '../../../test/support/dnsClient.js';
import { engineExampleFiles } from '../../../test/support/exampleConfigs.js';
import { exchangeAll } from '../../../test/support/udpExchangeAll.js';
import { dcsDown, fixedContext } from '../../../test/support/selectionFixture.js';
import { loadFastPathAddon } from './fastPathAddon.js';
import { DnsServer } from './dnsServer.js';
import { dnsBehaviourSchema } from './listenerSchema.js';

/**
 * The native fast path against the Node listener, byte for byte: two listeners on one engine
 * (`dns.fastPath` on and off), every example configuration over the GeoLite2-City data, the
 * 3,000-client ECS mix of the benchmarks (IPv4 /24 and IPv6 /56) plus queries without ECS over
 * IPv4 and IPv6. Each query is asked of the Node listener, twice of the fast path (the first
 * fills its templates, the second is answered from them), then of the Node listener again;
 * wherever the two Node answers agree (the answer does not rotate), both fast-path answers equal
 * them. Then a data center goes down (a published health view) and the fast path's answers equal
 * the Node listener's at once: no template of the old view survives the publish.
 */

const MIX = 3000;
const NOW = 1_700_000_000_000;

const addon = loadFastPathAddon();
test('the fast-path addon is built (CI builds it through npm install)', (t) => {
  t.truthy(addon.addon, addon.error);
});

const mix = clientMix(openLocationDb(readCityImage(), 'typescript').db as RangeLocationDb, MIX, 20261201);

interface Listeners {
  readonly plain: DnsServer;
  readonly fast: DnsServer;
}

/**
 * The Node listener on one engine and the fast path on another built alike (same snapshot
 * inputs, same seeded context): both see the same queries in the same order (one client socket
 * lands on one native thread), and an answer replayed natively is one that would not have moved
 * rotation or drawn a random number in JavaScript either, so even rotating answers agree.
 */
async function listeners(build: () => Engine): Promise<Listeners & { engines: Engine[] }> {
  const deps = (engine: Engine, fastPath: boolean) => ({
    engine,
    metrics: new EngineMetrics(),
    log: engine.log,
    afterAnswer: [],
    behaviour: dnsBehaviourSchema.parse({ fastPath: { enabled: fastPath, threads: 2 } }),
  });
  const addresses = [
    { address: '127.0.0.1', port: 0 },
    { address: '::1', port: 0 },
  ];
  const engines = [build(), build()];
  const plain = new DnsServer(deps(engines[0]!, false), addresses);
  const fast = new DnsServer(deps(engines[1]!, true), addresses);
  await plain.start();
  await fast.start();
  return { plain, fast, engines };
}

/** Queries for every record (a wildcard's `*` as `a`): the ECS mix, then ten without ECS (with and without EDNS); ids by index. */
function queriesFor(names: { name: string; type: string }[]): { v4: Buffer[]; v6: Buffer[] } {
  const v4: Buffer[] = [];
  const v6: Buffer[] = [];
  for (const { name, type } of names) {
    for (const c of mix) v4.push(buildQuery({ id: v4.length & 0xffff, name, type, edns: { ecs: `${formatIp(c.address)}/${c.sourcePrefix}` } }));
    for (let i = 0; i < 5; i++) {
      for (const edns of [undefined, {}]) {
        v4.push(buildQuery({ id: v4.length & 0xffff, name, type, ...(edns ? { edns } : {}) }));
        v6.push(buildQuery({ id: v6.length & 0xffff, name, type, ...(edns ? { edns } : {}) }));
      }
    }
  }
  return { v4, v6 };
}

/** Asks every query twice of both listeners (Node, fast, Node, fast); returns the first differences. */
async function compare(l: Listeners, queries: { v4: Buffer[]; v6: Buffer[] }): Promise<{ compared: number; mismatches: string[] }> {
  let compared = 0;
  const mismatches: string[] = [];
  for (const [i, family] of [[0, 'v4'] as const, [1, 'v6'] as const]) {
    const qs = queries[family];
    const p = l.plain.bound[i]!;
    const f = l.fast.bound[i]!;
    for (let pass = 1; pass <= 2; pass++) {
      // Two engines, each seeing its queries in order: asked at once, they stay in step.
      const [node, fast] = await Promise.all([exchangeAll(p.address, p.port, qs), exchangeAll(f.address, f.port, qs)]);
      for (let k = 0; k < qs.length; k++) {
        compared++;
        if (!fast[k]!.equals(node[k]!) && mismatches.length < 5)
          mismatches.push(`${family} pass ${pass} #${k}: node ${node[k]!.toString('hex')} fast ${fast[k]!.toString('hex')}`);
      }
    }
  }
  return { compared, mismatches };
}

const dir = join(repoRoot, 'examples');
for (const file of engineExampleFiles().filter((f) => f.endsWith('.yaml'))) {
  test.serial(`fast path = Node listener, byte for byte, over the client mix, before and after a health change (${file})`, async (t) => {
    if (!addon.addon) return t.fail(addon.error);
    const path = join(dir, file);
    const config = loadConfigFile(path).config;
    const geo = openLocationDb(readImage(loadLocationImage({ ...config.geo, sources: [], compiled: CITY_IMAGE }, path).bytes), 'auto').db;
    const l = await listeners(
      () => new Engine(buildSnapshot(path, config, { geo, health: allUpHealthView, metrics: emptyMetricView }, NOW), fixedContext(), createLogger('silent')),
    );
    try {
      const names = config.records.map((r) => ({ name: r.name.startsWith('*.') ? `a${r.name.slice(1)}` : r.name, type: r.type as string }));
      const queries = queriesFor(names);
      const before = await compare(l, queries);
      t.deepEqual(before.mismatches, []);
      const stats = l.fast.fastPathStats()!;
      // A configuration whose answers all rotate keeps no template (multi-source.yaml); every other one is answered natively on the second pass.
      if (stats.installed > 0) t.true(stats.hits >= stats.installed, `templates kept but not replayed (${JSON.stringify(stats)})`);
      const down = config.datacenters[0]?.name;
      if (down !== undefined) {
        for (const engine of l.engines) engine.publish(withHealthView(engine.snapshot, dcsDown(down)));
        const after = await compare(l, queries);
        t.deepEqual(after.mismatches, [], `after ${down} went down`);
      }
      t.log(`${before.compared} answers compared per health view; fast path ${JSON.stringify(l.fast.fastPathStats())}`);
    } finally {
      await l.plain.stop();
      await l.fast.stop();
    }
  });
}

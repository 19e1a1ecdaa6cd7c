import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { startRedis, stopAllRedis } from '../support/redisServer.js';
import { ecsAnswers as answers, ecsClients, postOverride, SHARED_ADDRESS as ADDRESS, SHARED_TOKEN } from '../support/sharedDeployment.js';
import { waitFor } from '../support/waitFor.js';

/**
 * Same client, same answer with location-dependent records (src/process/sharedState/README.md):
 * five engine processes sharing one real redis-server, each loading the same small location file
 * (an ip-location-db city CSV of four ranges written by the test: 10.0/10 Tokyo, 10.64/10
 * Amsterdam, 10.128/9 Ashburn, 11–110/8 San Jose), answer `www.example.test` by `static-proximity`
 * (the nearest data center to the client's location, `top-1`). Each of 1,000 ECS clients
 * (`ecsClients`) gets the same data center from every node, before and after an override posted
 * to one node forces the Tokyo data center down.
 */

test.after.always(async () => {
  await stopAllEngines();
  await stopAllRedis();
});

const NODES = ['a', 'b', 'c', 'd', 'e'];

/** The four ranges of the location file (ip-location-db city columns: from, to, country, region, -, city, postcode, lat, lon, time zone). */
const CITY_CSV = `10.0.0.0,10.63.255.255,JP,Tokyo,,Chiyoda,,35.69,139.69,Asia/Tokyo
10.64.0.0,10.127.255.255,NL,North Holland,,Amsterdam,,52.37,4.89,Europe/Amsterdam
10.128.0.0,10.255.255.255,US,Virginia,,Ashburn,,39.04,-77.49,America/New_York
11.0.0.0,110.255.255.255,US,California,,San Jose,,37.34,-121.89,America/Los_Angeles
`;

function config(node: string, redisUrl: string, cityFile: string): string {
  return `
logging: { level: info }
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
  admin: { address: 127.0.0.1, port: 0, token: ${SHARED_TOKEN} }
store:
  redis: { url: "${redisUrl}", node: ${node}, namespace: sameprox, connectTimeoutSeconds: 5 }
geo: { sources: [{ format: ip-location-db-city, path: "${cityFile}" }] }
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
datacenters:
  - { name: ap, location: Asia.JP, lat: 35.7, lon: 139.7 }
  - { name: eu, location: Europe.NL, lat: 52.4, lon: 4.9 }
  - { name: us, location: North America.US, lat: 39.0, lon: -77.5 }
services:
  - name: web
    endpoints:
      - { dc: ap, address: ${ADDRESS.ap} }
      - { dc: eu, address: ${ADDRESS.eu} }
      - { dc: us, address: ${ADDRESS.us} }
records:
  - name: www.example.test
    type: A
    ttl: 30
    service: web
    policy: { type: static-proximity, pickDcCount: 1, balanceAlgorithm: top-1 }
`;
}

test('1,000 ECS clients get the same nearest data center from five nodes loading one small location file, before and after an override', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-same-prox-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const cityFile = join(dir, 'city.csv');
  writeFileSync(cityFile, CITY_CSV);
  const redis = await startRedis();
  const nodes: EngineProcess[] = await Promise.all(NODES.map((n) => startEngine(config(n, redis.url, cityFile))));
  const clients = ecsClients(1000);
  const agreed = async (what: string): Promise<string[]> => {
    const [first, ...others] = await Promise.all(nodes.map((n) => answers(n, clients)));
    for (const [i, other] of others.entries()) t.deepEqual(other, first, `${what}: node ${NODES[i + 1]} answers every client as node a does`);
    return first!;
  };
  const count = (all: string[], dc: keyof typeof ADDRESS): number => all.filter((x) => x === `0:${ADDRESS[dc]}`).length;

  const before = await agreed('before any override');
  t.deepEqual([count(before, 'ap'), count(before, 'eu'), count(before, 'us')], [334, 333, 333], 'Tokyo clients ap, Amsterdam eu, US clients us');

  t.is(await postOverride(nodes[0]!, 'ap', 'force-down'), 200);
  for (const n of nodes)
    await waitFor(`node ${n.pid} answers a Tokyo client elsewhere`, async () => (await answers(n, [clients[0]!]))[0] !== `0:${ADDRESS.ap}`, 15_000);
  const after = await agreed('after an override posted to node a');
  t.is(count(after, 'ap'), 0, 'no client gets the data center forced down');
  t.is(count(after, 'eu') + count(after, 'us'), 1000);
  t.log(`five nodes, static-proximity: before ${JSON.stringify([334, 333, 333])}, after ap forced down eu ${count(after, 'eu')} / us ${count(after, 'us')}`);
});

import test from 'ava';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseIp } from '../../core/net/ipAddress.js';
import { metricId } from '../steering/catalog.js';
import { mosFromPath } from '../steering/mos.js';
import { startGslbd, type RunningGslbd } from '../../process/gslbdProcess.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';
import { PROBE_RESULTS_MAP, type StoredProbeResult } from './probeResults.js';

/**
 * The agent API of a running engine (in this process, admin listener on a free port): per-agent
 * credentials, ownership of data centers and zones, reports through the push API's gate into the
 * metric store (with the reporter shown by /explain), and the probe-request queue.
 */

const ADMIN = 'admin-token-0123456789';
const EAST = 'east-agent-token-0123456789';
const EAST2 = 'east-agent-2-token-0123456789';
const WEST = 'west-agent-token-0123456789';
const ZONE = 'zone-agent-token-0123456789';

function config(ecs: boolean): string {
  return `
listeners:
  admin: { address: 127.0.0.1, port: 0, token: ${ADMIN} }
logging: { level: silent }
agents:
  credentials:
    - { name: east-1, dc: east, token: ${EAST} }
    - { name: east-2, dc: east, token: ${EAST2} }
    - { name: west-1, dc: west, token: ${WEST} }
    - { name: zone-0-1, zone: "0.1", token: ${ZONE} }
  probes: { ecs: ${ecs}, refreshSeconds: 60 }
${EXAMPLE_ZONE}
datacenters: [{ name: east }, { name: west }]
services:
  - name: web
    endpoints: [{ dc: east, address: 192.0.2.1 }, { dc: west, address: 192.0.2.2 }]
records:
  - name: www.example.test
    type: A
    service: web
    policy: { type: multi-source, source: service, metric: healthyBackends, criterion: highest }
  - name: voip.example.test
    type: A
    service: web
    policy: { type: multi-source, source: client, metric: packetLoss, criterion: lowest }
`;
}

async function engine(t: { teardown(f: () => Promise<void>): void }, ecs = false): Promise<{ running: RunningGslbd; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-agents-'));
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, config(ecs));
  const running = await startGslbd(file, { signals: false, watchFile: false, logDestination: openSync('/dev/null', 'w') });
  t.teardown(async () => {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { running, url: `http://127.0.0.1:${running.admin!.port}` };
}

async function call(url: string, token: string | undefined, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: r.status, json: await r.json() };
}

/** Resolves a query the way a door does, for `client` (an address) asked by `resolver`. */
function ask(running: RunningGslbd, name: string, resolver: string, ecs?: string): void {
  const r = parseIp(resolver);
  const client = ecs === undefined ? { address: r, sourcePrefix: 32, fromEcs: false } : { address: parseIp(ecs), sourcePrefix: 24, fromEcs: true, resolver: r };
  running.engine.resolveLocal({ name, type: 1, client, transport: 'udp' });
}

test('a report reaches the metric store through the push gate, and /explain names the agent and the age', async (t) => {
  const { running, url } = await engine(t);
  const r = await call(url, EAST, '/agent/v1/report', {
    dc: 'east',
    host: { cpu: 12.5, status: 'up' },
    services: [{ service: 'web', healthyBackends: 3, connection: 10 }],
    probes: [{ target: '198.51.100.7', method: 'icmp', sent: 10, received: 9, rttMinMs: 20, rttMedianMs: 22, jitterMs: 1, ttl: 58, hops: 6 }],
  });
  t.is(r.status, 200, JSON.stringify(r.json));
  t.deepEqual(r.json, { accepted: { host: 1, services: 1, probes: 1 } });
  const store = running.metricStore;
  const now = Date.now();
  t.is(store.read('host', '', 'east', metricId('host', 'cpu'), now), 12.5);
  t.is(store.read('service', 'web', 'east', metricId('service', 'healthyBackends'), now), 3);
  const net = 198 * 2 ** 16 + 51 * 2 ** 8 + 100;
  t.is(store.read('client', net, 'east', metricId('client', 'packetLoss'), now), 10);
  t.is(store.read('client', net, 'east', metricId('client', 'hops'), now), 6);
  t.is(store.read('client', net, 'east', metricId('client', 'mos'), now), mosFromPath(11, 1, 10), 'MOS from half the median RTT, the jitter and the loss');
  t.like(store.describe('service', 'web', 'east', metricId('service', 'healthyBackends'), now), { value: 3, state: 'fresh', reportedBy: 'east-1' });
  t.like(store.describe('client', net, 'east', metricId('client', 'packetLoss'), now), { value: 10, reportedBy: 'east-1' });

  const explain = await call(url, undefined, '/explain?name=www.example.test&type=A&client=192.0.2.99');
  const rank = explain.json.selections[0].steps.find((s: { stage: string }) => s.stage === 'multi-source');
  const east = rank.dcs.find((d: { dc: string }) => d.dc === 'east');
  t.is(east.reportedBy, 'east-1');
  t.true(east.ageMs >= 0 && east.ageMs < 10_000);
  t.like(
    rank.dcs.find((d: { dc: string }) => d.dc === 'west'),
    { state: 'missing' },
  );

  const stored = running.store.map<StoredProbeResult>(PROBE_RESULTS_MAP).get('dc:east|198.51.100.0/24');
  t.like(stored, { agent: 'east-1', group: 'dc:east', network: '198.51.100.0/24', lossPercent: 10, rttMedianMs: 22 });
  const agents = await call(url, undefined, '/agents');
  t.like(agents.json.agents[0], { agent: 'east-1', dc: 'east', lastReport: { host: true, services: 1, probes: 1 } });
  t.is(agents.json.agents[2].lastReport, null);
});

test('credentials: a wrong or missing credential is 401, the admin token is not an agent credential, a write for another DC is 403 and counted', async (t) => {
  const { running, url } = await engine(t);
  t.is((await call(url, 'not-a-token-at-all-0000', '/agent/v1/report', { dc: 'east', host: { cpu: 1 } })).status, 401);
  t.is((await call(url, undefined, '/agent/v1/hello')).status, 401);
  t.is((await call(url, ADMIN, '/agent/v1/report', { dc: 'east', host: { cpu: 1 } })).status, 401);
  const other = await call(url, EAST, '/agent/v1/report', { dc: 'west', host: { cpu: 1 } });
  t.is(other.status, 403);
  t.regex(other.json.error, /east-1.*"east" only, not data center "west"/);
  t.is((await call(url, EAST, '/agent/v1/report', { dc: 'east', services: [{ service: 'web', dc: 'west', healthyBackends: 9 }] })).status, 403);
  t.is((await call(url, ZONE, '/agent/v1/report', { zone: '0.1', host: { cpu: 1 } })).status, 403, 'a zone agent writes probe results only');
  t.is((await call(url, ZONE, '/agent/v1/report', { zone: '0.2', probes: [] })).status, 403);
  t.true(Number.isNaN(running.metricStore.read('host', '', 'west', metricId('host', 'cpu'), Date.now())), 'nothing was written');
  const hello = await call(url, WEST, '/agent/v1/hello');
  t.like(hello.json, { apiVersion: 1, agent: 'west-1', dc: 'west' });
  const metrics = await (await fetch(`${url}/metrics`)).text();
  t.regex(metrics, /gslbd_agent_reports_total\{agent="east-1",result="forbidden"\} 2/);
  t.regex(metrics, /gslbd_agent_reports_total\{agent="zone-0-1",result="forbidden"\} 2/);
  t.regex(metrics, /gslbd_agent_auth_failures_total 3/);
});

test("a report is applied whole or not at all, with the problems at the report's own paths", async (t) => {
  const { running, url } = await engine(t);
  const bad = await call(url, EAST, '/agent/v1/report', { dc: 'east', host: { cpu: 5 }, services: [{ service: 'web', request: -1 }] });
  t.is(bad.status, 400);
  t.deepEqual(
    bad.json.problems.map((p: { path: string }) => p.path),
    ['services[0].request'],
  );
  const unknown = await call(url, EAST, '/agent/v1/report', { dc: 'east', host: { cpu: 5 }, services: [{ service: 'mail', healthyBackends: 1 }] });
  t.is(unknown.status, 422);
  t.deepEqual(unknown.json.problems, [{ path: 'services[0].service', message: 'unknown service "mail"' }]);
  const probe = await call(url, EAST, '/agent/v1/report', { dc: 'east', probes: [{ target: '10.0.0.1', method: 'tcp', sent: 3, received: 0, ttl: 64 }] });
  t.is(probe.status, 400);
  t.true(
    Number.isNaN(running.metricStore.read('host', '', 'east', metricId('host', 'cpu'), Date.now())),
    'the valid host part of a rejected report was not applied',
  );
});

test('probe queue: the resolver of a client-metric query is requested once per DC and zone, agents of one DC share it, fresh results are skipped', async (t) => {
  const { running, url } = await engine(t);
  ask(running, 'www.example.test', '203.0.113.5');
  ask(running, 'voip.example.test', '203.0.113.5', '198.51.100.0');
  ask(running, 'voip.example.test', '203.0.113.77');
  ask(running, 'voip.example.test', '2001:db8:1:2::53');
  await new Promise((r) => setImmediate(r));
  const east1 = await call(url, EAST, '/agent/v1/probes?max=10');
  t.deepEqual(
    east1.json.requests.map((r: { target: string; network: string }) => [r.target, r.network]),
    [
      ['203.0.113.5', '203.0.113.0/24'],
      ['2001:db8:1:2::53', '2001:db8:1::/48'],
    ],
    "only records that read client metrics queue; the resolver's own address (not the ECS network, not the network's first address) by default; one request per network",
  );
  t.deepEqual((await call(url, EAST2, '/agent/v1/probes?max=10')).json.requests, [], 'the other agent of the same DC shares the work');
  const west = await call(url, WEST, '/agent/v1/probes?max=1');
  t.is(west.json.requests.length, 1);
  t.is(west.json.backlog, 1);
  t.is((await call(url, ZONE, '/agent/v1/probes?max=10')).json.requests.length, 2, 'each zone reads every request too');
  ask(running, 'voip.example.test', '203.0.113.200');
  await new Promise((r) => setImmediate(r));
  t.deepEqual((await call(url, EAST, '/agent/v1/probes?max=10')).json.requests, [], 'a network requested within refreshSeconds is not requested again');

  // West measures 2001:db8:1::/48 before reading its request: the request is skipped as fresh.
  t.is(
    (
      await call(url, WEST, '/agent/v1/report', {
        dc: 'west',
        probes: [{ target: '2001:db8:1::1', method: 'dns', sent: 2, received: 2, rttMinMs: 1, rttMedianMs: 1 }],
      })
    ).status,
    200,
  );
  t.deepEqual((await call(url, WEST, '/agent/v1/probes?max=10')).json.requests, []);
  t.is((await call(url, EAST, '/agent/v1/probes?max=0')).status, 400);
});

test('probe queue: a long poll waits for the next request; ECS networks are queued when the operator opts in', async (t) => {
  const { running, url } = await engine(t, true);
  const started = Date.now();
  const poll = call(url, WEST, '/agent/v1/probes?max=10&wait=5');
  await new Promise((r) => setTimeout(r, 200));
  ask(running, 'voip.example.test', '203.0.113.5', '198.51.100.99');
  const got = await poll;
  t.true(Date.now() - started < 4000, 'woken by the request, not by the timeout');
  const targets = got.json.requests.map((r: { network: string }) => r.network);
  t.true(targets.includes('203.0.113.0/24'));
  if (targets.length < 2) targets.push(...(await call(url, WEST, '/agent/v1/probes?max=10')).json.requests.map((r: { network: string }) => r.network));
  t.deepEqual(targets.sort(), ['198.51.100.0/24', '203.0.113.0/24']);
  const idle = Date.now();
  t.deepEqual((await call(url, WEST, '/agent/v1/probes?max=10&wait=1')).json.requests, []);
  t.true(Date.now() - idle >= 900, 'an empty queue holds the poll for the wait');
});

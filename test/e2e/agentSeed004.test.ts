import test from 'ava';
import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { dig } from '../support/dig.js';
import { startAgentProcess, stopAllAgents, type AgentProcess } from '../support/agentProcess.js';
import { startEngine, stopAllEngines } from '../support/engineProcess.js';
import { EXAMPLE_ZONE } from '../support/exampleZone.js';
import { freePort } from '../support/freePort.js';
import { removeHaproxy, startHaproxy, startHttpBackend, type HaproxyProcess, type HttpBackend } from '../support/haproxyProcess.js';
import { seededRandom } from '../support/seededRandom.js';
import { waitFor } from '../support/waitFor.js';

/**
 * Seed 004's example end to end, fed by agents, not by hand (docs/PRODUCT.md §3): an A record by
 * `service.healthyBackends` (weighted random inside the best data center), an MX by `host.status`
 * and a CNAME by `client.packetLoss`, over three data centers, each with its own real HAProxy and
 * its own `gslbd agent`. Paths are emulated on loopback by userspace DNS responders whose loss the
 * test sets (no `tc netem` here): each agent probes the resolver (127.0.0.1, where `dig` runs) on
 * its own port, so each data center sees its own path. Data center c's WAN check point is another
 * responder, on 127.0.0.3; closing it takes c's host status down.
 */

test.after.always(async () => {
  await stopAllAgents();
  await stopAllEngines();
});

const DCS = ['a', 'b', 'c'] as const;
const token = (dc: string): string => `agent-token-${dc}-0123456789`;

function engineConfig(): string {
  return `
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
  admin: { address: 127.0.0.1, port: 0, token: admin-token-0123456789 }
logging: { level: info }
metrics:
  host: { intervalSeconds: 1, staleAfterSeconds: 5 }
  service: { intervalSeconds: 1, staleAfterSeconds: 5 }
  client: { intervalSeconds: 1, staleAfterSeconds: 600 }
agents:
  credentials:
${DCS.map((dc) => `    - { name: agent-${dc}, dc: ${dc}, token: ${token(dc)} }`).join('\n')}
${EXAMPLE_ZONE}
datacenters: [${DCS.map((dc) => `{ name: ${dc} }`).join(', ')}]
services:
  - name: web
    endpoints: [${DCS.map((dc, i) => `{ dc: ${dc}, address: 192.0.2.${10 * (i + 1)}, weight: 3 }, { dc: ${dc}, address: 192.0.2.${10 * (i + 1) + 1}, weight: 1 }`).join(', ')}]
  - name: mail
    endpoints: [${DCS.map((dc) => `{ dc: ${dc}, target: mx.${dc}.example.test, priority: 10 }`).join(', ')}]
  - name: media
    endpoints: [${DCS.map((dc) => `{ dc: ${dc}, target: edge-${dc}.cdn.example.net }`).join(', ')}]
records:
  - name: www.example.test
    type: A
    ttl: 1
    service: web
    policy: { type: multi-source, source: service, metric: healthyBackends, criterion: highest, unknown: rank-last, pickDcCount: 1, balanceAlgorithm: weighted-random }
  - name: example.test
    type: MX
    ttl: 1
    service: mail
    policy: { type: multi-source, source: host, metric: status, criterion: { equals: up }, unknown: exclude, pickDcCount: 3, balanceAlgorithm: all }
  - name: media.example.test
    type: CNAME
    ttl: 1
    service: media
    policy: { type: multi-source, source: client, metric: packetLoss, criterion: lowest, unknown: rank-last, pickDcCount: 1 }
`;
}

/** A DNS responder on `address`:`port` (0: any) that answers each query, or drops it with probability `loss` (seeded). */
async function lossyResponder(address: string, port: number, loss: number, seed: number): Promise<{ port: number; close(): Promise<void> }> {
  const random = seededRandom(seed);
  const socket: Socket = createSocket('udp4');
  socket.on('message', (msg, from) => {
    if (random() < loss) return;
    const reply = Buffer.from(msg);
    reply[2] = reply[2]! | 0x80;
    socket.send(reply, from.port, from.address);
  });
  await new Promise<void>((done) => socket.bind(port, address, () => done()));
  return { port: (socket.address() as AddressInfo).port, close: () => new Promise<void>((done) => socket.close(() => done())) };
}

test('seed 004: A by service.healthyBackends, MX by host.status, CNAME by client.packetLoss — all fed by agents (HAProxy, host check points, probes)', async (t) => {
  // Three HAProxy, three agents and an engine: on a loaded 2-core machine this takes minutes, not seconds.
  t.timeout(300_000);
  const engine = await startEngine(engineConfig());
  const losses = { a: 0.6, b: 0, c: 0.3 };
  const serverCounts = { a: 3, b: 2, c: 1 };
  const sites: { dc: string; servers: HttpBackend[]; haproxy: HaproxyProcess; closers: (() => Promise<void>)[] }[] = [];
  t.teardown(async () => {
    await stopAllAgents();
    for (const s of sites) {
      await removeHaproxy(s.haproxy);
      await Promise.all([...s.servers.map((b) => b.close()), ...s.closers.map((c) => c())]);
    }
  });
  const agents: AgentProcess[] = [];
  const agentLogs = (): unknown[] => agents.flatMap((a) => a.logs().map((l) => ({ agent: a.dir, ...l })));
  let checkPoint: { port: number; close(): Promise<void> } | undefined;
  for (const [i, dc] of DCS.entries()) {
    const servers = await Promise.all(Array.from({ length: serverCounts[dc] }, () => startHttpBackend()));
    const haproxy = await startHaproxy([{ name: 'be_web', serverPorts: servers.map((s) => s.port) }], await freePort());
    const path = await lossyResponder('127.0.0.1', 0, losses[dc], i + 1);
    const closers = [() => path.close()];
    if (dc === 'c') {
      checkPoint = await lossyResponder('127.0.0.3', path.port, 0, 9);
      closers.push(() => checkPoint!.close().catch(() => undefined));
    }
    sites.push({ dc, servers, haproxy, closers });
    agents.push(
      await startAgentProcess(`
agent: { name: agent-${dc}, dc: ${dc} }
engines: [{ url: "${engine.adminUrl}", token: ${token(dc)} }]
report: { intervalSeconds: 0.5, retrySeconds: 0.2, maxRetrySeconds: 1 }
host: { intervalSeconds: 0.5${dc === 'c' ? ', checkPoints: [{ address: 127.0.0.3, role: wan }]' : ''} }
haproxy: [{ socket: ${haproxy.socket}, intervalSeconds: 0.5, timeoutSeconds: 1, backends: [{ backend: be_web, service: web }] }]
logging: { level: debug }
probes: { allow: [127.0.0.0/8], port: ${path.port}, trainLength: 20, gapMs: 5, timeoutMs: 3000, pollWaitSeconds: 5 }
`),
    );
  }
  const ask = async (name: string, type: string): Promise<string[]> => (await dig(engine.server, [name, type])).answer.map((r) => r.data).sort();
  const allIn = (answer: readonly string[], prefix: string): boolean => answer.length > 0 && answer.every((a) => a.startsWith(prefix));

  // A: the DC with the most healthy backends behind its HAProxy (a, 3 servers), weighted random between its two endpoints.
  await waitFor('www → a', async () => allIn(await ask('www.example.test', 'A'), '192.0.2.1'), 45_000);
  const seen = new Set<string>();
  for (let i = 0; i < 20; i++) for (const a of await ask('www.example.test', 'A')) seen.add(a);
  t.true(
    [...seen].every((a) => a === '192.0.2.10' || a === '192.0.2.11'),
    [...seen].join(),
  );
  t.true(seen.has('192.0.2.10'), 'the weight-3 endpoint of a is answered');
  await Promise.all(sites[0]!.servers.slice(1).map((s) => s.close()));
  await waitFor('www → b once a has 1 healthy backend', async () => allIn(await ask('www.example.test', 'A'), '192.0.2.2'), 45_000);

  // MX: every DC whose host status is up; c's status comes from its WAN check point.
  await waitFor('MX of a, b and c', async () => (await ask('example.test', 'MX')).length === 3, 45_000);
  await checkPoint!.close();
  await waitFor(
    'MX without c once its WAN check point stops answering',
    async () => (await ask('example.test', 'MX')).join() === '10 mx.a.example.test.,10 mx.b.example.test.',
    45_000,
  );

  // CNAME: the DC with the lowest packet loss toward the resolver's network (b: no loss); the first query queues the probe.
  type Ranked = { dc: string; value?: number; reportedBy?: string };
  const ranked = async (): Promise<Map<string, Ranked>> => {
    const r = (await (await fetch(`${engine.adminUrl}/explain?name=media.example.test&type=CNAME&client=127.0.0.1`)).json()) as {
      selections: { steps: { stage: string; dcs?: Ranked[] }[] }[];
    };
    return new Map(r.selections[0]!.steps.find((s) => s.stage === 'multi-source')!.dcs!.map((d) => [d.dc, d]));
  };
  t.is((await ask('media.example.test', 'CNAME')).length, 1, 'answered before any measurement (unknown: rank-last), and the probe request queued');
  await waitFor(
    'packet loss of a, b and c toward 127.0.0.0/24 on the engine',
    async () => [...(await ranked()).values()].every((d) => d.value !== undefined),
    60_000,
    { detail: () => JSON.stringify(agentLogs().filter((l) => (l as { msg: string }).msg === 'probed')) },
  );
  const loss = await ranked();
  t.like(loss.get('b'), { value: 0, reportedBy: 'agent-b' });
  // 20 probes per train: 60 % and 30 % loss read as more than 10 % (binomial, beyond 3σ).
  t.true(loss.get('a')!.value! > 10 && loss.get('c')!.value! > 10, JSON.stringify([...loss.values()]));
  t.like(loss.get('a'), { reportedBy: 'agent-a' });
  await waitFor('media → edge-b', async () => (await ask('media.example.test', 'CNAME')).join() === 'edge-b.cdn.example.net.', 10_000);
});

import test from 'ava';
import { startAgentProcess, stopAllAgents } from '../support/agentProcess.js';
import { startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { EXAMPLE_ZONE } from '../support/exampleZone.js';
import { freePort } from '../support/freePort.js';
import { removeHaproxy, startHaproxy, startHttpBackend, type HttpBackend } from '../support/haproxyProcess.js';
import { waitFor } from '../support/waitFor.js';

/**
 * `gslbd agent` against real HAProxy instances (Debian's `haproxy`) with real HTTP servers behind
 * them, reporting to a real engine: service.healthyBackends follows the servers HAProxy sees within
 * a cycle, and the agent survives HAProxy reloads and a missing socket. (A record ranked by it over
 * three data centers, checked with `dig`: agentSeed004.test.ts.)
 */

test.after.always(async () => {
  await stopAllAgents();
  await stopAllEngines();
});

const token = (dc: string): string => `agent-token-${dc}-0123456789`;

function engineConfig(dcs: readonly string[]): string {
  return `
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
  admin: { address: 127.0.0.1, port: 0, token: admin-token-0123456789 }
logging: { level: info }
metrics:
  service: { intervalSeconds: 1, staleAfterSeconds: 3 }
agents:
  credentials:
${dcs.map((dc) => `    - { name: agent-${dc}, dc: ${dc}, token: ${token(dc)} }`).join('\n')}
${EXAMPLE_ZONE}
datacenters: [${dcs.map((dc) => `{ name: ${dc} }`).join(', ')}]
services:
  - name: web
    endpoints: [${dcs.map((dc, i) => `{ dc: ${dc}, address: 192.0.2.${i + 1} }`).join(', ')}]
records:
  - name: www.example.test
    type: A
    ttl: 5
    service: web
    policy: { type: multi-source, source: service, metric: healthyBackends, criterion: highest, unknown: rank-last }
`;
}

function agentConfig(dc: string, engine: EngineProcess, socket: string, withMetrics = false): string {
  return `
agent: { name: agent-${dc}, dc: ${dc} }
engines: [{ url: "${engine.adminUrl}", token: ${token(dc)} }]
report: { intervalSeconds: 0.5, retrySeconds: 0.2, maxRetrySeconds: 1 }
host: { enabled: false }
haproxy: [{ socket: ${socket}, intervalSeconds: 0.5, timeoutSeconds: 1, backends: [{ backend: be_web, service: web }] }]
${withMetrics ? 'metrics: { port: 0 }' : ''}
`;
}

interface Reading {
  readonly value?: number;
  readonly state: string;
  readonly reportedBy?: string;
  readonly ageMs?: number;
}

/** healthyBackends of each DC as the engine's /explain shows it. */
async function healthyBackends(engine: EngineProcess): Promise<Map<string, Reading>> {
  const r = (await (await fetch(`${engine.adminUrl}/explain?name=www.example.test&type=A&client=192.0.2.200`)).json()) as {
    selections: { steps: { stage: string; dcs?: (Reading & { dc: string })[] }[] }[];
  };
  const rank = r.selections[0]!.steps.find((s) => s.stage === 'multi-source')!;
  return new Map(rank.dcs!.map((d) => [d.dc, d]));
}

async function backends(n: number): Promise<HttpBackend[]> {
  return Promise.all(Array.from({ length: n }, () => startHttpBackend()));
}

test('healthyBackends follows the servers HAProxy sees: two stopped → 1 within a cycle, a server in maintenance stops counting, reloads and a missing socket are survived', async (t) => {
  const servers = await backends(3);
  const haproxy = await startHaproxy([{ name: 'be_web', serverPorts: servers.map((s) => s.port) }], await freePort());
  t.teardown(async () => {
    await removeHaproxy(haproxy);
    await Promise.all(servers.map((s) => s.close()));
  });
  const engine = await startEngine(engineConfig(['east']));
  const agent = await startAgentProcess(agentConfig('east', engine, haproxy.socket, true));
  const value = async (): Promise<number | undefined> => (await healthyBackends(engine)).get('east')?.value;
  await waitFor('healthyBackends 3', async () => (await value()) === 3, 15_000);
  t.like((await healthyBackends(engine)).get('east'), { value: 3, state: 'fresh', reportedBy: 'agent-east' });

  await Promise.all([servers[1]!.close(), servers[2]!.close()]);
  await waitFor(
    'HAProxy to mark s2 and s3 down',
    async () => [...(await haproxy.serverStatus('be_web')).values()].filter((s) => s.startsWith('DOWN')).length === 2,
    10_000,
  );
  const after = await waitFor('healthyBackends 1 on the engine', async () => (await value()) === 1, 10_000);
  // One cycle: HAProxy's reading (every 0.5 s) plus the report (every 0.5 s); the rest is slack for a loaded machine.
  t.true(after < 4000, `${after} ms after HAProxy saw them down`);

  await Promise.all([servers[1]!.open(), servers[2]!.open()]);
  await waitFor('healthyBackends 3 again', async () => (await value()) === 3, 10_000);
  t.regex(await haproxy.command('set server be_web/s1 state maint'), /^\s*$/);
  await waitFor('a server in maintenance stops counting', async () => (await value()) === 2, 10_000);
  t.regex(await haproxy.command('set server be_web/s2 weight 0'), /^\s*$/);
  await waitFor('a server with weight 0 stops counting', async () => (await value()) === 1, 10_000);

  // A reload restarts HAProxy's counters (and its runtime state): the agent drops the negative deltas and goes on.
  await haproxy.reload();
  await waitFor('healthyBackends 3 after the reload (runtime state reset)', async () => (await value()) === 3, 10_000);
  t.false(
    agent.logs().some((l) => l.level >= 50),
    'no error logged: no report was rejected for a negative rate',
  );

  await haproxy.stop();
  await agent.waitForLog((l) => l.msg.startsWith('source reading failed'), 10_000);
  await waitFor('healthyBackends stale on the engine', async () => (await healthyBackends(engine)).get('east')?.state === 'stale', 10_000);
  t.regex(await agent.metrics(), /gslbd_agent_source_up\{source="haproxy:[^"]+"\} 0/);
  await haproxy.start();
  await agent.waitForLog((l) => l.msg === 'source readable again', 10_000);
  await waitFor('healthyBackends fresh again', async () => (await healthyBackends(engine)).get('east')?.state === 'fresh', 10_000);
  t.regex(await agent.metrics(), /gslbd_agent_source_up\{source="haproxy:[^"]+"\} 1/);
  t.regex(await agent.metrics(), /gslbd_agent_reports_total\{engine="[^"]+",result="accepted"\} \d+/);
});

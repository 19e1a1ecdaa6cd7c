import test from 'ava';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { aRecords, queryUdp } from '../health/dnsClient.js';
import { startHttpPeer, startTcpPeer, type HttpPeer, type Peer } from '../health/loopbackPeers.js';
import { sleep, waitFor } from '../support/waitFor.js';
import { freePort } from '../support/freePort.js';

/**
 * End to end: the engine process with real monitors against real loopback servers, answering
 * real DNS queries on its standalone listener, with the admin API.
 */

const TOKEN = 'health-e2e-token-0123456789';
const INTERVAL = 200;
/** Generous slack on top of the expected time: the machine is shared and often loaded. */
const SLACK = 10_000;

async function writeConfig(dir: string, body: string): Promise<string> {
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(
    file,
    `
logging: { level: silent }
listeners:
  dns: [{ address: 127.0.0.1, port: ${await freePort()} }]
  admin: { address: 127.0.0.1, port: ${await freePort()}, token: ${TOKEN} }
zones:
  - name: example.test
    ttl: 300
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, minimum: 60 }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
      - { name: alias, type: CNAME, data: www.example.test }
${body}`,
  );
  return file;
}

async function start(file: string): Promise<RunningGslbd> {
  return startGslbd(file, { signals: false, watchFile: false });
}

const ask = (g: RunningGslbd, name = 'www.example.test') => queryUdp(g.dns.bound[0]!.port, name);

function admin(g: RunningGslbd, path: string, body?: unknown, token: string | null = TOKEN): Promise<Response> {
  return fetch(`http://127.0.0.1:${g.admin!.port}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: token ? { authorization: `Bearer ${token}`, 'content-type': 'application/json' } : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Polls DNS until the A set equals `want` (sorted) or the limit passes; returns the time taken. */
function answersBecome(g: RunningGslbd, want: string[], limitMs: number, name = 'www.example.test'): Promise<number> {
  let last: string[] = [];
  return waitFor(
    `answer ${JSON.stringify(want)}`,
    async () => {
      last = aRecords(await ask(g, name));
      return JSON.stringify(last) === JSON.stringify(want);
    },
    limitMs,
    { detail: () => `the answer stayed ${JSON.stringify(last)}` },
  );
}

test('the full sequence: all up → one down → tier 1 down → all down → one recovers → restart with the state file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-e2e-health-'));
  const peers: HttpPeer[] = [];
  for (let i = 0; i < 4; i++) peers.push(await startHttpPeer());
  const [p11, p12, p21, p22] = peers as [HttpPeer, HttpPeer, HttpPeer, HttpPeer];
  const ep = (dc: string, address: string, p: Peer) =>
    `      - { dc: ${dc}, address: ${address}, monitors: [http], check: { address: 127.0.0.1, port: ${p.port}, host: www.example.test } }`;
  const file = await writeConfig(
    dir,
    `
datacenters: [{ name: dc-a }, { name: dc-b }]
services:
  - name: web
    endpoints:
${ep('dc-a', '192.0.2.11', p11)}
${ep('dc-a', '192.0.2.12', p12)}
${ep('dc-b', '198.51.100.21', p21)}
${ep('dc-b', '198.51.100.22', p22)}
records:
  - name: www.example.test
    type: A
    ttl: 30
    service: web
    policy: { type: static-proximity, pickDcCount: 8, balanceAlgorithm: all }
    health: { tiers: [{ dcs: [dc-a] }, { dcs: [dc-b] }], allDown: fail-closed, negativeTtl: 5, downTtl: 10 }
health:
  stateFile: health-state.json
  monitors: [{ name: http, type: http, path: /health, intervalMs: ${INTERVAL}, timeoutMs: 180, rise: 2, fall: 2 }]
`,
  );
  const bound = 2 * INTERVAL * 1.1 + SLACK;
  let g = await start(file);
  try {
    // All up (unknown counts as up at first): tier 1 only.
    t.deepEqual(aRecords(await ask(g)), ['192.0.2.11', '192.0.2.12']);
    await waitFor('all checked', () => g.health.report().endpoints.every((e) => e.status === 'up'), bound);
    const allUp = await ask(g);
    t.deepEqual(aRecords(allUp), ['192.0.2.11', '192.0.2.12']);
    t.deepEqual(allUp.ttls, [30, 30]);
    t.is(p11.seen.at(-1)!.host, `www.example.test:${p11.port}`, 'the check uses the target host, not the answer address');

    // One down: the other tier-1 endpoint, with the shorter TTL while one is down.
    p11.behaviour.status = 503;
    await answersBecome(g, ['192.0.2.12'], bound);
    t.deepEqual((await ask(g)).ttls, [10]);

    // Tier 1 down: tier 2.
    await p12.stop();
    await answersBecome(g, ['198.51.100.21', '198.51.100.22'], bound);

    // All down, fail-closed: NODATA with the SOA at the configured negative TTL, also behind a CNAME.
    await p21.stop();
    await p22.stop();
    await waitFor('no answer (all down)', async () => (await ask(g)).answers.length === 0, bound);
    const nodata = await ask(g);
    t.like(nodata, { rcode: 'NOERROR', aa: true, answers: [], authority: ['SOA 5'] });
    const alias = await ask(g, 'alias.example.test');
    t.like(alias, { rcode: 'NOERROR', answers: ['CNAME www.example.test'], authority: ['SOA 5'] });

    // One recovers: tier 2's recovered endpoint after rise successes.
    await p21.restart();
    await answersBecome(g, ['198.51.100.21'], bound);
    for (let i = 0; i < 5; i++) t.deepEqual(aRecords(await ask(g)), ['198.51.100.21']);
  } finally {
    await g.stop();
  }

  // Restart: the state file answers the first query before any check has run.
  g = await start(file);
  try {
    t.true(g.health.report().stateFile.atStart.used);
    t.deepEqual(aRecords(await ask(g)), ['198.51.100.21'], 'first answer after restart, from the state file');
    p11.behaviour.status = 200;
    await answersBecome(g, ['192.0.2.11'], bound);
  } finally {
    await g.stop();
    await Promise.all([p11.stop(), p21.stop()]);
  }
});

test('cold start: three endpoints, one not listening; first query right after start, then never the dead one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-e2e-health-'));
  const a = await startTcpPeer();
  const b = await startTcpPeer();
  const dead = await startTcpPeer();
  await dead.stop();
  const ep = (address: string, p: Peer) => `      - { dc: dc1, address: ${address}, monitors: [tcp], check: { address: 127.0.0.1, port: ${p.port} } }`;
  const file = await writeConfig(
    dir,
    `
datacenters: [{ name: dc1 }]
services:
  - name: web
    endpoints:
${ep('192.0.2.1', a)}
${ep('192.0.2.2', b)}
${ep('192.0.2.3', dead)}
records:
  - { name: www.example.test, type: A, service: web, policy: { type: static-proximity, balanceAlgorithm: all } }
  - { name: wait.example.test, type: A, service: web, policy: { type: static-proximity, balanceAlgorithm: all }, health: { coldStart: { waitMs: 5000 } } }
health:
  monitors: [{ name: tcp, type: tcp, intervalMs: ${INTERVAL}, timeoutMs: 180, rise: 2, fall: 3 }]
`,
  );
  const g = await start(file);
  try {
    // Documented rule (unknown-up): before any result every endpoint answers; the wait record
    // answers them too because none has a result yet (unknown never leads to all-down).
    const first = await ask(g);
    const firstWait = await ask(g, 'wait.example.test');
    const checked = g.health.report().checks.filter((c) => c.status !== 'unknown').length;
    if (checked === 0) {
      t.deepEqual(aRecords(first), ['192.0.2.1', '192.0.2.2', '192.0.2.3']);
      t.deepEqual(aRecords(firstWait), ['192.0.2.1', '192.0.2.2', '192.0.2.3']);
    }
    // After one interval (plus the timeout and scheduling slack) the dead one is never answered.
    await sleep(INTERVAL + 180 + 100);
    await waitFor('every check has a result', () => g.health.report().checks.every((c) => c.status !== 'unknown'), SLACK);
    for (let i = 0; i < 20; i++) {
      t.deepEqual(aRecords(await ask(g)), ['192.0.2.1', '192.0.2.2']);
      t.deepEqual(aRecords(await ask(g, 'wait.example.test')), ['192.0.2.1', '192.0.2.2']);
      await sleep(10);
    }
  } finally {
    await g.stop();
    await Promise.all([a.stop(), b.stop()]);
  }
});

test('a stopped listener is out of answers within fall × interval and stays out', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-e2e-health-'));
  const a = await startTcpPeer();
  const b = await startTcpPeer();
  const ep = (address: string, p: Peer) => `      - { dc: dc1, address: ${address}, monitors: [tcp], check: { address: 127.0.0.1, port: ${p.port} } }`;
  const file = await writeConfig(
    dir,
    `
datacenters: [{ name: dc1 }]
services:
  - name: web
    endpoints:
${ep('192.0.2.1', a)}
${ep('192.0.2.2', b)}
records:
  - { name: www.example.test, type: A, service: web, policy: { type: static-proximity, balanceAlgorithm: all } }
health:
  monitors: [{ name: tcp, type: tcp, intervalMs: ${INTERVAL}, timeoutMs: 180, rise: 2, fall: 3, jitter: 0.1 }]
`,
  );
  const g = await start(file);
  try {
    await waitFor('both up', () => g.health.report().endpoints.every((e) => e.status === 'up'), SLACK);
    await b.stop();
    const stoppedAt = Date.now();
    await answersBecome(g, ['192.0.2.1'], 3 * INTERVAL * 1.1 + SLACK);
    const took = Date.now() - stoppedAt;
    t.log(`out after ${took} ms (fall 3 × interval ${INTERVAL} ms)`);
    for (let i = 0; i < 30; i++) {
      t.deepEqual(aRecords(await ask(g)), ['192.0.2.1']);
      await sleep(15);
    }
  } finally {
    await g.stop();
    await a.stop();
  }
});

test('admin override: force-down with the token shows in the next answer; without the token it is refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-e2e-health-'));
  const file = await writeConfig(
    dir,
    `
datacenters: [{ name: dc1 }]
services:
  - name: web
    endpoints: [{ dc: dc1, address: 192.0.2.1 }, { dc: dc1, address: 192.0.2.2 }]
records:
  - { name: www.example.test, type: A, service: web, policy: { type: static-proximity, balanceAlgorithm: all } }
`,
  );
  const g = await start(file);
  try {
    t.deepEqual(aRecords(await ask(g)), ['192.0.2.1', '192.0.2.2']);
    const refused = await admin(g, '/health/override', { endpoint: 'web/dc1/192.0.2.2', override: 'force-down' }, null);
    t.is(refused.status, 401);
    t.deepEqual(aRecords(await ask(g)), ['192.0.2.1', '192.0.2.2']);
    const ok = await admin(g, '/health/override', { endpoint: 'web/dc1/192.0.2.2', override: 'force-down' });
    t.is(ok.status, 200);
    t.like(await ok.json(), { endpoint: 'web/dc1/192.0.2.2', override: 'force-down' });
    t.deepEqual(aRecords(await ask(g)), ['192.0.2.1']);
    const drained = await admin(g, '/health/override', { endpoint: 'web/dc1/192.0.2.1', override: 'drain' });
    t.is(drained.status, 200);
    t.like(await ask(g), { rcode: 'NOERROR', answers: [], authority: ['SOA 10'] }, 'forced down and drained stay out even under fail-open: NODATA');
    t.is((await admin(g, '/health/override', { endpoint: 'web/dc1/203.0.113.9', override: 'drain' })).status, 404);
    t.is((await admin(g, '/health/override', { endpoint: 'web/dc1/192.0.2.1', override: 'sideways' })).status, 400);
    t.is((await admin(g, '/health/override', { endpoint: 'web/dc1/192.0.2.1', override: 'none' })).status, 200);
    t.deepEqual(aRecords(await ask(g)), ['192.0.2.1']);
    const report = (await (await admin(g, '/health')).json()) as { endpoints: { endpoint: string; override: string | null }[] };
    t.deepEqual(
      report.endpoints.map((e) => [e.endpoint, e.override]),
      [
        ['web/dc1/192.0.2.1', null],
        ['web/dc1/192.0.2.2', 'force-down'],
      ],
    );
    const explain = (await (await admin(g, '/explain?name=www.example.test&client=192.0.2.200')).json()) as {
      selections: { steps: { stage: string; out?: unknown }[] }[];
    };
    t.deepEqual(explain.selections[0]!.steps.find((s) => s.stage === 'health')!.out, [{ endpoint: 'web/dc1/192.0.2.2', reason: 'forced down' }]);
  } finally {
    await g.stop();
  }
});

test('local-first with real checks: local site up → local address; local site stopped → a peer site', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-e2e-health-'));
  const local = await startTcpPeer();
  const peer = await startTcpPeer();
  const file = await writeConfig(
    dir,
    `
site: denver
datacenters: [{ name: california, site: california }, { name: denver, site: denver }]
services:
  - name: web
    endpoints:
      - { dc: california, address: 174.14.70.1, monitors: [tcp], check: { address: 127.0.0.1, port: ${peer.port} } }
      - { dc: denver, address: 200.200.200.1, monitors: [tcp], check: { address: 127.0.0.1, port: ${local.port} } }
records:
  - { name: www.example.test, type: A, service: web, health: { localFirst: true } }
health:
  monitors: [{ name: tcp, type: tcp, intervalMs: ${INTERVAL}, timeoutMs: 180, rise: 2, fall: 2 }]
`,
  );
  const g = await start(file);
  try {
    await waitFor('checked', () => g.health.report().endpoints.every((e) => e.status === 'up'), SLACK);
    t.deepEqual(aRecords(await ask(g)), ['200.200.200.1']);
    await local.stop();
    await answersBecome(g, ['174.14.70.1'], 2 * INTERVAL * 1.1 + SLACK);
    const explain = (await (await admin(g, '/explain?name=www.example.test&client=192.0.2.200')).json()) as {
      selections: { steps: { stage: string; note?: string }[] }[];
    };
    t.is(explain.selections[0]!.steps.find((s) => s.stage === 'health')!.note, 'local site down, answering peer');
    await local.restart();
    await answersBecome(g, ['200.200.200.1'], 2 * INTERVAL * 1.1 + SLACK);
  } finally {
    await g.stop();
    await Promise.all([local.stop(), peer.stop()]);
  }
});

test('reload: unchanged checks keep their state, new ones start unknown, an unreadable caFile keeps the running configuration', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-e2e-health-'));
  const a = await startTcpPeer();
  const b = await startTcpPeer();
  const dead = await startTcpPeer();
  await dead.stop();
  const ep = (address: string, p: Peer) => `      - { dc: dc1, address: ${address}, monitors: [tcp], check: { address: 127.0.0.1, port: ${p.port} } }`;
  const body = (extra: string, monitors = '') => `
datacenters: [{ name: dc1 }]
services:
  - name: web
    endpoints:
${ep('192.0.2.1', a)}
${ep('192.0.2.3', dead)}
${extra}
records:
  - { name: www.example.test, type: A, service: web, policy: { type: static-proximity, balanceAlgorithm: all } }
health:
  monitors: [{ name: tcp, type: tcp, intervalMs: ${INTERVAL}, timeoutMs: 180, rise: 2, fall: 2 }${monitors}]
`;
  const file = await writeConfig(dir, body(''));
  const header = readFileSync(file, 'utf8').split('\ndatacenters:')[0]!;
  const g = await start(file);
  try {
    await answersBecome(g, ['192.0.2.1'], 2 * INTERVAL + SLACK);
    writeFileSync(file, `${header}${body(ep('192.0.2.2', b))}`);
    t.like(await g.reload('test'), { ok: true });
    // Right after the reload: the dead one is still known down, the new one is unknown (answers).
    t.deepEqual(aRecords(await ask(g)), ['192.0.2.1', '192.0.2.2']);
    t.is(g.health.report().endpoints.find((e) => e.endpoint === 'web/dc1/192.0.2.3')!.status, 'down');
    await waitFor('new endpoint checked', () => g.health.report().endpoints.find((e) => e.endpoint === 'web/dc1/192.0.2.2')!.status === 'up', SLACK);

    writeFileSync(file, `${header}${body(ep('192.0.2.2', b), ', { name: tls, type: https, caFile: missing-ca.pem }')}`);
    const bad = await g.reload('test');
    t.false(bad.ok);
    t.regex(bad.ok ? '' : bad.error, /health\.monitors\[1\]\.caFile: cannot read "missing-ca\.pem"/);
    t.deepEqual(aRecords(await ask(g)), ['192.0.2.1', '192.0.2.2'], 'the running configuration keeps answering');
    t.is(g.health.report().checks.length, 3);
  } finally {
    await g.stop();
    await Promise.all([a.stop(), b.stop()]);
  }
});

import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startGslbd } from '../../src/process/gslbdProcess.js';
import { freePort } from '../support/freePort.js';
import { EXAMPLE_ZONE } from '../support/exampleZone.js';

/**
 * Metrics pushed through the admin API of a running engine change what the real `dig` gets from
 * its standalone listener: host cpu (lowest wins) for www, client packet loss per /24 for voip
 * (with the client network as ECS scope). A rejected push changes nothing; a reload keeps the
 * metric store.
 */

const TOKEN = 'e2e-token-0123456789abcdef';
const execFileP = promisify(execFile);

function config(dnsPort: number, adminPort: number): string {
  return `
listeners:
  dns: [{ address: 127.0.0.1, port: ${dnsPort} }]
  admin: { address: 127.0.0.1, port: ${adminPort}, token: ${TOKEN} }
logging: { level: silent }
${EXAMPLE_ZONE}
datacenters: [{ name: a }, { name: b }, { name: c }]
services:
  - name: web
    endpoints:
      - { dc: a, address: 192.0.2.1 }
      - { dc: b, address: 192.0.2.2 }
      - { dc: c, address: 192.0.2.3 }
records:
  - name: www.example.test
    type: A
    ttl: 30
    service: web
    policy: { type: multi-source, source: host, metric: cpu, criterion: lowest, gate: "host.status == up", unknown: exclude }
    failsafe: [203.0.113.99]
  - name: voip.example.test
    type: A
    ttl: 30
    service: web
    policy: { type: multi-source, source: client, metric: packetLoss, criterion: lowest, unknown: exclude }
    failsafe: [203.0.113.99]
`;
}

interface Dug {
  answers: string[];
  ecs: string | null;
}

async function dig(port: number, name: string, extra: string[] = []): Promise<Dug> {
  const { stdout } = await execFileP('dig', ['@127.0.0.1', '-p', String(port), name, 'A', '+norec', '+time=3', '+tries=2', ...extra]);
  const answers = [...stdout.matchAll(/^\S+\s+\d+\s+IN\s+A\s+(\S+)$/gm)].map((m) => m[1]!);
  return { answers, ecs: /CLIENT-SUBNET: (\S+)/.exec(stdout)?.[1] ?? null };
}

test('pushing metrics through the admin API changes the answers dig gets', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-ms-'));
  const dnsPort = await freePort();
  const adminPort = await freePort();
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, config(dnsPort, adminPort));
  const running = await startGslbd(file, { signals: false, watchFile: false, logDestination: openSync('/dev/null', 'w') });
  t.teardown(async () => {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const push = async (source: string, samples: unknown[]): Promise<number> => {
    const r = await fetch(`http://127.0.0.1:${adminPort}/metrics/${source}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ samples }),
    });
    return r.status;
  };

  t.deepEqual(await dig(dnsPort, 'www.example.test'), { answers: ['203.0.113.99'], ecs: null }, 'no metrics yet: every DC excluded, fail-safe');

  t.is(
    await push('host', [
      { dc: 'a', cpu: 30, status: 'up' },
      { dc: 'b', cpu: 70, status: 'up' },
      { dc: 'c', cpu: 10, status: 'down' },
    ]),
    200,
  );
  t.deepEqual((await dig(dnsPort, 'www.example.test')).answers, ['192.0.2.1'], 'c has the lowest cpu but is down');

  t.is(await push('host', [{ dc: 'b', cpu: 5 }]), 200);
  t.deepEqual((await dig(dnsPort, 'www.example.test')).answers, ['192.0.2.2'], 'b is now the least loaded');

  t.is(
    await push('host', [
      { dc: 'a', cpu: 1 },
      { dc: 'b', cpu: -3 },
    ]),
    400,
    'a negative value rejects the whole batch',
  );
  t.deepEqual((await dig(dnsPort, 'www.example.test')).answers, ['192.0.2.2'], 'nothing of the rejected batch was applied');

  t.is(
    await push('client', [
      { network: '198.51.100.0/24', dc: 'a', packetLoss: 4 },
      { network: '198.51.100.0/24', dc: 'b', packetLoss: 0.2 },
      { network: '198.51.100.0/24', dc: 'c', packetLoss: 1 },
      { network: '203.0.113.0/24', dc: 'c', packetLoss: 0 },
      { network: '203.0.113.0/24', dc: 'a', packetLoss: 2 },
    ]),
    200,
  );
  t.deepEqual(await dig(dnsPort, 'voip.example.test', ['+subnet=198.51.100.0/24']), { answers: ['192.0.2.2'], ecs: '198.51.100.0/24/24' });
  t.deepEqual(await dig(dnsPort, 'voip.example.test', ['+subnet=203.0.113.128/25']), { answers: ['192.0.2.3'], ecs: '203.0.113.128/25/24' });
  t.deepEqual(
    await dig(dnsPort, 'voip.example.test', ['+subnet=192.0.2.0/24']),
    { answers: ['203.0.113.99'], ecs: '192.0.2.0/24/24' },
    'a network without client metrics: fail-safe',
  );

  const explain = (await (await fetch(`http://127.0.0.1:${adminPort}/explain?name=www.example.test&type=A&client=198.51.100.1`)).json()) as {
    selections: { steps: { stage: string; dcs?: { dc: string; value?: number; state?: string }[] }[] }[];
  };
  const rank = explain.selections[0]!.steps.find((s) => s.stage === 'multi-source')!;
  t.deepEqual(
    rank.dcs!.map((d) => [d.dc, d.value, d.state]),
    [
      ['a', 30, 'fresh'],
      ['b', 5, 'fresh'],
    ],
    'the trace shows the metric values of the gated-in DCs',
  );

  t.like(await running.reload('test'), { ok: true, generation: 2 });
  t.deepEqual((await dig(dnsPort, 'www.example.test')).answers, ['192.0.2.2'], 'a reload keeps the metric store');
});

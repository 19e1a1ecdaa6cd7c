import test from 'ava';
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { dig, type DigResult } from '../support/dig.js';
import { freePort } from '../support/freePort.js';
import { ADMIN_TOKEN, DC_ADDRESS, LEAF_ZONES, proximityConfig, ZONE_TOKENS, type LeafZone } from '../support/proximityFixture.js';
import { waitFor } from '../support/waitFor.js';

/**
 * Tiered network proximity end to end (docs/PRODUCT.md §5, seed 000 steps 4–5): an engine on
 * loopback with proximity zones 0 (U.S.) → 0.1 (East Coast), 0.2 (West Coast) and 1 (Europe), a
 * data center in each leaf, zone agents reporting over the real agent API, and real `dig`
 * queries from resolver addresses of their own /24 inside 127.0.0.0/8 (`dig -b`). The tests run
 * serially: each runs its engines in this worker, and concurrent ones on a loaded 2-core machine
 * stalled dig past its 2 s timeout.
 */

interface Options {
  readonly pdb?: 'enabled' | 'disabled';
  /** Extra endpoint keys per data center (monitors). */
  readonly endpointExtra?: Partial<Record<keyof typeof DC_ADDRESS, string>>;
  readonly health?: string;
}

function config(o: Options = {}): string {
  return proximityConfig({
    sections: 'logging: { level: silent }',
    ...(o.pdb ? { pdb: o.pdb } : {}),
    ...(o.endpointExtra ? { endpointExtra: o.endpointExtra } : {}),
    ...(o.health ? { tail: o.health } : {}),
  });
}

async function engine(
  t: { teardown(f: () => Promise<void>): void },
  o: Options | string = {},
): Promise<{ running: RunningGslbd; url: string; server: { address: string; port: number }; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-proximity-'));
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, typeof o === 'string' ? o : config(o));
  const running = await startGslbd(file, { signals: false, watchFile: false, logDestination: openSync('/dev/null', 'w') });
  // Once only: a test may stop an engine itself (a sub-tier going down) before the teardown.
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopped ??= running.stop());
  t.teardown(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { running, url: running.admin ? `http://127.0.0.1:${running.admin.port}` : '', server: running.dns.bound[0]!, stop };
}

async function call(url: string, token: string | undefined, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: r.status, json: await r.json() };
}

/** `dig www.work.test A` from the resolver address `from` (a loopback address of the client network under test). */
function ask(server: { address: string; port: number }, from: string, extra: readonly string[] = []): Promise<DigResult> {
  return dig(server, ['-b', from, 'www.work.test', 'A', ...extra]);
}

function addresses(r: DigResult): string[] {
  return r.answer.filter((a) => a.type === 'A').map((a) => a.data);
}

/** Reports one probe result per zone (`rtt`: zone → median RTT in ms) toward `target`, each as its zone's agent. */
async function report(url: string, target: string, rtt: Readonly<Record<LeafZone, number>>): Promise<void> {
  for (const z of LEAF_ZONES) {
    const r = await call(url, ZONE_TOKENS[z], '/agent/v1/report', {
      zone: z,
      probes: [{ target, method: 'dns', sent: 3, received: 3, rttMinMs: rtt[z], rttMedianMs: rtt[z] }],
    });
    if (r.status !== 200) throw new Error(`report for zone ${z}: ${r.status} ${JSON.stringify(r.json)}`);
  }
}

test.serial(
  'answer now, probe later: a new client network gets the fallback order at once, a probe request, then the measured zone; the answer moves when RTTs change',
  async (t) => {
    const { url, server } = await engine(t);
    const from = '127.0.1.1';

    const first = await ask(server, from);
    t.is(first.status, 'NOERROR');
    t.true(first.flags.includes('aa'), 'an authoritative answer (seed step 8)');
    t.deepEqual(addresses(first), [DC_ADDRESS.eu], 'unmeasured: the fallback order (defaultOrder: Europe first)');

    const explained = await call(url, undefined, `/explain?name=www.work.test&type=A&client=${from}`);
    const step = explained.json.selections[0].steps.find((s: { stage: string }) => s.stage === 'network-proximity');
    t.like(step, { source: 'cache', measured: false, network: '127.0.1.0/24' }, 'the fallback index is cached; the trace says it is not measured');

    // The probe request reached every zone's agents through the agent API.
    for (const z of LEAF_ZONES) {
      const probes = await call(url, ZONE_TOKENS[z], '/agent/v1/probes?max=10&wait=0');
      t.is(probes.status, 200);
      t.deepEqual(
        probes.json.requests.map((r: { network: string }) => r.network),
        ['127.0.1.0/24'],
        `zone ${z}'s agents are asked to probe the resolver's network`,
      );
    }

    await report(url, '127.0.1.0', { '0.1': 5, '0.2': 80, '1': 200 });
    const moved = await waitFor(
      'the answer to follow the measured proximity (East Coast)',
      async () => addresses(await ask(server, from))[0] === DC_ADDRESS.east,
      5000,
      {
        everyMs: 200,
      },
    );
    t.true(moved <= 5000);
    const measured = await call(url, undefined, `/explain?name=www.work.test&type=A&client=${from}`);
    const mstep = measured.json.selections[0].steps.find((s: { stage: string }) => s.stage === 'network-proximity');
    t.is(mstep.measured, true);
    t.deepEqual(mstep.zoneOrder, ['0', '0.1', '0.2', '1'], 'zone 0 takes the minimum of its sub-zones and ties with 0.1; configuration order breaks the tie');
    t.like(
      mstep.rtts.find((r: { zone: string }) => r.zone === '0.1'),
      { rttMs: 5 },
    );

    // Another network is unaffected by this one's measurements.
    t.deepEqual(addresses(await ask(server, '127.0.2.1')), [DC_ADDRESS.eu]);

    // RTTs change: West Coast is nearest now; the answer moves once the cached index expires.
    await report(url, '127.0.1.0', { '0.1': 150, '0.2': 10, '1': 200 });
    await waitFor('the answer to move to the West Coast', async () => addresses(await ask(server, from))[0] === DC_ADDRESS.west, 5000, { everyMs: 200 });

    // With ECS the index is still the resolver's (the path the agents probe): the answer does not vary with the ECS client, so the scope is 0.
    const withEcs = await ask(server, from, ['+subnet=198.51.100.0/24']);
    t.deepEqual(addresses(withEcs), [DC_ADDRESS.west]);
    t.is(withEcs.ecs?.scope, 0);

    const metrics = await (await fetch(`${url}/metrics`)).text();
    t.regex(metrics, /gslbd_proximity_pdb_entries 1/);
    t.regex(metrics, /gslbd_proximity_index_lookups_total\{source="pdb_fallback"\} [1-9]/);
    t.regex(metrics, /gslbd_proximity_index_lookups_total\{source="pdb_measured"\} [1-9]/);
  },
);

test.serial('PDB unavailable (pdb: disabled): round-robin among the healthy data centers; a keepalive-down one is never answered', async (t) => {
  const up = await listening();
  const closed = await freePort();
  t.teardown(() => new Promise<void>((r) => up.close(() => r())));
  const upPort = (up.address() as { port: number }).port;
  const { server } = await engine(t, {
    pdb: 'disabled',
    endpointExtra: {
      east: `, monitors: [tcp], check: { address: 127.0.0.1, port: ${upPort} }`,
      west: `, monitors: [tcp], check: { address: 127.0.0.1, port: ${upPort} }`,
      eu: `, monitors: [tcp], check: { address: 127.0.0.1, port: ${closed} }`,
    },
    health: 'health:\n  monitors: [{ name: tcp, type: tcp, intervalMs: 200, timeoutMs: 150, rise: 1, fall: 1 }]',
  });
  const from = '127.0.3.1';
  // The closed port fails the first check: Europe goes down.
  await waitFor(
    'Europe to be marked down',
    async () => {
      for (let i = 0; i < 4; i++) if (addresses(await ask(server, from)).includes(DC_ADDRESS.eu)) return false;
      return true;
    },
    10_000,
    { everyMs: 100 },
  );
  const seen = new Map<string, number>();
  for (let i = 0; i < 12; i++) {
    const a = addresses(await ask(server, from));
    t.is(a.length, 1);
    seen.set(a[0]!, (seen.get(a[0]!) ?? 0) + 1);
  }
  t.false(seen.has(DC_ADDRESS.eu), 'a keepalive-down data center is never answered');
  t.is((await ask(server, from, ['+subnet=198.51.100.0/24'])).ecs?.scope, 0, 'round-robin does not depend on the client');
  t.is(seen.get(DC_ADDRESS.east), 6, 'round-robin: east and west alternate');
  t.is(seen.get(DC_ADDRESS.west), 6);
});

/** A TCP server on a free loopback port (a monitor's target that is up). */
async function listening(): Promise<Server> {
  const s = createServer((c) => c.destroy());
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return s;
}

/**
 * A client network's DNS server as the zones' probes see it: a UDP responder on `address` that
 * answers every datagram after a delay set per probing source address (the path from each zone;
 * no `tc netem` here, so the delay is emulated in userspace).
 */
async function delayingResponder(address: string, delayBySource: Map<string, number>): Promise<{ port: number; socket: Socket }> {
  const socket = createSocket('udp4');
  socket.on('message', (msg, rinfo) => {
    const delay = delayBySource.get(rinfo.address) ?? 1000;
    setTimeout(() => socket.send(msg, rinfo.port, rinfo.address), delay);
  });
  await new Promise<void>((r) => socket.bind(0, address, () => r()));
  return { port: socket.address().port, socket };
}

/**
 * One probe train the way a zone's agent runs one (a DNS-over-UDP probe, `src/capabilities/agents/README.md`):
 * `count` datagrams from `source` to `target:port`, each timed to its reply; returns the minimum
 * and median RTT in ms.
 */
async function probeTrain(source: string, target: string, port: number, count: number): Promise<{ min: number; median: number; received: number }> {
  const socket = createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, source, () => r()));
  const rtts: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      const got = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 2000);
        socket.once('message', () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      socket.send(Buffer.from([i]), port, target);
      if (await got) rtts.push(performance.now() - started);
    }
  } finally {
    socket.close();
  }
  rtts.sort((a, b) => a - b);
  return { min: rtts[0] ?? 0, median: rtts[rtts.length >> 1] ?? 0, received: rtts.length };
}

/**
 * A zone's agent for this test (the `gslbd agent` process lands with the agent issue): long-polls
 * the agent API for probe requests, probes each target through the delaying responder from its
 * own source address, and reports the train's RTTs.
 */
function zoneAgent(url: string, zone: LeafZone, source: string, port: number, stopped: () => boolean): Promise<void> {
  return (async () => {
    while (!stopped()) {
      const r = await call(url, ZONE_TOKENS[zone], '/agent/v1/probes?max=10&wait=1');
      if (r.status !== 200) throw new Error(`probes for zone ${zone}: ${r.status}`);
      for (const req of r.json.requests as { target: string }[]) {
        const train = await probeTrain(source, req.target, port, 3);
        const probes = [
          train.received > 0
            ? { target: req.target, method: 'dns', sent: 3, received: train.received, rttMinMs: train.min, rttMedianMs: train.median }
            : { target: req.target, method: 'dns', sent: 3, received: 0 },
        ];
        const rep = await call(url, ZONE_TOKENS[zone], '/agent/v1/report', { zone, probes });
        if (rep.status !== 200) throw new Error(`report for zone ${zone}: ${rep.status} ${JSON.stringify(rep.json)}`);
      }
    }
  })();
}

test.serial(
  'a probe cycle through the agent API: zone agents probe the resolver network through per-zone delays; the answer follows, and moves when the delays swap',
  async (t) => {
    const { url, server } = await engine(t);
    // The client network's resolver is 127.0.4.1; probe requests name the resolver itself as the target.
    const from = '127.0.4.1';
    const sources: Record<LeafZone, string> = { '0.1': '127.0.10.1', '0.2': '127.0.10.2', '1': '127.0.11.1' };
    const delays = new Map<string, number>([
      [sources['0.1'], 5],
      [sources['0.2'], 80],
      [sources['1'], 200],
    ]);
    const responder = await delayingResponder(from, delays);
    let stop = false;
    const agents = LEAF_ZONES.map((z) => zoneAgent(url, z, sources[z], responder.port, () => stop));
    t.teardown(async () => {
      stop = true;
      await Promise.allSettled(agents);
      responder.socket.close();
    });

    const started = Date.now();
    t.deepEqual(addresses(await ask(server, from)), [DC_ADDRESS.eu], 'the first answer is immediate, from the fallback order');
    await waitFor('the answer to follow the measured proximity', async () => addresses(await ask(server, from))[0] === DC_ADDRESS.east, 8000, { everyMs: 200 });
    t.log(`measured answer after ${Date.now() - started} ms`);

    delays.set(sources['0.1'], 200);
    delays.set(sources['0.2'], 5);
    await waitFor('the answer to move when the delays swap', async () => addresses(await ask(server, from))[0] === DC_ADDRESS.west, 10_000, { everyMs: 200 });
    t.pass();
  },
);

/**
 * A sub-tier engine (seed 000's PDNS-0.1 or PDNS-0.2): authoritative for `zone`, one proximity zone
 * `id` with one data center answering `address` for `www.<zone>`.
 */
function subTierConfig(zone: string, id: string, address: string): string {
  return `
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
logging: { level: silent }
networkProximity:
  zones: [{ id: "${id}", name: sub-tier }]
zones:
  - name: ${zone}
    soa: { mname: ns1.${zone}, rname: hostmaster.${zone} }
    ns: [ns1.${zone}]
datacenters: [{ name: dc-${id}, proximityZone: "${id}" }]
services:
  - name: web
    endpoints: [{ dc: dc-${id}, address: ${address} }]
records:
  - { name: www.${zone}, type: A, ttl: 5, service: web, policy: { type: network-proximity } }
`;
}

/** The top tier (PDNS-0): zone 1 served here, sub-zones 0.1 and 0.2 delegated, each by an alias into a name delegated to its engine. */
function topTierConfig(sub01: { port: number }, sub02: { port: number }): string {
  return `
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
  admin: { address: 127.0.0.1, port: 0, token: ${ADMIN_TOKEN} }
logging: { level: silent }
agents:
  credentials:
${LEAF_ZONES.map((z) => `    - { name: zone-${z.replace('.', '-')}, zone: "${z}", token: ${ZONE_TOKENS[z]} }`).join('\n')}
networkProximity:
  zones:
    - { id: "0", name: U.S. }
    - { id: "0.1", name: East Coast, delegate: { nameServers: [{ name: ns1.z01.work.test, address: 127.0.0.1, port: ${sub01.port} }], check: { intervalSeconds: 1, timeoutMs: 500 } } }
    - { id: "0.2", name: West Coast, delegate: { nameServers: [{ name: ns1.z02.work.test, address: 127.0.0.1, port: ${sub02.port} }], check: { intervalSeconds: 1, timeoutMs: 500 } } }
    - { id: "1", name: Europe }
  defaultOrder: ["1"]
  indexTtlSeconds: 1
  samples: 1
zones:
  - name: work.test
    soa: { mname: ns1.work.test, rname: hostmaster.work.test }
    ns: [ns1.work.test]
    records:
      - { name: z01, type: NS, data: ns1.z01.work.test. }
      - { name: ns1.z01, type: A, data: 127.0.0.1 }
      - { name: z02, type: NS, data: ns1.z02.work.test. }
      - { name: ns1.z02, type: A, data: 127.0.0.1 }
datacenters:
  - { name: eu, proximityZone: "1" }
services:
  - name: web
    endpoints: [{ dc: eu, address: ${DC_ADDRESS.eu} }]
records:
  - name: www.work.test
    type: A
    ttl: 5
    service: web
    policy: { type: network-proximity, delegation: { mode: alias, aliases: { "0.1": www.z01.work.test, "0.2": www.z02.work.test } } }
`;
}

test.serial(
  'seed 000 steps 4-8 in alias mode: PDNS-0 answers a CNAME into the East Coast sub-tier, whose engine answers the East Coast address; Europe is answered locally',
  async (t) => {
    const east = await engine(t, subTierConfig('z01.work.test', '0.1', DC_ADDRESS.east));
    const west = await engine(t, subTierConfig('z02.work.test', '0.2', DC_ADDRESS.west));
    const top = await engine(t, topTierConfig(east.server, west.server));
    const from = '127.0.5.1';

    await report(top.url, '127.0.5.0', { '0.1': 5, '0.2': 80, '1': 200 });
    let lastExplain: unknown;
    await waitFor(
      'the East Coast alias',
      async () => {
        const r = await ask(top.server, from);
        lastExplain = [r.output, (await call(top.url, undefined, `/explain?name=www.work.test&type=A&client=${from}`)).json];
        return r.answer.some((a) => a.type === 'CNAME');
      },
      5000,
      { everyMs: 200, detail: () => JSON.stringify(lastExplain) },
    );
    const alias = await ask(top.server, from);
    t.true(alias.flags.includes('aa'));
    t.deepEqual(
      alias.answer.map((a) => [a.name, a.type, a.data]),
      [['www.work.test.', 'CNAME', 'www.z01.work.test.']],
    );
    const explained = await call(top.url, undefined, `/explain?name=www.work.test&type=A&client=${from}`);
    const step = explained.json.selections[0].steps.find((s: { stage: string }) => s.stage === 'network-proximity');
    t.deepEqual(step.delegation, { zone: '0.1', mode: 'alias', target: 'www.z01.work.test' });

    // The resolver follows the CNAME: PDNS-0 refers it to the sub-tier's name server, which answers authoritatively.
    const referral = await dig(top.server, ['www.z01.work.test', 'A']);
    t.deepEqual(
      referral.authority.map((a) => [a.type, a.data]),
      [['NS', 'ns1.z01.work.test.']],
    );
    t.deepEqual(
      referral.additional.filter((a) => a.type === 'A').map((a) => a.data),
      ['127.0.0.1'],
    );
    const followed = await dig(east.server, ['-b', from, 'www.z01.work.test', 'A']);
    t.true(followed.flags.includes('aa'));
    t.deepEqual(addresses(followed), [DC_ADDRESS.east], "the East Coast address, as in the seed's step 8");

    // West Coast nearest: the other alias; Europe nearest: Europe's address from PDNS-0 itself.
    await report(top.url, '127.0.5.0', { '0.1': 80, '0.2': 5, '1': 200 });
    await waitFor('the West Coast alias', async () => (await ask(top.server, from)).answer.some((a) => a.data === 'www.z02.work.test.'), 5000, {
      everyMs: 200,
    });
    t.deepEqual(addresses(await dig(west.server, ['-b', from, 'www.z02.work.test', 'A'])), [DC_ADDRESS.west]);
    await report(top.url, '127.0.5.0', { '0.1': 80, '0.2': 90, '1': 5 });
    await waitFor('Europe', async () => addresses(await ask(top.server, from))[0] === DC_ADDRESS.eu, 5000, { everyMs: 200 });
  },
);

test.serial('sub-tier keepalive: when the East Coast sub-tier engine stops answering, PDNS-0 skips its zone and aliases the next one', async (t) => {
  const east = await engine(t, subTierConfig('z01.work.test', '0.1', DC_ADDRESS.east));
  const west = await engine(t, subTierConfig('z02.work.test', '0.2', DC_ADDRESS.west));
  const top = await engine(t, topTierConfig(east.server, west.server));
  const from = '127.0.6.1';
  await report(top.url, '127.0.6.0', { '0.1': 5, '0.2': 40, '1': 200 });
  const target = async (): Promise<string | undefined> => (await ask(top.server, from)).answer.find((a) => a.type === 'CNAME')?.data;
  await waitFor('the East Coast alias', async () => (await target()) === 'www.z01.work.test.', 5000, { everyMs: 200 });

  // The sub-tier's DNS listener goes away (its engine stops): no name server of zone 0.1 answers.
  await east.stop();
  await waitFor('the West Coast alias while the East Coast sub-tier is down', async () => (await target()) === 'www.z02.work.test.', 8000, { everyMs: 200 });
  const explained = await call(top.url, undefined, `/explain?name=www.work.test&type=A&client=${from}`);
  const step = explained.json.selections[0].steps.find((s: { stage: string }) => s.stage === 'network-proximity');
  t.deepEqual(step.zoneOrder.slice(0, 3), ['0', '0.1', '0.2'], 'the index still ranks the East Coast first; keepalive filters it');
  t.deepEqual(step.delegation, { zone: '0.2', mode: 'alias', target: 'www.z02.work.test' });
});

import test from 'ava';
import { createServer } from 'node:net';
import dnsPacket from 'dns-packet';
import { EngineMetrics } from '../../../core/telemetry/engineMetrics.js';
import { monitorSchema } from '../healthSchema.js';
import { parseConfigText } from '../../../process/loadConfig.js';
import { Engine } from '../../../pipeline/engine.js';
import { buildSnapshot } from '../../../process/snapshot.js';
import { DnsServer } from '../../../doors/dns/dnsServer.js';
import { parseIp } from '../../../core/net/ipAddress.js';
import { emptyLocationDb } from '../../../core/location/locationDb.js';
import { buildHealthPlan } from '../healthPlan.js';
import { createLogger } from '../../../core/telemetry/logger.js';
import { allUpHealthView } from '../../../core/views/healthView.js';
import { emptyMetricView } from '../../../core/views/metricView.js';
import { systemContext } from '../../../core/views/resolveContext.js';
import { startDnsPeer } from '../../../../test/health/loopbackPeers.js';
import type { CheckOutcome, CheckTarget } from './check.js';
import { checkFor as checkRunFor } from './registry.js';
import { isTargetSource } from './dnsCheck.js';

/** The monitor's check as a function returning a promise of its outcome. */
const checkFor = (...args: Parameters<typeof checkRunFor>): ((target: CheckTarget) => Promise<CheckOutcome>) => {
  const run = checkRunFor(...args);
  return (target) => new Promise((resolve) => run(target)(resolve));
};

/**
 * The DNS monitor over UDP and over TCP against a real DNS server on loopback: gslbd's own
 * standalone listener (UDP and TCP on one port, RFC 7766) serving a small zone.
 */

const monitor = (m: Record<string, unknown>) => monitorSchema.parse({ name: 'ns', type: 'dns', intervalMs: 5000, timeoutMs: 4000, ...m });
const target = (port: number) => ({ address: '127.0.0.1', port, host: undefined });

const ZONE = `
zones:
  - name: probe.test
    soa: { mname: ns1.probe.test, rname: hostmaster.probe.test, serial: 1 }
    ns: [ns1.probe.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
      - { name: www, type: A, data: 192.0.2.1 }
      - { name: txt, type: TXT, data: "${'x'.repeat(200)}" }
      - { name: txt, type: TXT, data: "${'y'.repeat(200)}" }
      - { name: txt, type: TXT, data: "${'z'.repeat(200)}" }
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, serial: 1 }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
`;

async function startListener(address = '127.0.0.1'): Promise<{ port: number; stop(): Promise<void> }> {
  const config = parseConfigText(ZONE);
  const log = createLogger('silent');
  const engine = new Engine(
    buildSnapshot('<test>', config, { geo: emptyLocationDb(), health: allUpHealthView, metrics: emptyMetricView }, Date.now()),
    systemContext(),
    log,
  );
  const dns = new DnsServer({ engine, metrics: new EngineMetrics(), log, behaviour: config.dns }, [{ address, port: 0 }]);
  await dns.start();
  return { port: dns.bound[0]!.port, stop: () => dns.stop() };
}

test('transport defaults to udp; tcp is accepted and anything else is a configuration error', (t) => {
  t.like(monitor({ queryName: 'www.probe.test' }), { transport: 'udp' });
  t.like(monitor({ queryName: 'www.probe.test', transport: 'tcp' }), { transport: 'tcp' });
  t.throws(() => monitor({ queryName: 'www.probe.test', transport: 'tls' }));
});

test("dns over udp and over tcp against gslbd's own listener: rcode and answer as expected, wrong answers fail", async (t) => {
  const listener = await startListener();
  t.teardown(() => listener.stop());
  for (const transport of ['udp', 'tcp']) {
    const up = checkFor(monitor({ transport, queryName: 'www.probe.test', expectAnswer: '192.0.2.1' }));
    t.like(await up(target(listener.port)), { ok: true, error: '' }, transport);
    const wrong = checkFor(monitor({ transport, queryName: 'www.probe.test', expectAnswer: '192.0.2.99' }));
    t.like(await wrong(target(listener.port)), { ok: false, error: 'expected answer missing' }, transport);
    const nx = checkFor(monitor({ transport, queryName: 'gone.probe.test', expectRcode: 'NXDOMAIN' }));
    t.like(await nx(target(listener.port)), { ok: true }, transport);
    const refused = checkFor(monitor({ transport, queryName: 'www.elsewhere.test' }));
    t.like(await refused(target(listener.port)), { ok: false, error: 'rcode REFUSED' }, transport);
  }
});

test('an answer larger than 512 bytes: truncated over udp (fails), complete over tcp (succeeds)', async (t) => {
  const listener = await startListener();
  t.teardown(() => listener.stop());
  const expectAnswer = 'z'.repeat(200);
  const udp = checkFor(monitor({ queryName: 'txt.probe.test', queryType: 'TXT', expectAnswer }));
  t.like(await udp(target(listener.port)), { ok: false, error: 'expected answer missing' });
  const tcp = checkFor(monitor({ transport: 'tcp', queryName: 'txt.probe.test', queryType: 'TXT', expectAnswer }));
  t.like(await tcp(target(listener.port)), { ok: true, error: '' });
});

test('tcp really uses TCP: a UDP-only responder is refused, a stopped listener is refused', async (t) => {
  const udpOnly = await startDnsPeer();
  const tcp = checkFor(monitor({ transport: 'tcp', queryName: 'probe.example.test' }));
  t.like(await tcp(target(udpOnly.port)), { ok: false, error: 'ECONNREFUSED' });
  t.true((await checkFor(monitor({ queryName: 'probe.example.test' }))(target(udpOnly.port))).ok, 'the same responder answers over udp');
  await udpOnly.stop();

  const listener = await startListener();
  await listener.stop();
  t.like(await tcp(target(listener.port)), { ok: false, error: 'ECONNREFUSED' });
});

test('tcp framing: a response split across reads is reassembled; another id, a short close and silence fail', async (t) => {
  let mode: 'split' | 'wrong-id' | 'close' | 'silent' = 'split';
  const server = createServer((c) => {
    c.on('error', () => {});
    c.once('data', (frame: Buffer) => {
      const query = dnsPacket.decode(frame.subarray(2));
      if (mode === 'silent') return;
      if (mode === 'close') return void c.end(Buffer.from([0x00]));
      const reply = dnsPacket.encode({
        type: 'response',
        id: mode === 'wrong-id' ? (query.id! + 1) % 65536 : query.id,
        flags: dnsPacket.AUTHORITATIVE_ANSWER,
        questions: query.questions,
        answers: [{ type: 'A', name: query.questions![0]!.name, ttl: 30, data: '192.0.2.1' }],
      });
      const framed = Buffer.concat([Buffer.from([reply.length >> 8, reply.length & 0xff]), reply]);
      c.write(framed.subarray(0, 1));
      setTimeout(() => c.write(framed.subarray(1, 9)), 20);
      setTimeout(() => c.end(framed.subarray(9)), 40);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as { port: number }).port;
  // Generous timeout (a loaded machine must not turn a slow answer into a failure); only the
  // silent case uses a short one.
  const check = checkFor(monitor({ transport: 'tcp', queryName: 'www.probe.test', expectAnswer: '192.0.2.1', timeoutMs: 5000 }));
  t.like(await check(target(port)), { ok: true, error: '' });
  mode = 'wrong-id';
  t.like(await check(target(port)), { ok: false, error: 'response to another query id' });
  mode = 'close';
  t.like(await check(target(port)), { ok: false, error: 'connection closed before a complete response' });
  mode = 'silent';
  const impatient = checkFor(monitor({ transport: 'tcp', queryName: 'www.probe.test', timeoutMs: 300 }));
  t.like(await impatient(target(port)), { ok: false, error: 'timeout' });
});

test('udp and tcp to gslbd on ::1: up for every spelling of the check address (the socket reports the source as ::1)', async (t) => {
  const listener = await startListener('::1');
  t.teardown(() => listener.stop());
  for (const transport of ['udp', 'tcp']) {
    const check = checkFor(monitor({ transport, queryName: 'ns1.example.test', expectAnswer: '192.0.2.53', port: listener.port }));
    for (const address of ['::1', '0:0:0:0:0:0:0:1', '0::1', '0000:0000::0001']) {
      t.like(await check({ address, port: listener.port, host: undefined }), { ok: true, error: '' }, `${transport} to ${address}`);
    }
  }
  // The same through the configuration: the check address is canonicalised, the check id is [::1].
  const config = parseConfigText(`${ZONE}
health:
  monitors: [{ name: ns, type: dns, queryName: ns1.example.test, expectAnswer: 192.0.2.53, port: ${listener.port}, timeoutMs: 4000 }]
datacenters: [{ name: a }]
services:
  - name: ns
    endpoints: [{ dc: a, address: 192.0.2.53, monitors: [ns], check: { address: "0:0:0:0:0:0:0:1" } }]
`);
  const [planned] = buildHealthPlan(config).checks.values();
  t.is(planned!.id, `ns@[::1]:${listener.port}`);
  t.like(await checkFor(planned!.monitor)(planned!.target), { ok: true, error: '' });
});

test('udp: an IPv4-mapped target is answered from the mapped address in any spelling', async (t) => {
  const peer = await startDnsPeer();
  t.teardown(() => peer.stop());
  const check = checkFor(monitor({ queryName: 'probe.example.test', expectAnswer: '192.0.2.1' }));
  for (const address of ['::ffff:127.0.0.1', '::FFFF:127.0.0.1', '0:0:0:0:0:ffff:7f00:1']) {
    t.like(await check({ address, port: peer.port, host: undefined }), { ok: true, error: '' }, address);
  }
});

test('isTargetSource: the same bits in any spelling are the target; other addresses and zone indexes are not', (t) => {
  const target = (text: string) => [text, parseIp(text)] as const;
  t.true(isTargetSource('::1', ...target('0:0:0:0:0:0:0:1')));
  t.true(isTargetSource('::1', ...target('::1')));
  t.true(isTargetSource('2001:db8::1', ...target('2001:DB8:0::0001')));
  t.true(isTargetSource('::ffff:127.0.0.1', ...target('::FFFF:7f00:1')));
  t.false(isTargetSource('::2', ...target('0:0:0:0:0:0:0:1')));
  t.false(isTargetSource('127.0.0.2', ...target('127.0.0.1')));
  t.false(isTargetSource('fe80::1%lo', ...target('fe80::1')));
});

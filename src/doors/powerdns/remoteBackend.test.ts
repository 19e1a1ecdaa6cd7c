import test from 'ava';
import { pino } from 'pino';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import type { Engine } from '../../pipeline/engine.js';
import { atOnce, fixtureEngine, fixtureSnapshot, healthWithDown, zonesConfig } from '../../../test/support/powerdnsFixture.js';
import { json11Line } from '../../../test/support/json11.js';
import { AnswerWrapper } from '../answerWrapper.js';
import { RateLimitedLog } from '../../core/telemetry/rateLimitedLog.js';
import { PowerDnsMetrics } from './metrics.js';
import { RemoteBackendSession, type RemoteBackendDeps } from './remoteBackend.js';

const EXAMPLE_ID = 744470781; // FNV-1a 31 of "example.test"
const OTHER_ID = 686119033; // FNV-1a 31 of "other.test"

interface Harness {
  engine: Engine;
  clock: { ms: number };
  deps: RemoteBackendDeps;
  session: RemoteBackendSession;
  /** Sends one request object (or raw line) and returns the parsed reply and the close flag. */
  send(request: unknown): { reply: Record<string, unknown>; close: boolean };
  lookup(qname: string, realRemote?: string, opts?: { remote?: string; qtype?: string; zoneId?: number }): Record<string, unknown>[];
  metric(name: string): Promise<string>;
}

function harness(health?: Parameters<typeof fixtureEngine>[0]): Harness {
  const { engine, clock } = fixtureEngine(health);
  const engineMetrics = new EngineMetrics();
  const deps: RemoteBackendDeps = {
    engine,
    metrics: new PowerDnsMetrics(engineMetrics.registry),
    answers: new AnswerWrapper({ engine, metrics: engineMetrics, log: engine.log }),
    log: engine.log,
    warnings: new RateLimitedLog(engine.log),
    lookOnlyCtx: { random: () => 0.5, now: () => clock.ms, rotation: engine.ctx.rotation.readOnlyView() },
  };
  const session = new RemoteBackendSession(deps);
  const send = (request: unknown): { reply: Record<string, unknown>; close: boolean } => {
    const r = atOnce(session.handle(typeof request === 'string' ? request : JSON.stringify(request)));
    return { reply: JSON.parse(r.text) as Record<string, unknown>, close: r.close };
  };
  return {
    engine,
    clock,
    deps,
    session,
    send,
    lookup(qname, realRemote = '127.0.0.1/32', opts = {}) {
      const { reply } = send({
        method: 'lookup',
        parameters: {
          local: '127.0.0.1',
          qname,
          qtype: opts.qtype ?? 'ANY',
          'real-remote': realRemote,
          remote: opts.remote ?? '127.0.0.1',
          'zone-id': opts.zoneId ?? -1,
        },
      });
      if (!Array.isArray(reply.result)) throw new Error(`lookup gave no result list: ${JSON.stringify(reply)}`);
      return reply.result as Record<string, unknown>[];
    },
    async metric(name) {
      return (await engineMetrics.registry.getSingleMetricAsString(name))
        .split('\n')
        .filter((l) => !l.startsWith('#'))
        .join('\n');
    },
  };
}

const rr = (qname: string, qtype: string, content: string, ttl: number, extra: Record<string, number> = {}): Record<string, unknown> => ({
  qname,
  qtype,
  content,
  ttl,
  ...extra,
});

test('initialize answers true, keeps the instance option and accepts every option as a string', (t) => {
  const h = harness();
  const { reply, close } = h.send({ method: 'initialize', parameters: { path: '/run/gslbd/pdns.sock', timeout: '2000', instance: 'edge1', flag: 'yes' } });
  t.is(reply.result, true);
  t.false(close);
  t.is(h.session.instance, 'edge1');
  t.deepEqual(reply.log, ['gslbd remote backend ready (instance "edge1", generation 1)']);
});

test('getAllDomains lists every zone as a native zone with a stable id and its serial', (t) => {
  const h = harness();
  const { reply } = h.send({ method: 'getAllDomains', parameters: { include_disabled: true } });
  t.deepEqual(reply.result, [
    { id: EXAMPLE_ID, zone: 'example.test.', kind: 'native', serial: 2024010101, notified_serial: 2024010101, last_check: 0, masters: [] },
    { id: OTHER_ID, zone: 'other.test.', kind: 'native', serial: 7, notified_serial: 7, last_check: 0, masters: [] },
  ]);
});

test('getDomainInfo answers our zones (any case, trailing dot) and result:false for others', (t) => {
  const h = harness();
  t.deepEqual(h.send({ method: 'getDomainInfo', parameters: { name: 'Other.Test.' } }).reply, {
    result: { id: OTHER_ID, zone: 'other.test.', kind: 'native', serial: 7, notified_serial: 7, last_check: 0, masters: [] },
  });
  t.deepEqual(h.send({ method: 'getDomainInfo', parameters: { name: 'nowhere.test.' } }).reply, { result: false });
});

test('metadata and keys: none for every zone when no zone is signed', (t) => {
  const h = harness();
  t.deepEqual(h.send({ method: 'getAllDomainMetadata', parameters: { name: 'example.test.' } }).reply, { result: {} });
  t.deepEqual(h.send({ method: 'getDomainMetadata', parameters: { name: 'example.test.', kind: 'SOA-EDIT' } }).reply, { result: [] });
  t.deepEqual(h.send({ method: 'getDomainKeys', parameters: { name: 'example.test.' } }).reply, { result: [] });
});

test('keys and NSEC3 narrow metadata for a signed zone, none for the others (PowerDNS live signing)', (t) => {
  const h = harness();
  const asked: [string, number][] = [];
  const text = 'Private-key-format: v1.2\nAlgorithm: 13 (ECDSAP256SHA256)\nPrivateKey: AAAA\n';
  h.deps = {
    ...h.deps,
    zoneKeys: {
      keysOf(zone, now) {
        asked.push([zone, now]);
        return zone === 'example.test' ? [{ id: 1, flags: 257, active: true, published: true, privateKeyText: text }] : undefined;
      },
    },
  };
  const session = new RemoteBackendSession(h.deps);
  const send = (request: unknown): unknown => (JSON.parse(atOnce(session.handle(JSON.stringify(request))).text) as { result: unknown }).result;
  t.deepEqual(send({ method: 'getDomainKeys', parameters: { name: 'Example.Test.' } }), [{ id: 1, flags: 257, active: true, published: true, content: text }]);
  t.deepEqual(asked[0], ['example.test', Math.floor(h.clock.ms / 1000)], 'asked for the canonical apex at the engine clock, in seconds');
  t.deepEqual(send({ method: 'getDomainKeys', parameters: { name: 'other.test.' } }), []);
  t.deepEqual(send({ method: 'getAllDomainMetadata', parameters: { name: 'example.test.' } }), { NSEC3PARAM: ['1 0 0 -'], NSEC3NARROW: ['1'] });
  t.deepEqual(send({ method: 'getDomainMetadata', parameters: { name: 'example.test.', kind: 'NSEC3PARAM' } }), ['1 0 0 -']);
  t.deepEqual(send({ method: 'getDomainMetadata', parameters: { name: 'example.test.', kind: 'NSEC3NARROW' } }), ['1']);
  t.deepEqual(send({ method: 'getDomainMetadata', parameters: { name: 'example.test.', kind: 'PRESIGNED' } }), []);
  t.deepEqual(send({ method: 'getAllDomainMetadata', parameters: { name: 'other.test.' } }), {});
  t.deepEqual(send({ method: 'getDomainMetadata', parameters: { name: 'other.test.', kind: 'NSEC3PARAM' } }), []);
  t.false(
    atOnce(session.handle(JSON.stringify({ method: 'getDomainKeys', parameters: {} }))).text.includes('"result"'),
    'no name: an error reply (SERVFAIL), never result:false',
  );
});

test('the API gslbd does not offer answers result:false without closing', (t) => {
  const h = harness();
  for (const method of ['getTSIGKey', 'getBeforeAndAfterNamesAbsolute', 'setNotified', 'getUpdatedMasters', 'startTransaction']) {
    const { reply, close } = h.send({ method, parameters: { zonename: 'example.test.', domain_id: EXAMPLE_ID, include_disabled: false } });
    t.deepEqual(reply, { result: false }, method);
    t.false(close, method);
  }
});

test('list: every record of the zone, static as configured and each GSLB record with every endpoint once, for pdnsutil check-zone', (t) => {
  const h = harness();
  const { reply, close } = h.send({ method: 'list', parameters: { zonename: 'Example.test.', domain_id: EXAMPLE_ID, include_disabled: false } });
  t.false(close);
  const rows = reply.result as Record<string, unknown>[];
  const of = (qname: string, qtype: string) => rows.filter((r) => r.qname === qname && r.qtype === qtype).map((r) => r.content);
  // Names inside content without their trailing dot, as PowerDNS stores them (check-zone compares).
  t.deepEqual(rows[0], rr('example.test.', 'SOA', 'ns1.example.test hostmaster.example.test 2024010101 3600 600 604800 60', 300, { domain_id: EXAMPLE_ID }));
  t.deepEqual(of('example.test.', 'NS'), ['ns1.example.test', 'ns2.example.test']);
  t.deepEqual(of('static.example.test.', 'AAAA'), ['2001:db8::20']);
  t.deepEqual(of('*.wild.example.test.', 'A'), ['192.0.2.88']);
  // GSLB: every endpoint of every data center, with the record's TTL, never a client's selection.
  t.deepEqual(of('www.example.test.', 'A'), ['192.0.2.10', '198.51.100.10', '203.0.113.10']);
  t.deepEqual(of('gmx.example.test.', 'MX'), ['10 mx1.example.test', '20 mx2.example.test']);
  t.true(rows.filter((r) => r.qname === 'www.example.test.').every((r) => r.ttl === 30 && r.domain_id === EXAMPLE_ID && !('scopeMask' in r)));
  const texts = rows.map((r) => JSON.stringify([r.qname, r.qtype, r.content]));
  t.is(new Set(texts).size, texts.length, 'no record twice');
  t.deepEqual(h.send({ method: 'list', parameters: { zonename: 'nothere.test.', domain_id: 1 } }).reply, { result: false });
  t.false('result' in h.send({ method: 'list', parameters: {} }).reply, 'no zonename: an error reply');
});

test('lookup ANY of a static name: every RRset, owner as sent, TTLs as numbers, no scopeMask', (t) => {
  const h = harness();
  t.deepEqual(h.lookup('STATIC.Example.test.'), [rr('STATIC.Example.test.', 'A', '192.0.2.20', 60), rr('STATIC.Example.test.', 'AAAA', '2001:db8::20', 60)]);
});

test('lookup of the apex: SOA with domain_id, NS, and the apex GSLB record selected', (t) => {
  const h = harness();
  t.deepEqual(h.lookup('example.test.', '0.0.0.0/0', { remote: '0.0.0.0', zoneId: EXAMPLE_ID }), [
    rr('example.test.', 'SOA', 'ns1.example.test. hostmaster.example.test. 2024010101 3600 600 604800 60', 300, { domain_id: EXAMPLE_ID }),
    rr('example.test.', 'NS', 'ns1.example.test.', 300),
    rr('example.test.', 'NS', 'ns2.example.test.', 300),
    // 0.0.0.0 lies in the unknown block 0.0.0.0/5 of the test data: scope 5.
    // One data center answers every client: no scopeMask (scope 0).
    rr('example.test.', 'A', '192.0.2.101', 20),
  ]);
});

test('record data in presentation form: MX and SRV priorities inside content, TXT quoted and escaped, CNAME absolute', (t) => {
  const h = harness();
  t.deepEqual(h.lookup('mail.example.test.'), [rr('mail.example.test.', 'MX', '10 mx.example.test.', 300)]);
  t.deepEqual(h.lookup('_sip._udp.example.test.'), [rr('_sip._udp.example.test.', 'SRV', '10 20 5060 sip.example.test.', 300)]);
  t.deepEqual(h.lookup('txt.example.test.'), [rr('txt.example.test.', 'TXT', '"say \\"hi\\""', 300)]);
  t.deepEqual(h.lookup('alias.example.test.'), [rr('alias.example.test.', 'CNAME', 'www.example.test.', 300)]);
});

test('replies of static names are built once per snapshot: a reload is seen at once, each spelling echoed', (t) => {
  const h = harness();
  t.deepEqual(h.lookup('static.example.test.'), [rr('static.example.test.', 'A', '192.0.2.20', 60), rr('static.example.test.', 'AAAA', '2001:db8::20', 60)]);
  t.deepEqual(h.lookup('Static.example.test.')[0], rr('Static.example.test.', 'A', '192.0.2.20', 60));
  const config = zonesConfig() as { zones: { records: { name: string; data: string }[] }[] };
  config.zones[0]!.records.find((r) => r.name === 'static' && r.data === '192.0.2.20')!.data = '192.0.2.21';
  h.engine.publish(fixtureSnapshot(undefined, config));
  t.deepEqual(h.lookup('static.example.test.')[0], rr('static.example.test.', 'A', '192.0.2.21', 60));
  t.deepEqual(h.lookup('nx.example.test.'), []);
});

test('GSLB MX record: selected target with its preference inside content', (t) => {
  const h = harness();
  t.deepEqual(h.lookup('gmx.example.test.', '193.0.14.0/24'), [rr('gmx.example.test.', 'MX', '20 mx2.example.test.', 40, { scopeMask: 20 })]);
});

test('GSLB answers per client subnet carry the standalone listener scope as scopeMask', (t) => {
  const h = harness();
  const cases: [string, string, string, number][] = [
    ['8.8.8.0/24', '192.0.2.10', '2001:db8:1::10', 24],
    ['193.0.14.0/24', '198.51.100.10', '2001:db8:2::10', 20],
    ['202.12.27.0/24', '203.0.113.10', '2001:db8:3::10', 23],
    ['8.8.8.8/32', '192.0.2.10', '2001:db8:1::10', 24],
    ['2001:67c:2e8:1::/64', '198.51.100.10', '2001:db8:2::10', 48],
    // IPv4-mapped ECS keeps family 2: scope 96 + 20 (RFC 7871 §7.2.1, as the standalone listener).
    ['::ffff:193.0.14.0/120', '198.51.100.10', '2001:db8:2::10', 116],
  ];
  for (const [subnet, a, aaaa, scope] of cases) {
    t.deepEqual(
      h.lookup('www.example.test.', subnet, { remote: '192.0.2.200' }),
      [rr('www.example.test.', 'A', a, 30, { scopeMask: scope }), rr('www.example.test.', 'AAAA', aaaa, 30, { scopeMask: scope })],
      subnet,
    );
  }
});

test('an ECS /0 source is answered for the resolver address with scope 0 (RFC 7871 §7.1.2, §7.2.1)', (t) => {
  const h = harness();
  t.deepEqual(h.lookup('www.example.test.', '0.0.0.0/0', { remote: '8.8.8.53' }), [
    rr('www.example.test.', 'A', '192.0.2.10', 30),
    rr('www.example.test.', 'AAAA', '2001:db8:1::10', 30),
  ]);
  t.deepEqual(h.lookup('www.example.test.', '::/0', { remote: '193.0.1.1' }), [
    rr('www.example.test.', 'A', '198.51.100.10', 30),
    rr('www.example.test.', 'AAAA', '2001:db8:2::10', 30),
  ]);
});

test('without ECS the resolver is the client and scopeMask still marks the RRset client-dependent', (t) => {
  const h = harness();
  t.deepEqual(h.lookup('www.example.test.', '202.12.26.1/32', { remote: '202.12.26.1' }), [
    rr('www.example.test.', 'A', '203.0.113.10', 30, { scopeMask: 23 }),
    rr('www.example.test.', 'AAAA', '2001:db8:3::10', 30, { scopeMask: 23 }),
  ]);
});

test('an unknown client location gets the default data center, scoped to the unknown block', (t) => {
  const h = harness();
  // 1.1.1.0 lies in the unknown block 0.0.0.0/5 (the test data starts at 8.8.8.0).
  t.deepEqual(h.lookup('www.example.test.', '1.1.1.0/24', { remote: '192.0.2.200' })[0], rr('www.example.test.', 'A', '192.0.2.10', 30, { scopeMask: 5 }));
});

test('qtype other than ANY returns only that type; unknown types return nothing', (t) => {
  const h = harness();
  t.deepEqual(h.lookup('example.test.', '0.0.0.0/0', { remote: '0.0.0.0', qtype: 'SOA' }), [
    rr('example.test.', 'SOA', 'ns1.example.test. hostmaster.example.test. 2024010101 3600 600 604800 60', 300, { domain_id: EXAMPLE_ID }),
  ]);
  t.deepEqual(h.lookup('example.test.', '127.0.0.1/32', { qtype: 'NS' }), [
    rr('example.test.', 'NS', 'ns1.example.test.', 300),
    rr('example.test.', 'NS', 'ns2.example.test.', 300),
  ]);
  t.deepEqual(h.lookup('www.example.test.', '8.8.8.0/24', { qtype: 'AAAA' }), [rr('www.example.test.', 'AAAA', '2001:db8:1::10', 30, { scopeMask: 24 })]);
  t.deepEqual(h.lookup('static.example.test.', '127.0.0.1/32', { qtype: 'DNSKEY' }), []);
});

test('names that do not exist, names outside our zones and escaped names return no records', (t) => {
  const h = harness();
  t.deepEqual(h.lookup('nx.example.test.'), []);
  t.deepEqual(h.lookup('www.elsewhere.test.'), []);
  t.deepEqual(h.lookup('a\\032b.example.test.'), []);
  t.deepEqual(h.lookup('static\\.x.example.test.'), []);
});

test('an empty non-terminal is marked with an ENT record; names below it do not exist', (t) => {
  const h = harness();
  t.deepEqual(h.lookup('ent.example.test.'), [{ qname: 'ent.example.test.', qtype: 'ENT', content: '', ttl: 0 }]);
  t.deepEqual(h.lookup('_udp.example.test.'), [{ qname: '_udp.example.test.', qtype: 'ENT', content: '', ttl: 0 }]);
  t.deepEqual(h.lookup('ent.example.test.', '127.0.0.1/32', { qtype: 'A' }), []);
  t.deepEqual(h.lookup('x.ent.example.test.'), []);
});

test('wildcards are answered literally at their * owner; PowerDNS does the synthesis', (t) => {
  const h = harness();
  t.deepEqual(h.lookup('*.wild.example.test.'), [rr('*.wild.example.test.', 'A', '192.0.2.88', 300)]);
  t.deepEqual(h.lookup('x.wild.example.test.'), []);
  t.deepEqual(h.lookup('wild.example.test.'), [{ qname: 'wild.example.test.', qtype: 'ENT', content: '', ttl: 0 }]);
});

test('zone-id selects the zone a lookup is answered from when it holds the name', (t) => {
  const h = harness();
  t.deepEqual(h.lookup('www.other.test.', '127.0.0.1/32', { zoneId: OTHER_ID }), [rr('www.other.test.', 'A', '192.0.2.70', 300)]);
  // A stale or foreign id falls back to the most specific zone.
  t.deepEqual(h.lookup('www.other.test.', '127.0.0.1/32', { zoneId: EXAMPLE_ID }), [rr('www.other.test.', 'A', '192.0.2.70', 300)]);
  t.deepEqual(h.lookup('www.other.test.', '127.0.0.1/32', { zoneId: 12345 }), [rr('www.other.test.', 'A', '192.0.2.70', 300)]);
});

test("round-robin advances once per query: PowerDNS's two identical lookups share one selection", (t) => {
  const h = harness();
  const answers: string[] = [];
  for (let q = 0; q < 6; q++) {
    const referral = h.lookup('rr.example.test.', '8.8.8.0/24', { remote: '192.0.2.200' });
    const main = h.lookup('rr.example.test.', '8.8.8.0/24', { remote: '192.0.2.200' });
    t.deepEqual(referral, main);
    answers.push(main[0]!.content as string);
  }
  t.deepEqual(answers, ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.1', '192.0.2.2', '192.0.2.3']);
});

test('pairing: a different client, an expired window or a new snapshot selects afresh', (t) => {
  const h = harness();
  const rr1 = (subnet: string): unknown => h.lookup('rr.example.test.', subnet)[0]!.content;
  t.is(rr1('8.8.8.0/24'), '192.0.2.1');
  t.is(rr1('8.8.4.0/24'), '192.0.2.2');
  h.clock.ms += 1001;
  t.is(rr1('8.8.8.0/24'), '192.0.2.3');
  t.is(rr1('8.8.8.0/24'), '192.0.2.3', 'paired with the lookup before');
  t.is(rr1('8.8.8.0/24'), '192.0.2.1');
  h.engine.publish({ ...h.engine.snapshot });
  t.is(rr1('8.8.8.0/24'), '192.0.2.2', 'the entry of the old snapshot is not reused');
});

test('repeated lookup lines are answered from the line: static replies and pairs, counted like any lookup; other spellings pair by parameters', async (t) => {
  const h = harness();
  const line = (qname: string, local: string, realRemote = '8.8.8.0/24'): string =>
    `{"method": "lookup", "parameters": {"local": "${local}", "qname": "${qname}", "qtype": "ANY", "real-remote": "${realRemote}", "remote": "192.0.2.200", "zone-id": ${EXAMPLE_ID}}}`;
  const content = (text: string): unknown => (JSON.parse(text) as { result: { content: string }[] }).result[0]!.content;
  const plain = line('static.example.test.', '0.0.0.0');
  const first = atOnce(h.session.handle(plain)).text;
  t.is(content(first), '192.0.2.20');
  t.is(atOnce(h.session.handle(plain)).text, first);
  t.is(atOnce(h.session.handle(plain)).text, first);
  const www = line('rr.example.test.', '127.0.0.1');
  const answers = [0, 1, 2].map(() => [content(atOnce(h.session.handle(www)).text), content(atOnce(h.session.handle(www)).text)]);
  t.deepEqual(answers, [
    ['192.0.2.1', '192.0.2.1'],
    ['192.0.2.2', '192.0.2.2'],
    ['192.0.2.3', '192.0.2.3'],
  ]);
  t.is(content(atOnce(h.session.handle(www)).text), '192.0.2.1');
  t.is(content(atOnce(h.session.handle(line('rr.example.test.', '127.0.0.2'))).text), '192.0.2.1', 'another local address, same client: paired');
  t.is(content(atOnce(h.session.handle(line('rr.example.test.', '127.0.0.1'))).text), '192.0.2.2', 'the pair was used once');
  t.regex(await h.metric('gslbd_powerdns_requests_total'), /method="lookup",outcome="ok"} 12/);
  t.regex(await h.metric('gslbd_powerdns_selection_reuses_total'), / 4$/);
  t.is(h.deps.metrics.lookups, 12);
});

test('the apex is looked up once per query: every apex lookup with a client advances rotation', (t) => {
  const h = harness();
  const a = (): unknown => h.lookup('example.test.', '8.8.8.0/24', { remote: '192.0.2.200', qtype: 'ANY' }).find((r) => r.qtype === 'A')!.content;
  t.deepEqual([a(), a(), a()], ['192.0.2.101', '192.0.2.102', '192.0.2.101']);
});

test('packet-less lookups (zone SOA, AXFR) see the rotation without advancing it', (t) => {
  const h = harness();
  const apexA = (realRemote: string, remote: string): unknown => h.lookup('example.test.', realRemote, { remote }).find((r) => r.qtype === 'A')!.content;
  t.is(apexA('0.0.0.0/0', '0.0.0.0'), '192.0.2.101');
  t.is(apexA('0.0.0.0/0', '0.0.0.0'), '192.0.2.101');
  t.is(apexA('8.8.8.0/24', '192.0.2.200'), '192.0.2.101');
  t.is(apexA('0.0.0.0/0', '0.0.0.0'), '192.0.2.102');
  t.is(apexA('8.8.8.0/24', '192.0.2.200'), '192.0.2.102');
});

test('a health change shows in the next lookup', (t) => {
  const h = harness();
  const eu = (): unknown => h.lookup('www.example.test.', '193.0.14.0/24', { qtype: 'A' })[0]!.content;
  t.is(eu(), '198.51.100.10');
  const snap = h.engine.snapshot;
  h.engine.publish({ ...snap, env: { ...snap.env, health: healthWithDown('web/eu-west/198.51.100.10') } });
  // eu-west has no live endpoint left: the nearest live DC (us-east, 6200 km) answers.
  t.is(eu(), '192.0.2.10');
  h.engine.publish(snap);
  t.is(eu(), '198.51.100.10');
});

test('every endpoint down: the fail-safe list answers (existence never depends on health)', (t) => {
  const h = harness(healthWithDown('web/us-east/192.0.2.10', 'web/eu-west/198.51.100.10', 'web/ap-northeast/203.0.113.10'));
  t.deepEqual(h.lookup('www.example.test.', '193.0.14.0/24', { qtype: 'A' }), [rr('www.example.test.', 'A', '192.0.2.10', 30)]);
});

test('an engine failure is answered without a result key (SERVFAIL), never result:false or []', (t) => {
  const broken = (): never => {
    throw new Error('health view broken');
  };
  const failing = { endpointUp: broken, endpointHealth: broken, hostStatus: broken, serviceStatus: broken, description: 'broken' };
  const h = harness(failing);
  const { reply, close } = h.send({
    method: 'lookup',
    parameters: { qname: 'www.example.test.', qtype: 'ANY', 'real-remote': '8.8.8.0/24', remote: '127.0.0.1', local: '127.0.0.1', 'zone-id': -1 },
  });
  t.false('result' in reply);
  t.is(reply.error, 'engine error: health view broken');
  t.false(close);
  // Static names do not touch the health view and keep working on the same connection.
  t.deepEqual(h.lookup('static.example.test.', '8.8.8.0/24', { qtype: 'A' }), [rr('static.example.test.', 'A', '192.0.2.20', 60)]);
});

test('invalid lookup parameters are answered without a result key and keep the connection', (t) => {
  const h = harness();
  const bad = [
    { qname: 7, qtype: 'ANY', 'real-remote': '127.0.0.1/32', remote: '127.0.0.1' },
    { qtype: 'ANY', 'real-remote': '127.0.0.1/32', remote: '127.0.0.1' },
    { qname: 'www.example.test.', 'real-remote': '127.0.0.1/32', remote: '127.0.0.1' },
    { qname: 'www.example.test.', qtype: 'ANY', 'real-remote': '127.0.0.1/32' },
  ];
  for (const parameters of bad) {
    const { reply, close } = h.send({ method: 'lookup', parameters });
    t.false('result' in reply, JSON.stringify(parameters));
    t.is(typeof reply.error, 'string');
    t.false(close);
  }
  t.deepEqual(h.lookup('static.example.test.', '127.0.0.1/32', { qtype: 'A' }), [rr('static.example.test.', 'A', '192.0.2.20', 60)]);
});

test('an invalid or missing real-remote is answered for the resolver address (or by the default policy), with one warning per interval', (t) => {
  const lines: { msg: string; suppressed?: number }[] = [];
  const h = harness();
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  const deps = { ...h.deps, warnings: new RateLimitedLog(log) };
  const session = new RemoteBackendSession(deps);
  const lookup = (parameters: Record<string, unknown>) => {
    const r = JSON.parse(
      atOnce(
        session.handle(
          JSON.stringify({ method: 'lookup', parameters: { qname: 'www.example.test.', qtype: 'A', local: '127.0.0.1', 'zone-id': -1, ...parameters } }),
        ),
      ).text,
    );
    return r as { result?: unknown; error?: unknown };
  };
  const forResolver = lookup({ 'real-remote': '193.0.14.1/32', remote: '193.0.14.1' }).result;
  t.truthy(forResolver);
  const invalid: Record<string, unknown>[] = [
    { remote: '193.0.14.1' },
    { 'real-remote': 7, remote: '193.0.14.1' },
    { 'real-remote': '', remote: '193.0.14.1' },
    { 'real-remote': 'not-an-address/24', remote: '193.0.14.1' },
    { 'real-remote': '8.8.8.0/33', remote: '193.0.14.1' },
    { 'real-remote': '8.8.8.0', remote: '193.0.14.1' },
    { 'real-remote': '2001:db8::/129', remote: '193.0.14.1' },
  ];
  for (const parameters of invalid) t.deepEqual(lookup(parameters).result, forResolver, JSON.stringify(parameters));
  const noRemote = lookup({ 'real-remote': 'bad', remote: 'x' });
  t.true(Array.isArray(noRemote.result), 'neither is an address: the default policy answers');
  t.deepEqual(
    lines.map((l) => l.msg),
    ['lookup with an invalid or missing "real-remote": answering for the resolver address (or the default policy)'],
  );
});

test('malformed JSON, non-requests and unknown methods are answered without result and close the connection', (t) => {
  const h = harness();
  for (const line of [
    '{"method": "lookup", "parameters": {',
    'null',
    '[1,2]',
    '42',
    '"lookup"',
    '{"parameters": {}}',
    '{"method": 5}',
    '{"method": "frobnicate", "parameters": {}}',
  ]) {
    const r = atOnce(h.session.handle(line));
    const reply = JSON.parse(r.text) as Record<string, unknown>;
    t.false('result' in reply, line);
    t.true(r.close, line);
  }
});

test('metrics: requests by method and outcome, protocol errors, selection reuses, answers by data center', async (t) => {
  const h = harness();
  h.lookup('www.example.test.', '8.8.8.0/24');
  h.lookup('www.example.test.', '8.8.8.0/24');
  h.send({ method: 'getTSIGKey', parameters: {} });
  atOnce(h.session.handle('not json'));
  t.regex(await h.metric('gslbd_powerdns_requests_total'), /method="lookup",outcome="ok"} 2/);
  t.regex(await h.metric('gslbd_powerdns_requests_total'), /method="getTSIGKey",outcome="not_offered"} 1/);
  t.regex(await h.metric('gslbd_powerdns_protocol_errors_total'), /reason="malformed_json"} 1/);
  t.regex(await h.metric('gslbd_powerdns_selection_reuses_total'), / 1$/);
  // The first lookup is timed (every 16th is); its value waits off the lookup path until the scrape.
  t.regex(await h.metric('gslbd_powerdns_lookup_duration_seconds'), /^gslbd_powerdns_lookup_duration_seconds_count 1$/m);
  // Two GSLB RRsets (A and AAAA) selected once, both from us-east.
  t.regex(await h.metric('gslbd_dc_answers_total'), /dc="us-east"} 2/);
});

test('lookups count by the qtype PowerDNS asked (ANY as ANY, repeated lines too); each GSLB selection counts once for its record', async (t) => {
  const h = harness();
  // The same SOA line twice: the second is a repeated line answered without parsing, still counted as ANY.
  h.lookup('example.test.');
  h.lookup('example.test.');
  // A name below the apex twice, as PowerDNS asks it: the second lookup reuses the first's selection.
  h.lookup('www.example.test.', '8.8.8.0/24');
  h.lookup('www.example.test.', '8.8.8.0/24');
  h.lookup('www.example.test.', '8.8.8.0/24', { qtype: 'AAAA' });
  h.lookup('www.example.test.', '8.8.8.0/24', { qtype: 'TYPE65' });
  h.lookup('www.example.test.', '8.8.8.0/24', { qtype: 'LOC' });
  const types = await h.metric('gslbd_powerdns_lookups_by_qtype_total');
  t.regex(types, /^gslbd_powerdns_lookups_by_qtype_total\{qtype="ANY"\} 4$/m);
  t.regex(types, /^gslbd_powerdns_lookups_by_qtype_total\{qtype="AAAA"\} 1$/m);
  t.regex(types, /^gslbd_powerdns_lookups_by_qtype_total\{qtype="other"\} 2$/m);
  // www holds an A and an AAAA GSLB record: the ANY lookup selected both once (its pair reused them), the AAAA lookup the AAAA again.
  const records = await h.metric('gslbd_gslb_record_selections_total');
  t.regex(records, /^gslbd_gslb_record_selections_total\{record="www.example.test",type="A"\} 1$/m);
  t.regex(records, /^gslbd_gslb_record_selections_total\{record="www.example.test",type="AAAA"\} 2$/m);
});

test('the fixture snapshot is what the tests above assume', (t) => {
  const snap = fixtureSnapshot();
  t.deepEqual(
    [...snap.zones.zones].map((z) => z.name),
    ['example.test', 'other.test'],
  );
  t.is(snap.records.length, 5);
});

test("lookups read from PowerDNS's line format without JSON.parse answer byte for byte what the JSON.parse path answers, and count alike", async (t) => {
  const viaParse = harness();
  const direct = harness();
  const names = [
    'example.test.',
    'WWW.example.test.',
    'www.example.test.',
    'rr.example.test.',
    'static.example.test.',
    'mail.example.test.',
    'gmx.example.test.',
  ];
  const more = [
    'ent.example.test.',
    'nowhere.example.test.',
    '*.wild.example.test.',
    'www.other.test.',
    'outside.test.',
    'txt.example.test.',
    '_sip._udp.example.test.',
  ];
  const clients: [string, string][] = [
    ['0.0.0.0/0', '0.0.0.0'],
    ['8.8.8.0/24', '192.0.2.200'],
    ['193.0.0.0/20', '192.0.2.200'],
    ['202.12.26.0/23', '127.0.0.1'],
    ['2001:67c:2e8::/48', '::1'],
    ['127.0.0.1/32', '127.0.0.1'],
    ['::ffff:8.8.8.0/120', '127.0.0.1'],
    ['9.9.9.0/0', '127.0.0.1'],
  ];
  let compared = 0;
  for (const qname of [...names, ...more]) {
    for (const [realRemote, remote] of clients) {
      for (const qtype of ['ANY', 'A', 'MX', 'SOA']) {
        for (const zoneId of [-1, EXAMPLE_ID, OTHER_ID]) {
          const parameters = { local: '127.0.0.1', qname, qtype, 'real-remote': realRemote, remote, 'zone-id': zoneId };
          const compact = JSON.stringify({ method: 'lookup', parameters });
          const json11 = json11Line('lookup', parameters);
          // Twice, as PowerDNS does for a name below the apex (the second is paired).
          for (let i = 0; i < 2; i++) {
            const expected = atOnce(viaParse.session.handle(compact));
            t.deepEqual(atOnce(direct.session.handle(json11)), expected, json11);
            compared++;
          }
        }
      }
    }
  }
  t.is(compared, 14 * 8 * 4 * 3 * 2);
  for (const name of [
    'gslbd_powerdns_requests_total',
    'gslbd_powerdns_selection_reuses_total',
    'gslbd_dc_answers_total',
    'gslbd_powerdns_lookups_by_qtype_total',
    'gslbd_gslb_record_selections_total',
  ]) {
    t.is(await direct.metric(name), await viaParse.metric(name), name);
  }
  t.regex(await direct.metric('gslbd_powerdns_requests_total'), /method="lookup",outcome="ok"} 2688/);
});

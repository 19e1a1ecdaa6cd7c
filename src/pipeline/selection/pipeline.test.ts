import test from 'ava';
import { prefixLocationDb } from '../../../test/support/prefixLocationDb.js';
import { clientOf, fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { downHealth } from '../../../test/support/selectionHarness.js';
import type { ResolveContext } from '../../core/views/resolveContext.js';
import { runSelection } from './pipeline.js';
import { compileRecord } from '../compileRecord.js';
import { BALANCE_ALGORITHMS } from '../../capabilities/balance/registry.js';
import { TraceSink } from './trace.js';
import type { SelectionResult } from './stage.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';

/**
 * The selection pipeline on a fixture built in code: five data centers, a location map of a few
 * /16s, and records that differ in pickDcCount, balance algorithm, default DCs and fail-safe.
 * Tables read as: client → data centers picked → answer data → ECS scope.
 */

const CONFIG = `
${EXAMPLE_ZONE}
datacenters:
  - { name: us-east, location: North America.US, lat: 39.0, lon: -77.5 }
  - { name: us-west, location: NA.USA, lat: 37.4, lon: -122.1 }
  - { name: eu-west, location: Europe.NL, lat: 52.4, lon: 4.9 }
  - { name: eu-central, location: EU.DEU, lat: 50.1, lon: 8.7 }
  - { name: ap-northeast, location: asia.jp, lat: 35.7, lon: 139.7 }
services:
  - name: web
    endpoints:
      - { dc: us-east, address: 192.0.2.1 }
      - { dc: us-west, address: 192.0.2.2 }
      - { dc: eu-west, address: 192.0.2.3 }
      - { dc: eu-central, address: 192.0.2.4 }
      - { dc: ap-northeast, address: 192.0.2.5 }
      - { dc: ap-northeast, address: 192.0.2.99, enabled: false }
      - { dc: eu-west, address: "2001:db8::3" }
  - name: pool
    endpoints:
      - { dc: eu-west, address: 203.0.113.1 }
      - { dc: eu-west, address: 203.0.113.2 }
      - { dc: eu-west, address: 203.0.113.3 }
      - { dc: us-east, address: 203.0.113.10 }
records:
  - name: www.example.test
    type: A
    ttl: 30
    service: web
    policy: { type: static-proximity, default: [us-east] }
    failsafe: [198.51.100.1, 198.51.100.2]
    failsafeTtl: 5
  - { name: two.example.test, type: A, service: web, policy: { type: static-proximity, pickDcCount: 2 } }
  - { name: five.example.test, type: A, service: web, policy: { type: static-proximity, pickDcCount: 5 } }
  - { name: v6.example.test, type: AAAA, service: web }
  - { name: pool.example.test, type: A, ttl: 20, service: pool, policy: { type: static-proximity, default: [eu-west] } }
  - { name: poolall.example.test, type: A, service: pool, policy: { type: static-proximity, balanceAlgorithm: all, default: [eu-west] } }
`;

const geo = prefixLocationDb([
  { cidr: '10.1.0.0/16', location: 'EU.NL.NH.Amsterdam', lat: 52.37, lon: 4.9 },
  { cidr: '10.2.0.0/16', location: 'Europe.ES.MD.Madrid', lat: 40.42, lon: -3.7 },
  { cidr: '10.3.0.0/16', location: 'NA.US.CA.Los Angeles', lat: 34.05, lon: -118.24 },
  { cidr: '10.4.0.0/16', location: 'OC.AU.NSW.Sydney', lat: -33.87, lon: 151.21 },
  { cidr: '10.5.0.0/16', location: 'NA.US' }, // no coordinates
  { cidr: '10.5.128.0/24', location: 'NA.USA.NY.New York' }, // nested: a hole in 10.5/16
  { cidr: '2001:db8:1::/48', location: 'AS.JPN.13.Tokyo', lat: 35.69, lon: 139.69 },
]);

interface Options {
  readonly down?: readonly string[];
  readonly ctx?: ResolveContext;
  readonly trace?: TraceSink;
}

function select(name: string, client: string, options: Options = {}): SelectionResult {
  const snap = options.down ? snapshotOf(CONFIG, geo, downHealth(options.down)) : snapshotOf(CONFIG, geo);
  const record = snap.records.find((r) => r.name === name);
  if (!record) throw new Error(`no record ${name}`);
  return runSelection(record, clientOf(client), { ...snap.env, ctx: options.ctx ?? fixedContext() }, options.trace);
}

const WEB = (dc: string): string =>
  `web/${dc}/${{ 'us-east': '192.0.2.1', 'us-west': '192.0.2.2', 'eu-west': '192.0.2.3', 'eu-central': '192.0.2.4', 'ap-northeast': '192.0.2.5' }[dc]}`;
const ALL_DCS = ['us-east', 'us-west', 'eu-west', 'eu-central', 'ap-northeast'];

// client → picked DCs, answer, scope (pickDcCount 1, static proximity).
const proximity: [client: string, why: string, dcs: string[], data: string[], scope: number][] = [
  ['10.1.2.0/24', 'EU.NL shares two qualifiers with eu-west', ['eu-west'], ['192.0.2.3'], 16],
  ['10.2.0.0/24', 'EU only: eu-central (1446 km) is nearer than eu-west (1484 km)', ['eu-central'], ['192.0.2.4'], 16],
  ['10.3.9.9', 'NA.US: us-west is nearer than us-east (resolver address, no ECS)', ['us-west'], ['192.0.2.2'], 16],
  ['10.4.0.0/16', 'nothing shared: nearest by coordinates', ['ap-northeast'], ['192.0.2.5'], 16],
  [
    '10.5.128.0/24',
    'NA.US.NY (nested block): the two US DCs tie, first by rotation; the same ranking as its NA.US /16, so one answer class: scope 16',
    ['us-east'],
    ['192.0.2.1'],
    16,
  ],
  ['10.5.0.0/24', 'NA.US beside the nested /24: merged with it by answer class', ['us-east'], ['192.0.2.1'], 16],
  ['11.0.0.0/24', 'unknown location → the default DC', ['us-east'], ['192.0.2.1'], 8],
  ['2001:db8:1::/48', 'IPv6 client located in IPv6 data', ['ap-northeast'], ['192.0.2.5'], 48],
  ['::ffff:10.1.0.0/112', 'IPv4-mapped is IPv4', ['eu-west'], ['192.0.2.3'], 16],
  ['2001:db8:2::/48', 'IPv6 without data → default', ['us-east'], ['192.0.2.1'], 47],
];
for (const [client, why, dcs, data, scope] of proximity) {
  test(`www A for ${client}: ${why}`, (t) => {
    const r = select('www.example.test', client);
    t.deepEqual(r, { dcs, data, ttl: 30, scope });
  });
}

test('a tie is split by rotation: the two US DCs alternate', (t) => {
  const ctx = fixedContext();
  const picks = Array.from({ length: 4 }, () => select('www.example.test', '10.5.0.1', { ctx }).dcs[0]);
  t.deepEqual(picks, ['us-east', 'us-west', 'us-east', 'us-west']);
});

test('unknown location with the default DC down → every live DC, rotating', (t) => {
  const ctx = fixedContext();
  const down = [WEB('us-east')];
  const picks = Array.from({ length: 8 }, () => select('www.example.test', '11.1.1.1', { ctx, down }).dcs[0]);
  t.deepEqual(picks, ['us-west', 'eu-west', 'eu-central', 'ap-northeast', 'us-west', 'eu-west', 'eu-central', 'ap-northeast']);
});

test('unknown location without default DCs → every live DC (never the first in the config only)', (t) => {
  const r = select('five.example.test', '11.1.1.1');
  t.deepEqual(r.dcs, ALL_DCS);
  const ctx = fixedContext();
  const firstPicks = Array.from({ length: 5 }, () => select('two.example.test', '11.1.1.1', { ctx }).dcs[0]);
  t.deepEqual(firstPicks, ALL_DCS);
});

// pickDcCount: ranked order for an Amsterdam client is eu-west, eu-central, us-east, us-west, ap-northeast.
const pickCases: [record: string, down: string[], dcs: string[]][] = [
  ['www.example.test', [], ['eu-west']],
  ['two.example.test', [], ['eu-west', 'eu-central']],
  ['five.example.test', [], ['eu-west', 'eu-central', 'us-east', 'us-west', 'ap-northeast']],
  ['five.example.test', ['us-east', 'us-west', 'ap-northeast'], ['eu-west', 'eu-central']],
  ['two.example.test', ['eu-west'], ['eu-central', 'us-east']],
  ['two.example.test', ['eu-west', 'eu-central', 'us-east', 'us-west'], ['ap-northeast']],
];
for (const [record, down, dcs] of pickCases) {
  test(`${record} for Amsterdam with ${down.length ? down.join(', ') : 'nothing'} down → ${dcs.join(', ')}`, (t) => {
    const r = select(record, '10.1.0.0/24', { down: down.map(WEB) });
    t.deepEqual(r.dcs, dcs);
    t.is(r.data.length, dcs.length, 'one address per picked DC, never an invented one');
    t.is(r.scope, 16);
  });
}

test('round-robin over 3 endpoints: exactly 10 each over 30 queries, in configuration order', (t) => {
  const ctx = fixedContext();
  const answers = Array.from({ length: 30 }, () => select('pool.example.test', '10.1.0.0/24', { ctx }).data[0] as string);
  const counts = new Map<string, number>();
  for (const a of answers) counts.set(a, (counts.get(a) ?? 0) + 1);
  t.deepEqual(
    [...counts],
    [
      ['203.0.113.1', 10],
      ['203.0.113.2', 10],
      ['203.0.113.3', 10],
    ],
  );
  t.deepEqual(answers.slice(0, 4), ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.1']);
});

test('round-robin continues over the survivors when an endpoint is down', (t) => {
  const ctx = fixedContext();
  const down = ['pool/eu-west/203.0.113.2'];
  const answers = Array.from({ length: 4 }, () => select('pool.example.test', '10.1.0.0/24', { ctx, down }).data[0]);
  t.deepEqual(answers, ['203.0.113.1', '203.0.113.3', '203.0.113.1', '203.0.113.3']);
});

test('rotation of one record does not advance another', (t) => {
  const ctx = fixedContext();
  select('pool.example.test', '10.1.0.0/24', { ctx });
  t.deepEqual(select('poolall.example.test', '10.1.0.0/24', { ctx }).data, ['203.0.113.1', '203.0.113.2', '203.0.113.3']);
  t.deepEqual(select('pool.example.test', '10.1.0.0/24', { ctx }).data, ['203.0.113.2']);
});

test('`all` answers every live endpoint of the DC in configuration order', (t) => {
  t.deepEqual(select('poolall.example.test', '10.1.0.0/24'), { dcs: ['eu-west'], data: ['203.0.113.1', '203.0.113.2', '203.0.113.3'], ttl: 30, scope: 16 });
  t.deepEqual(select('poolall.example.test', '10.1.0.0/24', { down: ['pool/eu-west/203.0.113.1'] }).data, ['203.0.113.2', '203.0.113.3']);
});

test('everything down → the fail-safe list with its TTL, scope 0, no DC', (t) => {
  t.deepEqual(select('www.example.test', '10.1.0.0/24', { down: ALL_DCS.map(WEB) }), {
    dcs: [],
    data: ['198.51.100.1', '198.51.100.2'],
    ttl: 5,
    scope: 0,
  });
});

test('everything down without a fail-safe list → fail-open: selection as if every endpoint were up', (t) => {
  // The default all-down policy without a fail-safe list is fail-open (src/capabilities/health/README.md).
  t.deepEqual(select('two.example.test', '10.1.0.0/24', { down: ALL_DCS.map(WEB) }), {
    dcs: ['eu-west', 'eu-central'],
    data: ['192.0.2.3', '192.0.2.4'],
    ttl: 30,
    scope: 16,
  });
});

test('disabled endpoints and endpoints of the other family are never candidates', (t) => {
  const snap = snapshotOf(CONFIG, geo);
  const www = snap.records.find((r) => r.name === 'www.example.test')!;
  t.deepEqual(
    www.candidates.map((c) => [c.dc.name, c.endpoints.map((e) => e.data)]),
    ALL_DCS.map((dc) => [dc, [WEB(dc).split('/')[2]]]),
  );
  // One candidate: every location, known or not, decides alike (that DC, or the all-down policy).
  t.deepEqual(select('v6.example.test', '10.4.0.0/16'), { dcs: ['eu-west'], data: ['2001:db8::3'], ttl: 30, scope: 0 });
});

test('a record whose only candidate is one DC: every location is one answer class, so the answer is not client-dependent', (t) => {
  // Unknown locations get rule 5's group (the default DCs, none of which can answer AAAA, then
  // every live DC): that one DC, as for a known location, under every health state.
  for (const client of ['10.0.0.0/24', '10.1.0.0/24', '10.2.0.0/24', '11.0.0.0/24']) t.is(select('v6.example.test', client).scope, 0, client);
  t.is(select('v6.example.test', '10.1.0.0/24', { down: ['web/eu-west/2001:db8::3'] }).scope, 0);
});

test('the trace exists only when asked for, one step per stage in slot order', (t) => {
  const trace = new TraceSink();
  select('www.example.test', '10.1.0.0/24', { trace });
  t.deepEqual(
    trace.steps.map((s) => s.stage),
    ['candidates', 'health', 'scope', 'static-proximity', 'pick-dcs', 'balance'],
  );
  t.like(trace.steps[3], { clientLocation: 'EU.NL.NH.AMSTERDAM', groups: [['eu-west'], ['eu-central'], ['us-east'], ['us-west'], ['ap-northeast']] });
  const failsafe = new TraceSink();
  select('www.example.test', '10.1.0.0/24', { trace: failsafe, down: ALL_DCS.map(WEB) });
  t.like(failsafe.steps.at(-1), { stage: 'failsafe', used: 'fail-safe list', ttl: 5 });
});

test("a record's pipeline: the query path's stages and the capabilities', in slot order", (t) => {
  const snap = snapshotOf(CONFIG, geo);
  const www = snap.records.find((r) => r.name === 'www.example.test')!;
  t.deepEqual(
    www.pipeline.map((s) => s.slot),
    ['candidates', 'gate', 'rank', 'pick', 'balance', 'fallback'],
  );
  const rec = {
    name: 'x.example.test',
    type: 'A',
    ttl: 30,
    service: 'web',
    policy: { type: 'static-proximity', pickDcCount: 1, balanceAlgorithm: 'nope', default: [] },
    failsafe: [],
  } as never;
  const algorithms = new Map(BALANCE_ALGORITHMS.map((a) => [a.name, a]));
  const comp = {
    config: snap.config,
    capabilities: [],
    algorithms,
    dataCenters: snap.dataCenters,
    dcByName: new Map(snap.dataCenters.map((d) => [d.name, d])),
    geo: undefined,
    reuseDecisions: true,
  };
  t.throws(() => compileRecord(rec, snap.config.services[0]!, comp), {
    message: 'unknown balance algorithm "nope"',
  });
});

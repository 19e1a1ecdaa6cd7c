import test from 'ava';
import { ConfigError } from '../../core/config/load.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { parseIp } from '../../core/net/ipAddress.js';
import { allUpHealthView } from '../../core/views/healthView.js';
import { resolve } from '../../pipeline/zones/authoritative.js';
import { addresses, ask, contextAt, snapshotOf, viewOf, ZONE_YAML } from '../../../test/health/gslbFixture.js';
import { replaceOnce } from '../../../test/support/replaceOnce.js';

/** Two DCs with two endpoints each; `health` is the record's health block (YAML flow map). */
function fourEndpoints(health: string, extra = ''): string {
  return `${ZONE_YAML}
datacenters:
  - { name: dc-a, site: site-a }
  - { name: dc-b, site: site-b }
services:
  - name: web
    endpoints:
      - { dc: dc-a, address: 192.0.2.11 }
      - { dc: dc-a, address: 192.0.2.12 }
      - { dc: dc-b, address: 198.51.100.21 }
      - { dc: dc-b, address: 198.51.100.22 }
records:
  - name: www.example.test
    type: A
    ttl: 30
    service: web
    policy: { type: static-proximity, pickDcCount: 8, balanceAlgorithm: all }
    health: ${health}
${extra}`;
}

const TIERS = '{ tiers: [{ endpoints: [192.0.2.11, 192.0.2.12] }, { endpoints: [198.51.100.21, 198.51.100.22] }], allDown: fail-open }';
const A11 = 'web/dc-a/192.0.2.11';
const A12 = 'web/dc-a/192.0.2.12';
const B21 = 'web/dc-b/198.51.100.21';
const B22 = 'web/dc-b/198.51.100.22';
const down = (...keys: string[]) => Object.fromEntries(keys.map((k) => [k, 'down' as const]));

test('tiers: tier 1 answers while one of it is up; tier 2 only when tier 1 is all down', (t) => {
  t.deepEqual(addresses(ask(snapshotOf(fourEndpoints(TIERS), allUpHealthView), 'www.example.test')), ['192.0.2.11', '192.0.2.12']);
  t.deepEqual(addresses(ask(snapshotOf(fourEndpoints(TIERS), viewOf(down(A11))), 'www.example.test')), ['192.0.2.12']);
  t.deepEqual(addresses(ask(snapshotOf(fourEndpoints(TIERS), viewOf(down(A11, A12))), 'www.example.test')), ['198.51.100.21', '198.51.100.22']);
  t.deepEqual(addresses(ask(snapshotOf(fourEndpoints(TIERS), viewOf(down(A11, A12, B21))), 'www.example.test')), ['198.51.100.22']);
});

test('tiers, all four down, fail-open: tier 1 only, never all four (and the TTL is the record TTL)', (t) => {
  const a = ask(snapshotOf(fourEndpoints(TIERS), viewOf(down(A11, A12, B21, B22))), 'www.example.test');
  t.is(a.rcode, 0);
  t.deepEqual(addresses(a), ['192.0.2.11', '192.0.2.12']);
  t.deepEqual(a.ttls, [30, 30]);
  const health = a.explain[0]!.steps.find((s) => s.stage === 'health')!;
  t.is(health.note, 'all down: fail-open answers tier 1 as if up');
});

test('fail-open without tiers answers every enabled endpoint as if up, through the normal balance', (t) => {
  const a = ask(snapshotOf(fourEndpoints('{ allDown: fail-open }'), viewOf(down(A11, A12, B21, B22))), 'www.example.test');
  t.deepEqual(addresses(a), ['192.0.2.11', '192.0.2.12', '198.51.100.21', '198.51.100.22']);
});

test('fail-open leaves forced-down and drained endpoints out even when all are down', (t) => {
  const view = viewOf(down(A11, A12, B21, B22), { overrides: { [A11]: 'force-down' } });
  t.deepEqual(addresses(ask(snapshotOf(fourEndpoints(TIERS), view), 'www.example.test')), ['192.0.2.12']);
});

/** One DC with 12 endpoints, a second DC with 2, tiers by DC. */
function twelve(threshold: string): string {
  const eps = Array.from({ length: 12 }, (_, i) => `      - { dc: big, address: 192.0.2.${i + 1} }`).join('\n');
  return `${ZONE_YAML}
datacenters: [{ name: big }, { name: next }]
services:
  - name: web
    endpoints:
${eps}
      - { dc: next, address: 198.51.100.1 }
      - { dc: next, address: 198.51.100.2 }
records:
  - name: www.example.test
    type: A
    service: web
    policy: { type: static-proximity, pickDcCount: 8, balanceAlgorithm: all }
    health: { tiers: [{ dcs: [big] }, { dcs: [next] }]${threshold} }
`;
}
const sevenDown = down(...[1, 3, 4, 6, 8, 9, 11].map((i) => `web/big/192.0.2.${i}`));

test('12 endpoints, 7 down, no threshold: only the 5 live ones, never the dead ones', (t) => {
  const a = ask(snapshotOf(twelve(''), viewOf(sevenDown)), 'www.example.test');
  t.deepEqual(addresses(a), ['192.0.2.10', '192.0.2.12', '192.0.2.2', '192.0.2.5', '192.0.2.7']);
});

test('12 endpoints, 7 down, threshold 0.5: below threshold, failover to the next DC', (t) => {
  const a = ask(snapshotOf(twelve(', threshold: 0.5'), viewOf(sevenDown)), 'www.example.test');
  t.deepEqual(addresses(a), ['198.51.100.1', '198.51.100.2']);
  const health = a.explain[0]!.steps.find((s) => s.stage === 'health')!;
  t.deepEqual(health.tiers, [
    { tier: 'tier 1', upWeight: 5, totalWeight: 12, threshold: 0.5, up: false },
    { tier: 'tier 2', upWeight: 2, totalWeight: 2, threshold: 0.5, up: true },
  ]);
  // Exactly at the threshold counts as up: 6 of 12.
  const sixDown = down(...[1, 3, 4, 6, 8, 9].map((i) => `web/big/192.0.2.${i}`));
  t.is(addresses(ask(snapshotOf(twelve(', threshold: 0.5'), viewOf(sixDown)), 'www.example.test')).length, 6);
});

test('threshold everywhere missed: the first tier with live endpoints answers with those, not the dead', (t) => {
  const view = viewOf({ ...sevenDown, 'web/next/198.51.100.1': 'down', 'web/next/198.51.100.2': 'down' });
  const a = ask(snapshotOf(twelve(', threshold: 0.5'), view), 'www.example.test');
  t.deepEqual(addresses(a), ['192.0.2.10', '192.0.2.12', '192.0.2.2', '192.0.2.5', '192.0.2.7']);
});

test('a weighted tier reports down by weight: the threshold counts endpoint weights', (t) => {
  const yaml = `${ZONE_YAML}
datacenters: [{ name: a }, { name: b }]
services:
  - name: web
    endpoints:
      - { dc: a, address: 192.0.2.1, weight: 8 }
      - { dc: a, address: 192.0.2.2, weight: 1 }
      - { dc: a, address: 192.0.2.3, weight: 1 }
      - { dc: b, address: 198.51.100.1 }
records:
  - name: www.example.test
    type: A
    service: web
    policy: { type: static-proximity, pickDcCount: 8, balanceAlgorithm: all }
    health: { tiers: [{ dcs: [a], threshold: 0.3 }, { dcs: [b] }] }
`;
  // Two of three endpoints up, but only 2/10 of the weight: below 0.3, so tier 2.
  t.deepEqual(addresses(ask(snapshotOf(yaml, viewOf({ 'web/a/192.0.2.1': 'down' })), 'www.example.test')), ['198.51.100.1']);
  t.deepEqual(addresses(ask(snapshotOf(yaml, viewOf({ 'web/a/192.0.2.2': 'down', 'web/a/192.0.2.3': 'down' })), 'www.example.test')), ['192.0.2.1']);
});

test('fail-closed: NODATA with the SOA at the configured negative TTL; a CNAME in front changes nothing', (t) => {
  const snap = snapshotOf(fourEndpoints('{ allDown: fail-closed, negativeTtl: 7 }'), viewOf(down(A11, A12, B21, B22)));
  const a = ask(snap, 'www.example.test');
  t.deepEqual(a, { ...a, rcode: 0, answers: [], authority: ['SOA 7'] });
  const viaAlias = ask(snap, 'alias.example.test');
  t.is(viaAlias.rcode, 0);
  t.deepEqual(viaAlias.answers, ['CNAME www.example.test.']);
  t.deepEqual(viaAlias.authority, ['SOA 7']);
  // The zone's own negative TTL (min(SOA TTL, minimum) = 60) caps a longer configured one.
  const capped = snapshotOf(fourEndpoints('{ allDown: fail-closed, negativeTtl: 3600 }'), viewOf(down(A11, A12, B21, B22)));
  t.deepEqual(ask(capped, 'www.example.test').authority, ['SOA 60']);
});

test('failsafe: the fail-safe list with its own TTL; a CNAME in front changes nothing', (t) => {
  const yaml = replaceOnce(fourEndpoints('{ allDown: failsafe }'), '    health:', '    failsafe: [203.0.113.99]\n    failsafeTtl: 5\n    health:');
  const snap = snapshotOf(yaml, viewOf(down(A11, A12, B21, B22)));
  const a = ask(snap, 'www.example.test');
  t.deepEqual(a.answers, ['A 203.0.113.99']);
  t.deepEqual(a.ttls, [5]);
  t.deepEqual(a.authority, []);
  const viaAlias = ask(snap, 'alias.example.test');
  t.deepEqual(viaAlias.answers, ['CNAME www.example.test.', 'A 203.0.113.99']);
  t.deepEqual(viaAlias.ttls, [300, 5]);
  // While one endpoint is up the list is not used.
  t.deepEqual(addresses(ask(snapshotOf(yaml, viewOf(down(A11, A12, B21))), 'www.example.test')), ['198.51.100.22']);
});

test('the default all-down policy is failsafe with a fail-safe list, fail-open without', (t) => {
  const withList = replaceOnce(fourEndpoints('{}'), '    health:', '    failsafe: [203.0.113.99]\n    health:');
  t.deepEqual(ask(snapshotOf(withList, viewOf(down(A11, A12, B21, B22))), 'www.example.test').answers, ['A 203.0.113.99']);
  t.is(addresses(ask(snapshotOf(fourEndpoints('{}'), viewOf(down(A11, A12, B21, B22))), 'www.example.test')).length, 4);
});

test('cold start unknown-up (default): unknown endpoints answer; unknown never leads to all-down', (t) => {
  const unknown = { [A11]: 'unknown' as const, [A12]: 'unknown' as const, [B21]: 'unknown' as const, [B22]: 'down' as const };
  const snap = snapshotOf(fourEndpoints('{ allDown: fail-closed }'), viewOf(unknown));
  t.deepEqual(addresses(ask(snap, 'www.example.test')), ['192.0.2.11', '192.0.2.12', '198.51.100.21']);
});

test('cold start wait: unknown endpoints wait while a checked one is up, for at most waitMs', (t) => {
  const view = viewOf({ [A11]: 'up', [A12]: 'unknown', [B21]: 'unknown', [B22]: 'down' }, { sinceMs: 1_000_000 });
  const snap = snapshotOf(fourEndpoints('{ coldStart: { waitMs: 3000 }, allDown: fail-closed }'), view);
  t.deepEqual(addresses(ask(snap, 'www.example.test', 'A', contextAt(1_000_500))), ['192.0.2.11']);
  t.deepEqual(addresses(ask(snap, 'www.example.test', 'A', contextAt(1_002_999))), ['192.0.2.11']);
  t.deepEqual(addresses(ask(snap, 'www.example.test', 'A', contextAt(1_003_000))), ['192.0.2.11', '192.0.2.12', '198.51.100.21']);
  // Nothing with a result is up: the unknown ones answer at once rather than the all-down policy.
  const allUnknown = viewOf({ [A11]: 'unknown', [A12]: 'unknown', [B21]: 'down', [B22]: 'down' }, { sinceMs: 1_000_000 });
  const a = ask(snapshotOf(fourEndpoints('{ coldStart: { waitMs: 3000 }, allDown: fail-closed }'), allUnknown), 'www.example.test', 'A', contextAt(1_000_100));
  t.deepEqual(addresses(a), ['192.0.2.11', '192.0.2.12']);
});

test('the memoised outcome expires with the cold-start window (same snapshot, later queries)', (t) => {
  const view = viewOf({ [A11]: 'up', [A12]: 'unknown', [B21]: 'up', [B22]: 'up' }, { sinceMs: 1_000_000 });
  const snap = snapshotOf(fourEndpoints('{ coldStart: { waitMs: 1000 } }'), view);
  const quiet = (nowMs: number): string[] =>
    resolve(
      { name: 'www.example.test', type: 1, client: { address: parseIp('192.0.2.200'), sourcePrefix: 32, fromEcs: false }, transport: 'udp' },
      snap,
      contextAt(nowMs),
    )
      .answers.map((r) => r.data as string)
      .sort();
  t.deepEqual(quiet(1_000_100), ['192.0.2.11', '198.51.100.21', '198.51.100.22']);
  t.deepEqual(quiet(1_000_200), ['192.0.2.11', '198.51.100.21', '198.51.100.22']);
  t.deepEqual(quiet(1_001_000), ['192.0.2.11', '192.0.2.12', '198.51.100.21', '198.51.100.22']);
});

test('overrides: force-down and drain leave out, force-up answers even when down or its DC is down', (t) => {
  const snap = (v: Parameters<typeof viewOf>) => snapshotOf(fourEndpoints('{}'), viewOf(...v));
  t.deepEqual(addresses(ask(snap([{}, { overrides: { [A11]: 'force-down', [B21]: 'drain' } }]), 'www.example.test')), ['192.0.2.12', '198.51.100.22']);
  t.deepEqual(addresses(ask(snap([down(A11), { overrides: { [A11]: 'force-up' } }]), 'www.example.test')), [
    '192.0.2.11',
    '192.0.2.12',
    '198.51.100.21',
    '198.51.100.22',
  ]);
  t.deepEqual(addresses(ask(snap([{}, { hosts: { 'dc-a': 'down' } }]), 'www.example.test')), ['198.51.100.21', '198.51.100.22']);
  t.deepEqual(addresses(ask(snap([{}, { hosts: { 'dc-a': 'down' }, overrides: { [A12]: 'force-up' } }]), 'www.example.test')), [
    '192.0.2.12',
    '198.51.100.21',
    '198.51.100.22',
  ]);
  t.deepEqual(addresses(ask(snap([{}, { hosts: { 'dc-a': 'unknown' } }]), 'www.example.test')).length, 4, 'an unknown DC status does not take endpoints out');
});

test('local-first: local site up → local address; local site down → a peer site, and the trace says so', (t) => {
  const yaml = fourEndpoints('{ localFirst: true }', 'site: site-b');
  const up = ask(snapshotOf(yaml, allUpHealthView), 'www.example.test');
  t.deepEqual(addresses(up), ['198.51.100.21', '198.51.100.22']);
  t.is(up.explain[0]!.steps.find((s) => s.stage === 'health')!.answering, 'local site site-b');
  const a = ask(snapshotOf(yaml, viewOf(down(B21, B22))), 'www.example.test');
  t.deepEqual(addresses(a), ['192.0.2.11', '192.0.2.12']);
  const step = a.explain[0]!.steps.find((s) => s.stage === 'health')!;
  t.is(step.answering, 'peer sites');
  t.is(step.note, 'local site down, answering peer');
  t.deepEqual(addresses(ask(snapshotOf(yaml, viewOf(down(B21))), 'www.example.test')), ['198.51.100.22']);
});

test('TTL: one TTL per RRset; downTtl while any endpoint is down; never above the configured TTL', (t) => {
  const yaml = fourEndpoints('{ downTtl: 5 }');
  const allUp = ask(snapshotOf(yaml, allUpHealthView), 'www.example.test');
  t.deepEqual(allUp.ttls, [30, 30, 30, 30]);
  const oneDown = ask(snapshotOf(yaml, viewOf(down(B22))), 'www.example.test');
  t.deepEqual(oneDown.ttls, [5, 5, 5]);
  const longer = ask(snapshotOf(fourEndpoints('{ downTtl: 300 }'), viewOf(down(B22))), 'www.example.test');
  t.deepEqual(longer.ttls, [30, 30, 30]);
  const unknownOnly = ask(snapshotOf(yaml, viewOf({ [B22]: 'unknown' })), 'www.example.test');
  t.deepEqual(unknownOnly.ttls, [30, 30, 30, 30], 'unknown is not down');
});

test('TTLs of 2^31 and above are rejected (RFC 2181 §8)', (t) => {
  for (const field of ['ttl: 2147483648', 'failsafeTtl: 2147483648']) {
    const e = t.throws(() => parseConfigText(replaceOnce(fourEndpoints('{}'), '    ttl: 30\n', `    ${field}\n`)), { instanceOf: ConfigError });
    t.regex(e!.message, /records\[0\]\.(ttl|failsafeTtl)/);
  }
  for (const field of ['negativeTtl: 2147483648', 'downTtl: 4294967295']) {
    const e = t.throws(() => parseConfigText(fourEndpoints(`{ ${field} }`)), { instanceOf: ConfigError });
    t.regex(e!.message, /records\[0\]\.health\.(negativeTtl|downTtl)/);
  }
  t.notThrows(() => parseConfigText(fourEndpoints('{ downTtl: 2147483647 }')));
});

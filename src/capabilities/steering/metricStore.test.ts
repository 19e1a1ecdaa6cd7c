import test from 'ava';
import { metricsSchema } from './metricsSchema.js';
import { parseIp } from '../../core/net/ipAddress.js';
import { clientNetworkKey } from '../../core/views/metricView.js';
import { metricId } from './catalog.js';
import { ingestBatch } from './ingest.js';
import { MetricStore } from './metricStore.js';

const T0 = 1_700_000_000_000;
const CPU = metricId('host', 'cpu');
const STATUS = metricId('host', 'status');
const HOPS = metricId('client', 'hops');
const MOS = metricId('client', 'mos');

function store(metrics: unknown = {}, dcs = ['a', 'b'], services = ['web']): MetricStore {
  return new MetricStore(metricsSchema.parse(metrics), dcs, services);
}
const push = (s: MetricStore, source: 'host' | 'service' | 'client', samples: unknown[], now = T0) => ingestBatch(s, source, { samples }, now);
const key = (s: MetricStore, address: string) => clientNetworkKey(parseIp(address), s.clientNetworkPrefix);

test('host metrics: fresh until the staleness limit (default three 30 s intervals), then NaN', (t) => {
  const s = store();
  t.deepEqual(push(s, 'host', [{ dc: 'a', cpu: 42.5 }]), { ok: true, accepted: 1 });
  t.is(s.read('host', '', 'a', CPU, T0 + 90_000), 42.5);
  t.true(Number.isNaN(s.read('host', '', 'a', CPU, T0 + 90_001)));
  t.true(Number.isNaN(s.read('host', '', 'b', CPU, T0)), 'never received');
  t.deepEqual(s.describe('host', '', 'a', CPU, T0 + 90_001), { ageMs: 90_001, state: 'stale' });
  t.deepEqual(s.describe('host', '', 'b', CPU, T0), { state: 'missing' });
});

test('staleness is per source', (t) => {
  const s = store({ host: { intervalSeconds: 60 }, service: { intervalSeconds: 5, staleAfterSeconds: 7 } });
  push(s, 'host', [{ dc: 'a', cpu: 1 }]);
  push(s, 'service', [{ service: 'web', dc: 'a', cpu: 2 }]);
  t.is(s.read('host', '', 'a', CPU, T0 + 180_000), 1);
  t.true(Number.isNaN(s.read('service', 'web', 'a', metricId('service', 'cpu'), T0 + 7_001)));
  t.is(s.staleAfterMs('service'), 7000);
});

test('status: pushed and monitor status must both say up when both report', (t) => {
  const rows: [string | undefined, boolean | undefined, number][] = [
    [undefined, undefined, NaN],
    ['up', undefined, 1],
    ['down', undefined, 0],
    [undefined, true, 1],
    [undefined, false, 0],
    ['up', true, 1],
    ['up', false, 0],
    ['down', true, 0],
    ['down', false, 0],
  ];
  for (const [pushed, monitor, want] of rows) {
    const s = store();
    if (pushed) push(s, 'host', [{ dc: 'a', status: pushed }]);
    s.setMonitorStatus('host', '', 'a', monitor, T0);
    const got = s.read('host', '', 'a', STATUS, T0);
    t.true(Object.is(got, want), `pushed ${pushed}, monitor ${monitor}: ${got}`);
  }
});

test('status: a stale push stops voting; the monitor never goes stale; clearing the monitor leaves the push', (t) => {
  const s = store();
  push(s, 'host', [{ dc: 'a', status: 'down' }]);
  s.setMonitorStatus('host', '', 'a', true, T0);
  t.is(s.read('host', '', 'a', STATUS, T0 + 1000), 0);
  t.is(s.read('host', '', 'a', STATUS, T0 + 3_600_000), 1, 'the push went stale; the monitor still says up');
  t.deepEqual(s.describe('host', '', 'a', STATUS, T0 + 3_600_000), { value: 1, ageMs: 3_600_000, state: 'stale', monitor: 'up' });
  s.setMonitorStatus('host', '', 'a', undefined, T0);
  t.true(Number.isNaN(s.read('host', '', 'a', STATUS, T0 + 3_600_000)));
});

test('service status follows the same rule per (service, DC)', (t) => {
  const s = store();
  push(s, 'service', [{ service: 'web', dc: 'a', status: 'up' }]);
  s.setMonitorStatus('service', 'web', 'a', false, T0);
  t.is(s.read('service', 'web', 'a', metricId('service', 'status'), T0), 0);
  t.true(Number.isNaN(s.read('service', 'web', 'b', metricId('service', 'status'), T0)));
});

test('client networks are the address masked to /24 and /48 by default', (t) => {
  const s = store();
  t.is(key(s, '198.51.100.7'), key(s, '198.51.100.250'));
  t.not(key(s, '198.51.100.7'), key(s, '198.51.101.7'));
  t.is(key(s, '2001:db8:1:ffff::1'), key(s, '2001:db8:1::'));
  t.not(key(s, '2001:db8:1::'), key(s, '2001:db8:2::'));
  t.is(key(s, '::ffff:198.51.100.9'), key(s, '198.51.100.1'), 'IPv4-mapped counts as IPv4');
  push(s, 'client', [{ network: '198.51.100.9', dc: 'a', hops: 7 }]);
  t.is(s.read('client', key(s, '198.51.100.200'), 'a', HOPS, T0), 7);
});

test('the client LRU keeps at most maxNetworks, evicting the least recently updated', (t) => {
  const s = store({ client: { maxNetworks: 3 } });
  for (const n of ['10.0.1.0', '10.0.2.0', '10.0.3.0']) push(s, 'client', [{ network: n, dc: 'a', hops: 1 }]);
  push(s, 'client', [{ network: '10.0.1.0', dc: 'b', hops: 2 }], T0 + 1);
  push(s, 'client', [{ network: '10.0.4.0', dc: 'a', hops: 4 }], T0 + 2);
  t.true(Number.isNaN(s.read('client', key(s, '10.0.2.1'), 'a', HOPS, T0 + 2)), '10.0.2.0 was the least recently updated');
  t.is(s.read('client', key(s, '10.0.1.1'), 'a', HOPS, T0 + 2), 1);
  t.is(s.read('client', key(s, '10.0.4.1'), 'a', HOPS, T0 + 2), 4);
  t.deepEqual(s.stats(), { hostDcs: 0, serviceRows: 0, clientNetworks: 3, clientEvictions: 1 });
});

test('a bounded store stays bounded under many networks', (t) => {
  const s = store({ client: { maxNetworks: 1000 } });
  for (let i = 0; i < 20; i++) {
    const samples = Array.from({ length: 500 }, (_, j) => ({ network: `10.${i}.${j & 255}.${j >> 8}`, dc: 'a', hops: 3 }));
    t.true(push(s, 'client', samples).ok);
  }
  t.is(s.stats().clientNetworks, 1000);
});

test('MOS windows are smoothed per (network, DC); a stale previous score is not carried', (t) => {
  const s = store();
  push(s, 'client', [{ network: '10.0.0.0/24', dc: 'a', mos: 4.4 }]);
  push(s, 'client', [{ network: '10.0.0.0/24', dc: 'a', mos: 2.0 }], T0 + 1000);
  t.is(s.read('client', key(s, '10.0.0.1'), 'a', MOS, T0 + 1000), 3.2);
  push(s, 'client', [{ network: '10.0.0.0/24', dc: 'a', mos: 2.0 }], T0 + 10_000_000);
  t.is(s.read('client', key(s, '10.0.0.1'), 'a', MOS, T0 + 10_000_000), 2.0);
});

test('reconfiguring drops removed data centers and services, and client rows when the network length changes', (t) => {
  const s = store();
  push(s, 'host', [
    { dc: 'a', cpu: 1 },
    { dc: 'b', cpu: 2 },
  ]);
  push(s, 'service', [{ service: 'web', dc: 'a', cpu: 3 }]);
  push(s, 'client', [{ network: '10.0.0.0', dc: 'a', hops: 3 }]);
  s.configure(metricsSchema.parse({}), ['a'], []);
  t.is(s.read('host', '', 'a', CPU, T0), 1);
  t.true(Number.isNaN(s.read('host', '', 'b', CPU, T0)));
  t.is(s.stats().serviceRows, 0);
  t.is(s.stats().clientNetworks, 1, 'same network length: client rows kept');
  s.configure(metricsSchema.parse({ client: { ipv4Prefix: 20 } }), ['a'], []);
  t.is(s.stats().clientNetworks, 0);
  t.false(s.hasDataCenter('b'));
});

test('client samples follow their data center by name when the data center list changes', (t) => {
  const s = store({}, ['a', 'b']);
  const PACKET_LOSS = metricId('client', 'packetLoss');
  push(s, 'client', [
    { network: '10.0.0.0/24', dc: 'a', hops: 3 },
    { network: '10.0.0.0/24', dc: 'b', packetLoss: 0.5 },
    { network: '2001:db8::/48', dc: 'a', hops: 9 },
  ]);
  s.configure(metricsSchema.parse({}), ['c', 'b'], ['web']);
  t.is(s.read('client', key(s, '10.0.0.1'), 'b', PACKET_LOSS, T0), 0.5);
  t.true(Number.isNaN(s.read('client', key(s, '10.0.0.1'), 'c', PACKET_LOSS, T0)));
  t.true(Number.isNaN(s.read('client', key(s, '10.0.0.1'), 'a', HOPS, T0)), 'a is gone');
  t.is(s.stats().clientNetworks, 1, '2001:db8::/48 only had samples of a');
});

test('client readings for /explain: fresh, stale at one ms past the limit, missing', (t) => {
  const s = store({ client: { staleAfterSeconds: 60 } });
  push(s, 'client', [{ network: '2001:db8:1::/48', dc: 'a', hops: 4 }]);
  const k = key(s, '2001:db8:1:ffff::1');
  t.deepEqual(s.describe('client', k, 'a', HOPS, T0 + 60_000), { value: 4, ageMs: 60_000, state: 'fresh' });
  t.deepEqual(s.describe('client', k, 'a', HOPS, T0 + 60_001), { ageMs: 60_001, state: 'stale' });
  t.true(Number.isNaN(s.read('client', k, 'a', HOPS, T0 + 60_001)));
  t.deepEqual(s.describe('client', k, 'b', HOPS, T0), { state: 'missing' });
  t.deepEqual(s.describe('client', key(s, '2001:db8:2::'), 'a', HOPS, T0), { state: 'missing' });
});

test('staleRows: the pushed host and service rows whose newest push is older than their staleness; monitor verdicts and unpushed rows are not stale', (t) => {
  const s = store({ host: { intervalSeconds: 10, staleAfterSeconds: 20 }, service: { intervalSeconds: 5, staleAfterSeconds: 5 } });
  push(s, 'host', [{ dc: 'a', cpu: 1 }]);
  push(s, 'host', [{ dc: 'b', cpu: 1 }], T0 + 15_000);
  push(s, 'service', [{ service: 'web', dc: 'a', cpu: 2 }], T0 + 1_000);
  s.setMonitorStatus('service', 'web', 'b', true, T0);
  t.deepEqual(s.staleRows(T0 + 5_000), []);
  t.deepEqual(s.staleRows(T0 + 20_001), [
    { source: 'host', dc: 'a', lastPushMs: T0, staleSinceMs: T0 + 20_000 },
    { source: 'service', service: 'web', dc: 'a', lastPushMs: T0 + 1_000, staleSinceMs: T0 + 6_000 },
  ]);
  // A new push makes the row fresh again.
  push(s, 'host', [{ dc: 'a', cpu: 3 }], T0 + 20_001);
  t.deepEqual(
    s.staleRows(T0 + 20_002).map((r) => r.source),
    ['service'],
  );
});

import test from 'ava';
import { parseConfigText } from '../../process/loadConfig.js';
import { type Snapshot } from '../snapshot.js';
import { buildSnapshot } from '../../process/snapshot.js';
import { emptyLocationDb } from '../../core/location/locationDb.js';
import { allUpHealthView } from '../../core/views/healthView.js';
import { emptyMetricView } from '../../core/views/metricView.js';
import { contentHash, nextSerial } from './soaSerial.js';
import { replaceOnce } from '../../../test/support/replaceOnce.js';

/**
 * The SOA serial rule across reloads (`serial: auto`): the first load takes the Unix time; a
 * reload keeps the serial when the zone's content is unchanged, else takes max(previous + 1, now).
 */

const T0 = Date.UTC(2026, 0, 1); // ms
const S0 = T0 / 1000;

test('nextSerial: first load takes the Unix time in seconds', (t) => {
  t.is(nextSerial('auto', 'h1', undefined, T0 + 999), S0);
});

test('nextSerial: unchanged content keeps the serial, whatever the clock says', (t) => {
  t.is(nextSerial('auto', 'h1', { serial: S0, contentHash: 'h1' }, T0 + 86_400_000), S0);
  t.is(nextSerial('auto', 'h1', { serial: S0, contentHash: 'h1' }, T0 - 86_400_000), S0);
});

test('nextSerial: changed content takes max(previous + 1, now)', (t) => {
  t.is(nextSerial('auto', 'h2', { serial: S0, contentHash: 'h1' }, T0 + 3_600_000), S0 + 3600);
  // Two reloads within one second, or a clock that went back: still strictly increasing.
  t.is(nextSerial('auto', 'h2', { serial: S0, contentHash: 'h1' }, T0), S0 + 1);
  t.is(nextSerial('auto', 'h2', { serial: S0, contentHash: 'h1' }, T0 - 3_600_000), S0 + 1);
});

test('nextSerial: a configured number is served as written', (t) => {
  t.is(nextSerial(2026010101, 'h2', { serial: S0, contentHash: 'h1' }, T0), 2026010101);
  t.is(nextSerial(0, 'h1', undefined, T0), 0);
});

test('contentHash is stable for equal content and differs otherwise', (t) => {
  t.is(contentHash({ a: [1, 2] }), contentHash({ a: [1, 2] }));
  t.not(contentHash({ a: [1, 2] }), contentHash({ a: [2, 1] }));
});

const zone = (extra: string, soa = ''): string => `
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test${soa} }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }${extra}
  - name: other.test
    soa: { mname: ns1.other.test, rname: h.other.test }
    ns: [ns1.other.test]
datacenters:
  - { name: dc1 }
services:
  - name: web
    endpoints:
      - { dc: dc1, address: 192.0.2.10 }
records:
  - { name: www.example.test, type: A, service: web }
`;

/** A snapshot of `yaml` loaded at `nowMs`, as a reload over `previous` builds it. */
const snapshotOf = (yaml: string, nowMs: number, previous?: Snapshot): Snapshot =>
  buildSnapshot('test.yaml', parseConfigText(yaml), { geo: emptyLocationDb(), health: allUpHealthView, metrics: emptyMetricView }, nowMs, previous);

const serialOf = (snap: Snapshot, name: string): number => snap.zones.zone(name)!.soa.data.serial;

test('serials across reloads: unchanged keeps, changed grows, other zones untouched', (t) => {
  const first = snapshotOf(zone(''), T0);
  t.is(serialOf(first, 'example.test'), S0);
  t.is(first.generation, 1);

  const same = snapshotOf(zone(''), T0 + 60_000, first);
  t.is(serialOf(same, 'example.test'), S0, 'unchanged content keeps the serial');
  t.is(same.generation, 2);

  const changed = snapshotOf(zone('\n      - { name: mail, type: A, data: 192.0.2.25 }'), T0 + 120_000, same);
  t.is(serialOf(changed, 'example.test'), S0 + 120, 'changed content → now');
  t.is(serialOf(changed, 'other.test'), S0, 'a zone whose content did not change keeps its serial');

  const again = snapshotOf(zone(''), T0 + 120_500, changed);
  t.is(serialOf(again, 'example.test'), S0 + 121, 'changed again within the same second → previous + 1');
});

test('a change to a GSLB record of the zone changes its serial', (t) => {
  const first = snapshotOf(zone(''), T0);
  const next = snapshotOf(replaceOnce(zone(''), 'service: web }', 'service: web, ttl: 60 }'), T0 + 5000, first);
  t.is(serialOf(next, 'example.test'), S0 + 5);
  t.is(serialOf(next, 'other.test'), S0);
});

test('SOA record data holds exactly the seven SOA fields; its TTL is the SOA ttl or the zone ttl', (t) => {
  const snap = snapshotOf(zone('', ', ttl: 3600, minimum: 120'), T0);
  const soa = snap.zones.zone('example.test')!.soa;
  t.is(soa.ttl, 3600);
  t.deepEqual(soa.data, { mname: 'ns1.example.test', rname: 'hostmaster.example.test', serial: S0, refresh: 3600, retry: 600, expire: 604800, minimum: 120 });
  t.is(snap.zones.zone('example.test')!.negativeTtl, 120);
  t.is(snap.zones.zone('other.test')!.soa.ttl, 300);
});

test('a change to what a GSLB record of the zone answers changes its serial; other services do not', (t) => {
  const withOther = replaceOnce(
    zone(''),
    'records:\n  - { name: www',
    '  - name: unused\n    endpoints:\n      - { dc: dc1, address: 192.0.2.99 }\nrecords:\n  - { name: www',
  );
  const first = snapshotOf(withOther, T0);
  const endpointChanged = snapshotOf(replaceOnce(withOther, 'address: 192.0.2.10', 'address: 192.0.2.11'), T0 + 7000, first);
  t.is(serialOf(endpointChanged, 'example.test'), S0 + 7, 'an endpoint of the record’s service changed');
  t.is(serialOf(endpointChanged, 'other.test'), S0);
  const dcChanged = snapshotOf(replaceOnce(withOther, '{ name: dc1 }', '{ name: dc1, location: EU.NL }'), T0 + 9000, first);
  t.is(serialOf(dcChanged, 'example.test'), S0 + 9, 'the location of a DC the record can answer from changed');
  const unrelated = snapshotOf(replaceOnce(withOther, 'address: 192.0.2.99', 'address: 192.0.2.98'), T0 + 11000, first);
  t.is(serialOf(unrelated, 'example.test'), S0, 'a service no record of the zone uses');
});

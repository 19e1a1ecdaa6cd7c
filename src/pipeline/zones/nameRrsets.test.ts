import test from 'ava';
import { parseIp } from '../../core/net/ipAddress.js';
import { RotationStore } from '../../core/views/rotationStore.js';
import { fixtureSnapshot } from '../../../test/support/powerdnsFixture.js';
import { nameRrsets } from './nameRrsets.js';

const snap = fixtureSnapshot();
const client = (address: string, sourcePrefix: number) => ({ address: parseIp(address), sourcePrefix, fromEcs: true });
const ctx = () => ({ random: () => 0.5, now: () => 0, rotation: new RotationStore() });
const view = (c: ReturnType<typeof nameRrsets>) =>
  c && {
    zone: c.zone.name,
    exists: c.exists,
    rrsets: c.rrsets.map((r) => ({
      type: r.type,
      data: r.records.map((x) => x.data),
      ttl: r.records[0]!.ttl,
      scope: r.scope,
      selected: r.selected,
      dcs: r.dcs,
    })),
  };

test('static and selected RRsets of one owner, each with its own scope', (t) => {
  t.deepEqual(view(nameRrsets(snap, 'www.example.test', client('193.0.14.0', 24), ctx())), {
    zone: 'example.test',
    exists: true,
    rrsets: [
      { type: 'A', data: ['198.51.100.10'], ttl: 30, scope: 20, selected: true, dcs: ['eu-west'] },
      { type: 'AAAA', data: ['2001:db8:2::10'], ttl: 30, scope: 20, selected: true, dcs: ['eu-west'] },
    ],
  });
  t.deepEqual(view(nameRrsets(snap, 'example.test', client('8.8.8.0', 24), ctx())), {
    zone: 'example.test',
    exists: true,
    rrsets: [
      { type: 'SOA', data: [snap.zones.zone('example.test')!.soa.data], ttl: 300, scope: 0, selected: false, dcs: [] },
      { type: 'NS', data: ['ns1.example.test', 'ns2.example.test'], ttl: 300, scope: 0, selected: false, dcs: [] },
      // One data center: every client gets it (or the all-down policy), so scope 0.
      { type: 'A', data: ['192.0.2.101'], ttl: 20, scope: 0, selected: true, dcs: ['us-east'] },
    ],
  });
});

test('a type filter selects only records of that type (others keep their rotation)', (t) => {
  const c = ctx();
  t.deepEqual(
    view(nameRrsets(snap, 'example.test', client('8.8.8.0', 24), c, 'NS'))!.rrsets.map((r) => r.type),
    ['NS'],
  );
  t.is(c.rotation.size, 0);
  t.deepEqual(
    view(nameRrsets(snap, 'example.test', client('8.8.8.0', 24), c, 'A'))!.rrsets.map((r) => r.data),
    [['192.0.2.101']],
  );
  t.is(c.rotation.size, 1);
});

test('exact owners only: empty non-terminals exist without RRsets, nothing is synthesised', (t) => {
  t.deepEqual(view(nameRrsets(snap, 'ent.example.test', client('8.8.8.0', 24), ctx())), { zone: 'example.test', exists: true, rrsets: [] });
  t.deepEqual(view(nameRrsets(snap, 'x.wild.example.test', client('8.8.8.0', 24), ctx())), { zone: 'example.test', exists: false, rrsets: [] });
  t.deepEqual(
    view(nameRrsets(snap, '*.wild.example.test', client('8.8.8.0', 24), ctx()))!.rrsets.map((r) => r.data),
    [['192.0.2.88']],
  );
  t.is(nameRrsets(snap, 'www.elsewhere.test', client('8.8.8.0', 24), ctx()), undefined);
});

test('a zone hint that holds the name wins; one that does not is ignored', (t) => {
  const other = snap.zones.zone('other.test')!;
  const example = snap.zones.zone('example.test')!;
  t.is(nameRrsets(snap, 'www.other.test', client('8.8.8.0', 24), ctx(), undefined, other)!.zone.name, 'other.test');
  t.is(nameRrsets(snap, 'www.other.test', client('8.8.8.0', 24), ctx(), undefined, example)!.zone.name, 'other.test');
});

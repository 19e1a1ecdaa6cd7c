import test from 'ava';
import { ZoneIndex, type ZoneData } from '../../pipeline/zones/zoneIndex.js';
import { zoneIdsOf } from './zoneIds.js';

const zone = (name: string): ZoneData => ({ name, soa: undefined, negativeTtl: 60, nodes: new Map(), hasDelegations: false }) as unknown as ZoneData;

test('ids depend on the zone name only: stable across order and added zones', (t) => {
  const a = zoneIdsOf(new ZoneIndex([zone('example.test'), zone('other.test')]));
  const b = zoneIdsOf(new ZoneIndex([zone('other.test'), zone('new.test'), zone('example.test')]));
  t.is(a.idOf(zone('example.test')), 744470781);
  t.is(b.idOf(zone('example.test')), 744470781);
  t.is(a.idOf(zone('other.test')), b.idOf(zone('other.test')));
  t.is(a.zoneOf(744470781)?.name, 'example.test');
  t.is(a.zoneOf(1), undefined);
  t.is(a.idOf(zone('unknown.test')), -1);
});

test('ids are non-negative 31-bit integers and unique', (t) => {
  const names = Array.from({ length: 2000 }, (_, i) => `zone${i}.test`);
  const ids = zoneIdsOf(new ZoneIndex(names.map(zone)));
  const seen = new Set(names.map((n) => ids.idOf(zone(n))));
  t.is(seen.size, names.length);
  for (const id of seen) t.true(Number.isInteger(id) && id >= 0 && id <= 0x7fffffff);
});

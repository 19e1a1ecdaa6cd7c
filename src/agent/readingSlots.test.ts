import test from 'ava';
import { ReadingSlots } from './readingSlots.js';

test('each engine is sent readings it has not accepted yet, merged per service; a reading past its freshness is left out', (t) => {
  const slots = new ReadingSlots();
  slots.put('host', { host: { cpu: 10 } }, 0, 1000);
  slots.put('haproxy:a', { services: [{ service: 'web', healthyBackends: 2 }] }, 0, 1000);
  slots.put('prometheus:b', { services: [{ service: 'web', request: 5 }], host: { mem: 40 } }, 0, 1000);
  const first = slots.collect(new Map(), 100);
  t.deepEqual(first.host, { cpu: 10, mem: 40 });
  t.deepEqual(first.services, [{ service: 'web', healthyBackends: 2, request: 5 }]);
  t.deepEqual(slots.collect(first.versions, 100).services, [], 'delivered: not sent again');
  slots.put('host', { host: { cpu: 20 } }, 500, 1000);
  t.deepEqual(slots.collect(first.versions, 600).host, { cpu: 20 });
  t.is(slots.collect(new Map(), 1200).services.length, 0, 'stale readings are not re-sent');
  slots.clear('host');
  t.deepEqual(slots.collect(new Map(), 600).host, { mem: 40 }, 'a failed source is forgotten, the others stay');
});

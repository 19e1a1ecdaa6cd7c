import test from 'ava';
import { EXAMPLE_ZONE } from '../../test/support/exampleZone.js';
import { parseConfigText } from './loadConfig.js';
import { isEmptySummary, reloadSummary } from './reloadSummary.js';

const config = (dcs: string, endpoints: string, records: string) =>
  parseConfigText(`
${EXAMPLE_ZONE}
datacenters: [${dcs}]
services: [{ name: web, endpoints: [${endpoints}] }]
records: [${records}]
`);

test('a reload summary names the records, data centers and endpoints added, removed and changed', (t) => {
  const before = config(
    '{ name: a }, { name: b }',
    '{ dc: a, address: 192.0.2.1 }, { dc: b, address: 192.0.2.2 }',
    '{ name: www.example.test, type: A, service: web, ttl: 30 }, { name: old.example.test, type: A, service: web }',
  );
  const after = config(
    '{ name: a }, { name: b, lat: 1, lon: 2 }, { name: c }',
    '{ dc: a, address: 192.0.2.1, weight: 5 }, { dc: c, address: 192.0.2.3 }',
    '{ name: www.example.test, type: A, service: web, ttl: 60 }, { name: new.example.test, type: A, service: web }',
  );
  t.deepEqual(reloadSummary(before, after), {
    records: { added: ['new.example.test/A'], removed: ['old.example.test/A'], changed: ['www.example.test/A'] },
    datacenters: { added: ['c'], removed: [], changed: ['b'] },
    endpoints: { added: ['web/c/192.0.2.3'], removed: ['web/b/192.0.2.2'], changed: ['web/a/192.0.2.1'] },
  });
  t.false(isEmptySummary(reloadSummary(before, after)));
  t.true(isEmptySummary(reloadSummary(before, before)));
});

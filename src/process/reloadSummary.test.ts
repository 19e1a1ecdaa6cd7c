import test from 'ava';
import { EXAMPLE_ZONE } from '../../test/support/exampleZone.js';
import { parseConfigText } from './loadConfig.js';
import { largeConfig } from '../../test/support/largeConfig.js';
import { isEmptySummary, LOGGED_NAMES, loggedSummary, reloadSummary, reloadSummarySteps } from './reloadSummary.js';

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
    zones: { added: [], removed: [], changed: [] },
    records: { added: ['new.example.test/A'], removed: ['old.example.test/A'], changed: ['www.example.test/A'] },
    datacenters: { added: ['c'], removed: [], changed: ['b'] },
    endpoints: { added: ['web/c/192.0.2.3'], removed: ['web/b/192.0.2.2'], changed: ['web/a/192.0.2.1'] },
  });
  t.false(isEmptySummary(reloadSummary(before, after)));
  t.true(isEmptySummary(reloadSummary(before, before)));
});

test('the summary of a large reload is computed in steps of at most 100 records each, with the same result', (t) => {
  // Issue 17: over 20,000 records the summary held the event loop 3.5 s in one turn after the swap;
  // the reload now runs it in slices (gslbdProcess.ts, runInSlices).
  const before = parseConfigText(largeConfig({ records: 4000, ttl: 30 }));
  const after = parseConfigText(largeConfig({ records: 4000, ttl: 31 }));
  const steps = reloadSummarySteps(before, after);
  let yields = 0;
  let next = steps.next();
  while (!next.done) {
    yields++;
    next = steps.next();
  }
  // Keying 4,000 records twice and comparing them: at least 3 × 4,000 / 100 steps.
  t.true(yields >= 120, `${yields} yields`);
  t.is(next.value.records.changed.length, 4000);
  t.deepEqual(next.value, reloadSummary(before, after));
});

test('a changed static record changes its zone, an added zone is named, and neither is "none"', (t) => {
  const zones = (staticAddress: string, extra = ''): string => `
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
    records: [{ name: static, type: A, data: ${staticAddress} }]
  - name: other.test
    soa: { mname: ns1.other.test, rname: hostmaster.other.test }
    ns: [ns1.other.test]
${extra}
datacenters: [{ name: a }]
services: [{ name: web, endpoints: [{ dc: a, address: 192.0.2.1 }] }]
records: [{ name: www.example.test, type: A, service: web }]
`;
  const before = parseConfigText(zones('192.0.2.20'));
  const changed = reloadSummary(before, parseConfigText(zones('192.0.2.21')));
  t.deepEqual(changed.zones, { added: [], removed: [], changed: ['example.test'] });
  t.false(isEmptySummary(changed), 'a static record change is not "none"');
  const added = parseConfigText(zones('192.0.2.20', '  - { name: new.test, soa: { mname: ns1.new.test, rname: hostmaster.new.test }, ns: [ns1.new.test] }'));
  t.deepEqual(reloadSummary(before, added).zones, { added: ['new.test'], removed: [], changed: [] });
  t.true(isEmptySummary(reloadSummary(before, parseConfigText(zones('192.0.2.20')))));
});

test('the logged summary of a large reload carries at most 20 names per list and counts the rest', (t) => {
  // 20,000 changed records made a 389 KB log line (issue 17): its synchronous write to a full
  // stdout pipe held the event loop 115 ms per reload.
  const before = parseConfigText(largeConfig({ records: 4000, ttl: 30 }));
  const after = parseConfigText(largeConfig({ records: 4000, ttl: 31 }));
  const full = reloadSummary(before, after);
  const logged = loggedSummary(full);
  t.deepEqual(logged.records, {
    added: [],
    removed: [],
    changed: full.records.changed.slice(0, LOGGED_NAMES),
    omitted: { added: 0, removed: 0, changed: 4000 - LOGGED_NAMES },
  });
  t.true(JSON.stringify(logged).length < 2000, `${JSON.stringify(logged).length} characters`);
  // A short summary is logged whole, without `omitted`.
  const small = { added: ['a'], removed: [], changed: Array.from({ length: LOGGED_NAMES }, (_, i) => `r${i}`) };
  t.deepEqual(loggedSummary({ ...full, records: small }).records, small);
});

import test from 'ava';
import { createLogger } from '../../core/telemetry/logger.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';
import { endpointSelectorSchema, matchesEndpoint } from './endpointSelector.js';
import { HealthMonitor } from './healthMonitor.js';
import type { PlannedEndpoint } from './healthPlan.js';

const endpoint = (service: string, dc: string, address: string): PlannedEndpoint => ({ key: `${service}/${dc}/${address}`, service, dc, checks: [] });
const ENDPOINTS = [
  endpoint('web', 'us-east', '192.0.2.10'),
  endpoint('web', 'us-east', '192.0.2.11'),
  endpoint('web', 'eu-west', '198.51.100.10'),
  endpoint('api', 'eu-west', '2001:db8::10'),
  endpoint('mail', 'eu-west', 'mx1.example.test:25'),
];

function selected(selector: unknown): string[] {
  const s = endpointSelectorSchema.parse(selector);
  return ENDPOINTS.filter((e) => matchesEndpoint(s, e)).map((e) => e.key);
}

test('selectors: a data center, a service, a glob over keys (* stays inside one part), a CIDR over addresses; all must match', (t) => {
  t.deepEqual(selected({ dc: 'eu-west' }), ['web/eu-west/198.51.100.10', 'api/eu-west/2001:db8::10', 'mail/eu-west/mx1.example.test:25']);
  t.deepEqual(selected({ service: 'web' }), ['web/us-east/192.0.2.10', 'web/us-east/192.0.2.11', 'web/eu-west/198.51.100.10']);
  t.deepEqual(selected({ endpoints: 'web/us-east/*' }), ['web/us-east/192.0.2.10', 'web/us-east/192.0.2.11']);
  t.deepEqual(selected({ endpoints: '*/eu-west/*' }), ['web/eu-west/198.51.100.10', 'api/eu-west/2001:db8::10', 'mail/eu-west/mx1.example.test:25']);
  // `*` does not cross a slash: `web/*` names no endpoint (keys have three parts).
  t.deepEqual(selected({ endpoints: 'web/*' }), []);
  t.deepEqual(selected({ endpoints: 'web/us-east/192.0.2.1?' }), ['web/us-east/192.0.2.10', 'web/us-east/192.0.2.11']);
  t.deepEqual(selected({ cidr: '192.0.2.0/24' }), ['web/us-east/192.0.2.10', 'web/us-east/192.0.2.11']);
  t.deepEqual(selected({ cidr: '2001:db8::/32' }), ['api/eu-west/2001:db8::10']);
  t.deepEqual(selected({ cidr: '0.0.0.0/0' }), ['web/us-east/192.0.2.10', 'web/us-east/192.0.2.11', 'web/eu-west/198.51.100.10']);
  t.deepEqual(selected({ dc: 'eu-west', cidr: '0.0.0.0/0' }), ['web/eu-west/198.51.100.10']);
});

test('selectors: at least one criterion, a valid CIDR, no unknown key', (t) => {
  t.false(endpointSelectorSchema.safeParse({}).success);
  t.false(endpointSelectorSchema.safeParse({ cidr: '192.0.2.1/24' }).success);
  t.false(endpointSelectorSchema.safeParse({ cidr: 'nonsense' }).success);
  t.false(endpointSelectorSchema.safeParse({ datacenter: 'a' }).success);
});

test('setOverrides: a whole data center changes in one published view', (t) => {
  const m = new HealthMonitor({ log: createLogger('silent') });
  t.teardown(() => m.stop());
  m.configure(
    parseConfigText(`
${EXAMPLE_ZONE}
datacenters: [{ name: a }, { name: b }]
services:
  - name: web
    endpoints: [{ dc: a, address: 192.0.2.1 }, { dc: a, address: 192.0.2.2 }, { dc: a, address: 192.0.2.3 }, { dc: b, address: 192.0.2.4 }]
`),
    '/tmp/x.yaml',
  );
  let views = 0;
  m.onChange(() => views++);
  t.deepEqual(m.setOverrides({ dc: 'a' }, 'drain'), ['web/a/192.0.2.1', 'web/a/192.0.2.2', 'web/a/192.0.2.3']);
  t.is(views, 1);
  t.deepEqual(
    m.report().endpoints.map((e) => [e.endpoint, e.override]),
    [
      ['web/a/192.0.2.1', 'drain'],
      ['web/a/192.0.2.2', 'drain'],
      ['web/a/192.0.2.3', 'drain'],
      ['web/b/192.0.2.4', null],
    ],
  );
  t.deepEqual(m.setOverrides({ dc: 'nowhere' }, 'drain'), []);
  t.is(views, 1);
  t.is(m.setOverrides({ service: 'web' }, 'none').length, 4);
  t.is(views, 2);
  t.true(m.report().endpoints.every((e) => e.override === null));
});

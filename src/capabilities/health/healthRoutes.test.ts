import test from 'ava';
import { parseConfigText } from '../../process/loadConfig.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';
import { HealthMonitor, type HealthReport } from './healthMonitor.js';
import { canonicalEndpointKey, healthRoutes } from './healthRoutes.js';

test('override keys: the address part in any spelling names the canonical key; targets and names are kept', (t) => {
  const cases: [key: string, canonical: string][] = [
    ['web/us-east/2001:DB8:0::0001', 'web/us-east/2001:db8::1'],
    ['web/us-east/0:0:0:0:0:0:0:1', 'web/us-east/::1'],
    ['web/us-east/::FFFF:192.0.2.1', 'web/us-east/::ffff:192.0.2.1'],
    ['web/us-east/192.0.2.10', 'web/us-east/192.0.2.10'],
    ['mail/us-east/mx1.example.test:25', 'mail/us-east/mx1.example.test:25'],
    // A zone index is in no configured address: the key stays as sent and answers 404.
    ['web/us-east/fe80::1%eth0', 'web/us-east/fe80::1%eth0'],
    ['nonsense', 'nonsense'],
  ];
  for (const [key, canonical] of cases) t.is(canonicalEndpointKey(key), canonical, key);
});

test('the routes as AdminRoute objects: report, override with the generation it is in, 400 and 404', async (t) => {
  const m = new HealthMonitor({ log: createLogger('silent') });
  t.teardown(() => m.stop());
  m.configure(
    parseConfigText(`
${EXAMPLE_ZONE}
datacenters: [{ name: dc1 }]
services: [{ name: web, endpoints: [{ dc: dc1, address: 2001:db8::1 }] }]
`),
    '/tmp/x.yaml',
  );
  let generation = 7;
  m.onChange(() => generation++);
  const routes = new Map(healthRoutes(m, () => generation).map((r) => [`${r.method} ${r.path}`, r]));
  t.deepEqual([...routes.keys()], ['GET /health', 'POST /health/override']);
  t.false(routes.get('GET /health')!.mutating);
  const override = routes.get('POST /health/override')!;
  t.true(override.mutating);
  const post = (body: unknown) => override.handle({ url: new URL('http://127.0.0.1/health/override'), body });

  t.deepEqual(await post({ endpoint: 'web/dc1/2001:DB8::0001', override: 'drain' }), {
    status: 200,
    json: { endpoint: 'web/dc1/2001:db8::1', override: 'drain', generation: 8 },
  });
  t.like(await post({ endpoint: 'web/dc1/192.0.2.9', override: 'drain' }), { status: 404 });
  t.like(await post({ endpoint: 'web/dc1/2001:db8::1', override: 'off' }), { status: 400 });
  const report = (await routes.get('GET /health')!.handle({ url: new URL('http://127.0.0.1/health'), body: undefined })).json as HealthReport;
  t.like(report.endpoints[0], { endpoint: 'web/dc1/2001:db8::1', override: 'drain' });
});

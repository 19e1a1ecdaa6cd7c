import test from 'ava';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { parseConfigText } from '../../process/loadConfig.js';
import { InProcessStateStore } from '../../core/contracts/stateStore.js';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { createLogger } from '../../core/telemetry/logger.js';
import type { HealthView } from '../../core/views/healthView.js';
import type { CapabilityHost, EnvPart } from '../../pipeline/capability.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';
import { waitFor } from '../../../test/support/waitFor.js';
import { healthCapabilityOf } from './capability.js';
import type { CheckTarget } from './checks/check.js';
import { checkKind, monitorCommon } from './checks/checkKind.js';
import { CHECK_KINDS, monitorSchemaOf } from './checks/registry.js';
import { monitorSchema } from './healthSchema.js';

// A check kind as a new file would declare it: a schema with its own field, a default port, a
// check function. Its verdict is whatever the test says, so the test decides what the monitor sees.
let verdict = true;
const targets: CheckTarget[] = [];
const dummyCheckKind = checkKind({
  schema: z.strictObject({ type: z.literal('dummy'), ...monitorCommon, reason: z.string().default('dummy says no'), keyFile: z.string().optional() }),
  defaultPort: 7,
  files: ['keyFile'],
  check: (m) => (target) => {
    targets.push(target);
    return (done) => setImmediate(() => done({ ok: verdict, latencyMs: 0, error: verdict ? '' : m.reason }));
  },
});

/** The engine's list plus one line: the extension point under test. */
const kinds = [...CHECK_KINDS, dummyCheckKind] as const;

const ENDPOINT = 'web/dc1/192.0.2.1';
const YAML = `
${EXAMPLE_ZONE}
datacenters: [{ name: dc1 }]
services:
  - name: web
    endpoints: [{ dc: dc1, address: 192.0.2.1, monitors: [probe], check: { address: 127.0.0.1 } }]
health:
  monitors: [{ name: probe, type: http }]
`;

test('a check kind added to the list is validated by the schema built from it, and only by that one', (t) => {
  const dummy = { name: 'probe', type: 'dummy', intervalMs: 10, timeoutMs: 10 };
  t.like(monitorSchemaOf(kinds).parse(dummy), { type: 'dummy', reason: 'dummy says no', rise: 2, fall: 3 });
  t.false(monitorSchema.safeParse(dummy).success, 'the engine’s list does not know the kind');
  t.false(monitorSchemaOf(kinds).safeParse({ ...dummy, unknownKey: 1 }).success, 'its schema is strict');
  // The other kinds are unchanged in the longer list.
  t.like(monitorSchemaOf(kinds).parse({ name: 'web', type: 'http' }), { method: 'GET', path: '/' });

  const health = healthCapabilityOf(kinds).schema.root['health'] as z.ZodType;
  t.like(health.parse({ monitors: [dummy] }), { monitors: [{ type: 'dummy' }], stateMaxAgeMs: 300_000 });
});

test('a monitor of an added kind is run by the monitor and its verdicts reach the health view', async (t) => {
  const capability = healthCapabilityOf(kinds);
  // The configuration as the root schema gives it, with the health section of the capability's fragment.
  const base = parseConfigText(YAML);
  const root = z.strictObject(capability.schema.root);
  const config = {
    ...base,
    ...root.parse({ health: { monitors: [{ name: 'probe', type: 'dummy', intervalMs: 20, timeoutMs: 20, rise: 1, fall: 1, jitter: 0 }] } }),
  };
  const problems = z
    .any()
    .superRefine((c, ctx) => capability.check(c, ctx))
    .safeParse(config);
  t.true(problems.success, 'the references check knows the kind (its default port serves the endpoint)');

  const published: HealthView[] = [];
  const metrics = new EngineMetrics();
  const host: CapabilityHost = {
    file: '/nonexistent/gslbd.yaml',
    log: createLogger('silent'),
    metrics,
    store: new InProcessStateStore(),
    now: () => Date.now(),
    generation: () => published.length,
    publish: (part: EnvPart) => void published.push(part.health!),
    reload: () => Promise.resolve({ ok: false, error: 'not in this test' }),
  };
  const runtime = capability.start(host);
  t.teardown(() => runtime.stop());
  const first = runtime.prepare(config, false).health!;
  t.is(first.endpointHealth(ENDPOINT).status, 'unknown');
  runtime.run();

  const last = (): string => published.at(-1)?.endpointHealth(ENDPOINT).status ?? 'none';
  await waitFor('up through host.publish', () => last() === 'up', 10_000);
  t.deepEqual(targets.at(-1), { address: '127.0.0.1', port: 7, host: undefined }, 'the kind’s default port is the target’s');
  verdict = false;
  await waitFor('down through host.publish', () => last() === 'down', 10_000);
  t.like(runtime.monitor.report().checks[0], { check: 'probe@127.0.0.1:7', type: 'dummy', status: 'down', lastError: 'dummy says no' });
  t.regex(await metrics.registry.metrics(), /gslbd_health_check_duration_seconds_count\{monitor="probe",result="fail"\} [1-9]/);
});

test('the files an added kind names are checked with the configuration, by their key', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-check-kinds-'));
  writeFileSync(join(dir, 'present.pem'), 'x');
  mkdirSync(join(dir, 'folder.pem'));
  const health = healthCapabilityOf(kinds).schema.root['health'] as z.ZodType<{ monitors: { type: string; name: string }[] }>;
  const monitors = ['present.pem', 'missing.pem', 'folder.pem', undefined].map((keyFile, i) => ({ name: `m${i}`, type: 'dummy', keyFile }));
  const config = { health: health.parse({ monitors: [...monitors, { name: 'tls', type: 'https', caFile: 'ca.pem' }] }) } as never;
  t.deepEqual(healthCapabilityOf(kinds).fileReferenceProblems(config, join(dir, 'gslbd.yaml')), [
    { path: 'health.monitors[1].keyFile', message: 'cannot read "missing.pem": ENOENT' },
    { path: 'health.monitors[2].keyFile', message: '"folder.pem" is not a regular file (a directory)' },
    { path: 'health.monitors[4].caFile', message: 'cannot read "ca.pem": ENOENT' },
  ]);
});

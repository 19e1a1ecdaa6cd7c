import test from 'ava';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { formatQualifiers } from '../../core/location/location.js';
import type { LocationDb } from '../../core/location/locationDb.js';
import { parseIp } from '../../core/net/ipAddress.js';
import { unpackId } from '../../core/lpm/rangeTable.js';
import { InProcessStateStore } from '../../core/contracts/stateStore.js';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import type { CapabilityHost, EnvPart, ReloadOutcome } from '../../pipeline/capability.js';
import { geoCapability, geoRootSchema, type GeoSection } from './capability.js';
import { waitFor } from '../../../test/support/waitFor.js';

/**
 * The geo capability against a host of the test's own: loading at start on the calling thread,
 * reuse and off-thread reloads, the `/reload/geo` route, the `gslbd up` fields and the file checks.
 */

const dir = mkdtempSync(join(tmpdir(), 'gslbd-geo-capability-'));
const configFile = join(dir, 'gslbd.yaml');
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

function host(outcome: ReloadOutcome = { ok: true, generation: 2 }) {
  const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
  const reloads: [string, readonly string[] | undefined][] = [];
  const h: CapabilityHost = {
    file: configFile,
    log: pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) }),
    metrics: new EngineMetrics(),
    store: new InProcessStateStore(),
    now: () => 0,
    generation: () => 1,
    publish: () => undefined,
    reload: async (reason, refresh) => {
      reloads.push([reason, refresh]);
      return outcome;
    },
  };
  return { h, lines, reloads };
}

/** A `geo` section of one NetScaler file, written with `country` for 10.0.0.0/8. */
function section(file: string, country: string, mode: 'strict' | 'lenient' = 'strict'): GeoSection {
  writeFileSync(join(dir, file), `10.0.0.0,10.255.255.255,,${country}\n`);
  return { geo: geoRootSchema.parse({ sources: [{ format: 'netscaler', path: file }], mode }) };
}

const countryOf = (db: LocationDb | undefined): string => formatQualifiers(db!.location(unpackId(db!.lookup(parseIp('10.1.2.3')))).qualifiers);

test('at start the data loads on the calling thread; the up line describes it', (t) => {
  const { h, lines } = host();
  const runtime = geoCapability.start(h);
  const config = section('start.csv', 'NL');
  const part = runtime.prepare!(config, false);
  t.false(part instanceof Promise);
  t.is(countryOf((part as EnvPart).geo), 'EU.NL');
  runtime.commit!(config);
  t.deepEqual(lines.map((l) => l.msg).slice(0, 2), ['loading location data', 'location data loaded']);
  t.like(runtime.describe!(), { location: { sources: [join(dir, 'start.csv')], ipv4Ranges: 3 } });
});

test('with geo.compiled beside geo.sources, a start builds the missing cache with a warning; the next start loads it; a refresh rebuilds it off the event loop when the data changed', async (t) => {
  const withCache = (country: string): GeoSection => ({ geo: geoRootSchema.parse({ ...section('cached.csv', country).geo, compiled: 'cached.gdb' }) });
  const first = host();
  const config = withCache('NL');
  t.is(countryOf((geoCapability.start(first.h).prepare!(config, false) as EnvPart).geo), 'EU.NL');
  t.like(
    first.lines.find((l) => l.msg === 'location data loaded'),
    { compiled: join(dir, 'cached.gdb'), cache: 'rebuilt' },
  );
  t.like(
    first.lines.find((l) => l.level === 40 && /compiled location file rebuilt from the sources/.test(l.msg)),
    { reason: 'missing', written: true },
  );
  const second = host();
  const runtime = geoCapability.start(second.h);
  t.is(countryOf((runtime.prepare!(config, false) as EnvPart).geo), 'EU.NL');
  t.like(
    second.lines.find((l) => l.msg === 'location data loaded'),
    { cache: 'fresh' },
  );
  t.false(second.lines.some((l) => l.level >= 40));
  runtime.commit!(config);
  const refreshed = runtime.prepare!(withCache('DE'), true);
  t.true(refreshed instanceof Promise);
  t.is(countryOf((await refreshed).geo), 'EU.DE');
});

test('a reload reuses the published database unless the section changed or a refresh is asked', async (t) => {
  const runtime = geoCapability.start(host().h);
  const first = section('reuse.csv', 'NL');
  const db = (runtime.prepare!(first, false) as EnvPart).geo;
  runtime.commit!(first);
  const same = section('reuse.csv', 'DE'); // the file changes; the section does not
  t.is((runtime.prepare!(same, false) as EnvPart).geo, db);
  const refreshed = runtime.prepare!(same, true);
  t.true(refreshed instanceof Promise);
  t.is(countryOf((await refreshed).geo), 'EU.DE');
  const changed = runtime.prepare!(section('reuse.csv', 'FR', 'lenient'), false);
  t.true(changed instanceof Promise);
  t.is(countryOf((await changed).geo), 'EU.FR');
});

test('a database whose snapshot was not published is not reused; a failed load refuses the configuration', async (t) => {
  const runtime = geoCapability.start(host().h);
  const first = section('pending.csv', 'NL');
  const db = (runtime.prepare!(first, false) as EnvPart).geo;
  runtime.commit!(first);
  const next = section('pending-next.csv', 'DE');
  const pending = (await runtime.prepare!(next, false)).geo;
  // Not committed: the same section loads again, and the running database stays the first.
  const again = (await runtime.prepare!(next, false)).geo;
  t.not(again, pending);
  t.is(countryOf(again), 'EU.DE');
  writeFileSync(join(dir, 'pending-next.csv'), 'not,a,valid,line\n');
  await t.throwsAsync(async () => runtime.prepare!(next, true), { message: /^location source .*pending-next\.csv: .*pending-next\.csv:1: / });
  t.is((runtime.prepare!(first, false) as EnvPart).geo, db);
});

test('POST /reload/geo reloads with a refresh of the location data: 200, or 422 with the reason', async (t) => {
  for (const [outcome, status] of [
    [{ ok: true, generation: 7 }, 200],
    [{ ok: false, error: 'geo.sources[0].path: cannot read' }, 422],
  ] as const) {
    const { h, reloads } = host(outcome);
    const routes = geoCapability.start(h).routes!;
    t.deepEqual(
      routes.map((r) => [r.method, r.path, r.mutating]),
      [['POST', '/reload/geo', true]],
    );
    t.deepEqual(await routes[0]!.handle({ url: new URL('http://admin/reload/geo'), body: undefined }), { status, json: outcome });
    t.deepEqual(reloads, [['admin API (location data)', ['geo']]]);
  }
});

test('file references: compiled file, source paths and package files, with their configuration paths', (t) => {
  mkdirSync(join(dir, 'a-directory'));
  writeFileSync(join(dir, 'present.csv'), '');
  const problems = (geo: unknown) => geoCapability.fileReferenceProblems({ geo: geoRootSchema.parse(geo) }, configFile);
  t.deepEqual(problems({ compiled: 'a-directory' }), [{ path: 'geo.compiled', message: '"a-directory" is not a regular file (a directory)' }]);
  t.deepEqual(
    problems({
      sources: [
        { format: 'netscaler', path: 'present.csv' },
        { format: 'netscaler', path: 'absent.csv' },
        { format: 'mmdb', package: '@gslbd-test/absent/file.mmdb' },
      ],
    }),
    [
      { path: 'geo.sources[1].path', message: 'cannot read "absent.csv": ENOENT' },
      { path: 'geo.sources[2].package', message: '"@gslbd-test/absent/file.mmdb" is not an installed package file (npm install)' },
    ],
  );
  t.deepEqual(problems({}), []);
});

test('a database a reload replaced is released after the swap and the current turn, not at garbage collection; one never published at the next prepare', async (t) => {
  const runtime = geoCapability.start(host().h);
  const first = section('release.csv', 'NL');
  const old = (runtime.prepare!(first, false) as EnvPart).geo!;
  runtime.commit!(first);
  const released: string[] = [];
  old.onRelease!(() => released.push('old'));
  const next = section('release-next.csv', 'DE');
  const replacement = (await runtime.prepare!(next, false)).geo!;
  runtime.commit!(next);
  // Queries of this turn may still run on the old snapshot: it answers until the turn ends.
  t.is(countryOf(old), 'EU.NL');
  t.deepEqual(released, []);
  await new Promise((done) => setImmediate(done));
  // The release's first step, in the next turn, ends the table; the image and the derived tables
  // are freed (and the listeners told) in later steps, slices of the event loop (issue 17).
  t.throws(() => old.lookup(parseIp('10.1.2.3')), { code: 'ERR_GSLBD_TABLE_RELEASED' } as never);
  t.throws(() => old.location(1), { name: 'LocationDbReleasedError' });
  await waitFor('the release listeners ran', () => released.length > 0, 10_000);
  t.deepEqual(released, ['old']);
  t.is(countryOf(replacement), 'EU.DE');
  // Prepared, never committed (another part refused the configuration): freed by the next prepare.
  const unpublished = (await runtime.prepare!(section('release-refused.csv', 'FR'), false)).geo!;
  t.is(countryOf(unpublished), 'EU.FR');
  t.is((runtime.prepare!(next, false) as EnvPart).geo, replacement);
  t.throws(() => unpublished.location(1), { name: 'LocationDbReleasedError' });
  t.is(countryOf(replacement), 'EU.DE');
});

import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { explainQuery } from '../../src/pipeline/explain.js';
import { buildLocationImage } from '../../src/capabilities/geo/buildImage.js';
import { geoSchema } from '../../src/capabilities/geo/geoSchema.js';

// The engine's use of the location database: native by default, the TypeScript fallback visible
// in /healthz, a compiled file with custom entries on top, and a location-data reload that
// swaps tables while queries go on.
const dir = mkdtempSync(join(tmpdir(), 'gslbd-engine-geo-'));
const TOKEN = 'geo-test-token-0123456789';

function freePort(): Promise<number> {
  return new Promise((done) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => done(port));
    });
  });
}

async function start(name: string, geo: string): Promise<RunningGslbd> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `listeners: { admin: { address: 127.0.0.1, port: ${await freePort()}, token: ${TOKEN} } }
logging: { level: silent }
geo:
${geo}
zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]
datacenters:
  - { name: eu, location: EU.NL, lat: 52.4, lon: 4.9 }
  - { name: us, location: NA.US, lat: 39.0, lon: -77.5 }
services: [{ name: web, endpoints: [{ dc: eu, address: 198.51.100.10 }, { dc: us, address: 192.0.2.10 }] }]
records:
  - { name: www.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [us] }, failsafe: [192.0.2.10] }
`,
  );
  return startGslbd(file, { signals: false, watchFile: false });
}

function compiled(name: string, netscaler: string): string {
  const csv = join(dir, `${name}.csv`);
  writeFileSync(csv, netscaler);
  const geo = geoSchema.parse({ sources: [{ format: 'netscaler', path: csv }] });
  const file = join(dir, `${name}.gdb`);
  writeFileSync(file, buildLocationImage({ sources: geo.sources, custom: [], mode: 'strict', resolvePath: (s) => s.path! }).image);
  return file;
}

const answerFor = (g: RunningGslbd, client: string): string => {
  const e = explainQuery(g.engine, 'www.example.test', 'A', client);
  return `${e.answer.answers.map((a) => a.split(' ').pop()).join(',')} ${e.client.location}/${e.answer.scope}`;
};

const healthz = async (g: RunningGslbd): Promise<{ warnings: string[] }> =>
  (await fetch(`http://127.0.0.1:${g.admin!.port}/healthz`)).json() as Promise<{ warnings: string[] }>;

test('the engine answers from the native addon by default; a compiled file takes custom entries on top', async (t) => {
  const gdb = compiled('base', '10.0.0.0,10.255.255.255,EU,NL\n');
  const g = await start('native', `  compiled: ${gdb}\n  custom: [{ cidr: 10.1.2.0/24, location: NA.US }]`);
  t.teardown(() => g.stop());
  t.is(g.engine.snapshot.env.geo.implementation, 'native');
  t.deepEqual(g.engine.snapshot.env.geo.describe().sources, [join(dir, 'base.csv'), 'custom entries']);
  t.is(answerFor(g, '10.1.3.0/24'), '198.51.100.10 EU.NL/24');
  t.is(answerFor(g, '10.1.2.0/24'), '192.0.2.10 NA.US/24');
  t.is(answerFor(g, '10.128.0.0/16'), '198.51.100.10 EU.NL/9');
  t.deepEqual((await healthz(g)).warnings, []);
});

test('the TypeScript fallback answers the same and /healthz warns about it', async (t) => {
  const gdb = compiled('ts', '10.0.0.0,10.255.255.255,EU,NL\n');
  const g = await start('ts', `  compiled: ${gdb}\n  implementation: typescript`);
  t.teardown(() => g.stop());
  t.is(g.engine.snapshot.env.geo.implementation, 'typescript');
  t.is(answerFor(g, '10.1.3.0/24'), '198.51.100.10 EU.NL/8');
  t.deepEqual((await healthz(g)).warnings, ['location lookups use the TypeScript reference implementation (native addon not loaded)']);
});

test('POST /reload/geo swaps in new location data off the event loop; queries keep the old table until then', async (t) => {
  const csv = join(dir, 'live.csv');
  writeFileSync(csv, '10.0.0.0,10.255.255.255,EU,NL\n');
  const g = await start('reload', `  sources: [{ format: netscaler, path: ${csv} }]`);
  t.teardown(() => g.stop());
  t.is(answerFor(g, '10.1.0.0/16'), '198.51.100.10 EU.NL/8');
  const before = g.engine.snapshot.env.geo;
  // A few thousand rows make the build take a while; the event loop must keep turning meanwhile.
  const rows = ['10.0.0.0,10.255.255.255,NA,US'];
  for (let i = 0; i < 20_000; i++) rows.push(`11.${(i >> 8) & 255}.${i & 255}.0,11.${(i >> 8) & 255}.${i & 255}.255,EU,DE,R${i % 97}`);
  writeFileSync(csv, `${rows.join('\n')}\n`);
  let ticks = 0;
  let duringReload = '';
  const ticker = setInterval(() => {
    ticks++;
    if (g.engine.snapshot.env.geo === before) duringReload = answerFor(g, '10.1.0.0/16');
  }, 1);
  const res = await fetch(`http://127.0.0.1:${g.admin!.port}/reload/geo`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
  clearInterval(ticker);
  t.is(res.status, 200);
  t.true(ticks > 5, `the event loop turned only ${ticks} times during the reload`);
  t.is(duringReload, '198.51.100.10 EU.NL/8');
  t.not(g.engine.snapshot.env.geo, before);
  t.is(answerFor(g, '10.1.0.0/16'), '192.0.2.10 NA.US/8');
  // Plain /reload with an unchanged geo section keeps the table.
  const kept = g.engine.snapshot.env.geo;
  t.is((await fetch(`http://127.0.0.1:${g.admin!.port}/reload`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
  t.is(g.engine.snapshot.env.geo, kept);
});

test('a location reload that fails keeps the running table and says why', async (t) => {
  const csv = join(dir, 'bad.csv');
  writeFileSync(csv, '10.0.0.0,10.255.255.255,EU,NL\n');
  const g = await start('bad', `  sources: [{ format: netscaler, path: ${csv} }]`);
  t.teardown(() => g.stop());
  const before = g.engine.snapshot.env.geo;
  writeFileSync(csv, '10.0.0.0,10.255.255.255,EU,NL\n10.1.0.0,banana,NA,US\n');
  const r = await g.reload('test', { refresh: ['geo'] });
  t.deepEqual(r, { ok: false, error: `location source ${csv}: ${csv}:2: "banana" is not an address (dotted IPv4, IPv6 or a decimal number)` });
  t.is(g.engine.snapshot.env.geo, before);
  t.is(answerFor(g, '10.1.0.0/16'), '198.51.100.10 EU.NL/8');
});

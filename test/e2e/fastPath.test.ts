import test from 'ava';
import { udpQuery } from '../support/dnsClient.js';
import { startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { FIXTURE_TOKEN, fixtureConfig, fixtureLocationFiles, WWW } from '../support/fixtureDeployment.js';

/**
 * The native fast path (`dns.fastPath`, src/doors/dns/README.md) in the real engine process, as
 * the composition root wires it (every capability started, the DNSSEC capability's after-answer
 * hook among them): repeated queries are answered from templates, which `/metrics` counts (in the
 * fast path's own counters and in the engine's query counters, once per query); with
 * `dns.queryLogSampleRate` 1 every query, hits included, reaches the query log.
 */

test.after.always(stopAllEngines);

/** The fast-path counters of `/metrics`, by outcome. */
async function fastPathCounts(engine: EngineProcess): Promise<Record<string, number>> {
  const text = await (await fetch(`${engine.adminUrl}/metrics`, { headers: { authorization: `Bearer ${FIXTURE_TOKEN}` } })).text();
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(/^gslbd_dns_fastpath_datagrams_total\{outcome="(\w+)"\} (\d+)$/gm)) counts[m[1]!] = Number(m[2]);
  const templates = /^gslbd_dns_fastpath_templates_total (\d+)$/m.exec(text);
  if (templates) counts.templates = Number(templates[1]);
  // The engine's query counters, which count replayed answers too.
  const sum = (re: RegExp): number => [...text.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
  counts.queries = sum(/^gslbd_dns_queries_total\{transport="udp",rcode="NOERROR"\} (\d+)$/gm);
  counts.zone = sum(/^gslbd_dns_queries_by_zone_total\{zone="example\.test"\} (\d+)$/gm);
  counts.record = sum(/^gslbd_gslb_record_selections_total\{record="www\.example\.test",type="A"\} (\d+)$/gm);
  counts.dc = sum(/^gslbd_dc_answers_total\{dc="\w+"\} (\d+)$/gm);
  return counts;
}

const CLIENTS = ['10.20.30.0/24', '10.20.99.0/24', '10.99.0.0/24'];
const ANSWERS = [WWW.ap, WWW.us, WWW.eu];

test('repeated GSLB queries are answered natively from templates, counted in /metrics', async (t) => {
  const engine = await startEngine(fixtureConfig({ dnsBehaviour: 'fastPath: { enabled: true, threads: 1 }' }), { files: fixtureLocationFiles() });
  // The decision cache reuses a decision from a client's second query on: that reply becomes a template, the third is a hit.
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < CLIENTS.length; i++) {
      const r = await udpQuery(engine.server, { name: 'www.example.test', type: 'A', edns: { ecs: CLIENTS[i]! } });
      t.deepEqual(r.answers, [`www.example.test A ${ANSWERS[i]!}`]);
    }
  }
  const counts = await fastPathCounts(engine);
  t.true((counts.hit ?? 0) >= CLIENTS.length, `hits ${JSON.stringify(counts)}`);
  t.true((counts.templates ?? 0) >= CLIENTS.length, `templates ${JSON.stringify(counts)}`);
  t.is((counts.hit ?? 0) + (counts.miss ?? 0), 4 * CLIENTS.length, JSON.stringify(counts));
  // Every query once in the engine's query counters, whether JavaScript answered it or a thread replayed it.
  t.like(counts, { queries: 4 * CLIENTS.length, zone: 4 * CLIENTS.length, record: 4 * CLIENTS.length, dc: 4 * CLIENTS.length });
  await engine.stop();
});

/**
 * Class templates in the real process: once one client of the US location class (10.20.0.0/16 but
 * 10.20.30.0/24) was answered, clients of the class's other blocks — never asked, block prefixes 17
 * to 24 — are answered natively, each with its own ECS scope (the class block around it).
 */
test('clients of a location class in blocks never asked are answered natively with their own ECS scope', async (t) => {
  const engine = await startEngine(fixtureConfig({ dnsBehaviour: 'fastPath: { enabled: true, threads: 1 }' }), { files: fixtureLocationFiles() });
  for (let i = 0; i < 2; i++) await udpQuery(engine.server, { name: 'www.example.test', type: 'A', edns: { ecs: '10.20.99.0/24' } });
  const before = await fastPathCounts(engine);
  const blocks: [string, number][] = [
    ['10.20.0.0/24', 20],
    ['10.20.16.0/24', 21],
    ['10.20.24.0/24', 22],
    ['10.20.28.0/24', 23],
    ['10.20.31.0/24', 24],
    ['10.20.32.0/24', 19],
    ['10.20.128.0/24', 17],
  ];
  for (const [ecs, scope] of blocks) {
    const r = await udpQuery(engine.server, { name: 'www.example.test', type: 'A', edns: { ecs } });
    t.deepEqual([r.answers, r.ecs?.scopePrefix], [[`www.example.test A ${WWW.us}`], scope], ecs);
  }
  const after = await fastPathCounts(engine);
  t.deepEqual({ hit: (after.hit ?? 0) - (before.hit ?? 0), miss: (after.miss ?? 0) - (before.miss ?? 0) }, { hit: blocks.length, miss: 0 });
  await engine.stop();
});

test('with queryLogSampleRate 1 the query log sees every query, fast-path hits included', async (t) => {
  const engine = await startEngine(fixtureConfig({ dnsBehaviour: 'queryLogSampleRate: 1, fastPath: { enabled: true, threads: 1 }' }), {
    files: fixtureLocationFiles(),
  });
  const rounds = 4;
  for (let round = 0; round < rounds; round++) {
    for (const ecs of CLIENTS) await udpQuery(engine.server, { name: 'www.example.test', type: 'A', edns: { ecs } });
  }
  const total = rounds * CLIENTS.length;
  await engine.waitForLog(() => engine.logs().filter((l) => l.component === 'query-log').length >= total, 10_000);
  const logged = engine.logs().filter((l) => l.component === 'query-log');
  t.is(logged.length, total);
  const counts = await fastPathCounts(engine);
  // At rate 1 every hit is handed over for the log: none is answered natively.
  t.is(counts.hit ?? 0, 0, JSON.stringify(counts));
  t.true((counts.sampled ?? 0) > 0, JSON.stringify(counts));
  t.is(logged.filter((l) => l.fastPath === 'hit').length, counts.sampled ?? 0);
  t.is(logged.filter((l) => l.fastPath === 'miss').length, counts.miss ?? 0);
  await engine.stop();
});

test('a reload that changes queryLogSampleRate applies to the native threads at once: every hit sampled at 1, none at 0', async (t) => {
  const config = (rate: number): string => fixtureConfig({ dnsBehaviour: `queryLogSampleRate: ${rate}, fastPath: { enabled: true, threads: 1 }` });
  const engine = await startEngine(config(0), { files: fixtureLocationFiles() });
  const reload = async (rate: number): Promise<void> => {
    engine.writeConfig(config(rate));
    const res = await fetch(`${engine.adminUrl}/reload`, { method: 'POST', headers: { authorization: `Bearer ${FIXTURE_TOKEN}` } });
    t.is(res.status, 200, await res.text());
  };
  /** Asks each client `rounds` times; returns the change of the fast-path counters and of the fast-path hits in the query log. */
  const ask = async (rounds: number): Promise<{ hit: number; sampled: number; logged: number }> => {
    const before = await fastPathCounts(engine);
    const loggedBefore = engine.logs().filter((l) => l.component === 'query-log' && l.fastPath === 'hit').length;
    for (let round = 0; round < rounds; round++)
      for (let i = 0; i < CLIENTS.length; i++)
        t.deepEqual((await udpQuery(engine.server, { name: 'www.example.test', type: 'A', edns: { ecs: CLIENTS[i]! } })).answers, [
          `www.example.test A ${ANSWERS[i]!}`,
        ]);
    const after = await fastPathCounts(engine);
    const sampled = (after.sampled ?? 0) - (before.sampled ?? 0);
    if (sampled > 0)
      await engine.waitForLog(() => engine.logs().filter((l) => l.component === 'query-log' && l.fastPath === 'hit').length >= loggedBefore + sampled, 10_000);
    const logged = engine.logs().filter((l) => l.component === 'query-log' && l.fastPath === 'hit').length - loggedBefore;
    return { hit: (after.hit ?? 0) - (before.hit ?? 0), sampled, logged };
  };
  // Each publish (the reload's) makes every template stale: two rounds install them again, the next are template hits.
  const warmThenAsk = async (): Promise<{ hit: number; sampled: number; logged: number }> => {
    await ask(2);
    return ask(5);
  };
  const atZero = await warmThenAsk();
  t.true(atZero.hit > 0 && atZero.sampled === 0 && atZero.logged === 0, JSON.stringify(atZero));
  await reload(1);
  const atOne = await warmThenAsk();
  t.true(atOne.sampled > 0 && atOne.hit === 0 && atOne.logged === atOne.sampled, JSON.stringify(atOne));
  await reload(0);
  const backAtZero = await warmThenAsk();
  t.true(backAtZero.hit > 0 && backAtZero.sampled === 0 && backAtZero.logged === 0, JSON.stringify(backAtZero));
  t.false(
    engine.logs().some((l) => String(l.msg).includes('queryLogSampleRate changed')),
    'no warning about the native threads keeping the start-up rate',
  );
  t.false(
    engine.logs().some((l) => String(l.msg).includes('rewarmTemplates')),
    'the process engine answers unasked queries (dns.fastPath.rewarmTemplates, on by default, is served)',
  );
  await engine.stop();
});

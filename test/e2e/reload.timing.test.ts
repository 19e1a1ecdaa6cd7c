import test from 'ava';
import { dig } from '../support/dig.js';
import { udpQuery } from '../support/dnsClient.js';
import { startEngine, stopAllEngines, type EngineProcess, type LogLine } from '../support/engineProcess.js';
import { FIXTURE_TOKEN, fixtureConfig, fixtureLocationFiles, WWW } from '../support/fixtureDeployment.js';
import { replaceOnce } from '../support/replaceOnce.js';

/**
 * Hot reload end to end: SIGHUP, the file watch and POST /reload swap the configuration while
 * queries keep being answered; an invalid file keeps the running configuration.
 * One engine, steps in order (each step starts from the previous one's configuration).
 */

let engine: EngineProcess;
test.before(async () => {
  engine = await startEngine(fixtureConfig(), { files: fixtureLocationFiles() });
});
test.after.always(stopAllEngines);

/** The eu answer for an ECS client in 10.99.0.0/24 (located in NL). */
async function euAnswer(): Promise<string> {
  const r = await udpQuery(engine.server, { name: 'www.example.test', type: 'A', edns: { ecs: '10.99.0.0/24' } });
  if (r.rcode !== 0 || r.answers.length !== 1) throw new Error(`unexpected reply: rcode ${r.rcode}, ${r.answers.join(', ')}`);
  return r.answers[0]!.split(' ')[2]!;
}

/**
 * Queries in a tight loop (4 in flight) until stopped, or for 20 s at most; counts answers per
 * value and failures. Stopped by the test's teardown too, so a failing assertion never leaves it
 * running.
 */
function queryLoop(t: { teardown(fn: () => Promise<unknown>): void }): { stop(): Promise<{ answers: Map<string, number>; failures: string[] }> } {
  let running = true;
  const deadline = Date.now() + 20000;
  const answers = new Map<string, number>();
  const failures: string[] = [];
  const worker = async (): Promise<void> => {
    while (running && Date.now() < deadline) {
      try {
        const a = await euAnswer();
        answers.set(a, (answers.get(a) ?? 0) + 1);
      } catch (e) {
        failures.push((e as Error).message);
      }
    }
  };
  const workers = Array.from({ length: 4 }, worker);
  const stop = async () => {
    running = false;
    await Promise.all(workers);
    return { answers, failures };
  };
  t.teardown(stop);
  return { stop };
}

const reloaded = (reason: string) => (l: LogLine) => l.msg === 'configuration reloaded' && l.reason === reason;
const failed = (reason: string) => (l: LogLine) => l.msg === 'reload failed; keeping the running configuration' && l.reason === reason;

async function adminPost(path: string, token?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${engine.adminUrl}${path}`, { method: 'POST', headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const soaSerial = async (): Promise<number> => Number((await dig(engine.server, ['example.test', 'SOA'])).answer[0]!.data.split(' ')[2]);

test.serial('SIGHUP: answers change, and no query fails while the snapshot is swapped', async (t) => {
  t.is(await euAnswer(), WWW.eu);
  const serialBefore = await soaSerial();
  const loop = queryLoop(t);
  await new Promise((r) => setTimeout(r, 200));
  const from = engine.logs().length;
  engine.writeConfig(fixtureConfig({ euAddress: '192.0.2.11' }));
  engine.signal('SIGHUP');
  const line = await engine.waitForLog(reloaded('SIGHUP'), 10000, from);
  await new Promise((r) => setTimeout(r, 300));
  const { answers, failures } = await loop.stop();
  t.deepEqual(failures, []);
  t.true((answers.get(WWW.eu) ?? 0) > 0, 'the loop ran before the reload');
  t.true((answers.get('192.0.2.11') ?? 0) > 0, 'and after it');
  t.deepEqual([...answers.keys()].sort(), [WWW.eu, '192.0.2.11'].sort(), 'only the old or the new answer, never anything else');
  t.is(await euAnswer(), '192.0.2.11');
  t.true((line.generation as number) >= 2);
  const serialAfter = await soaSerial();
  t.true(serialAfter > serialBefore, `SOA serial grows with changed content (${serialBefore} → ${serialAfter})`);
});

test.serial('the file watch alone reloads a changed file', async (t) => {
  const from = engine.logs().length;
  engine.writeConfig(fixtureConfig({ euAddress: '192.0.2.12' }));
  await engine.waitForLog(reloaded('file changed'), 10000, from);
  t.is(await euAnswer(), '192.0.2.12');
});

test.serial('POST /reload with the token: 200 with the new generation, answers change', async (t) => {
  const from = engine.logs().length;
  engine.writeConfig(fixtureConfig({ euAddress: '192.0.2.13' }));
  const r = await adminPost('/reload', FIXTURE_TOKEN);
  t.is(r.status, 200);
  t.is(r.body.ok, true);
  t.is(typeof r.body.generation, 'number');
  t.is(await euAnswer(), '192.0.2.13');
  await engine.waitForLog(reloaded('admin API'), 10000, from);
});

test.serial('POST /reload without the token is refused and reloads nothing', async (t) => {
  const r = await adminPost('/reload');
  t.is(r.status, 401);
  t.deepEqual(r.body, { error: 'missing or wrong admin token' });
  const wrong = await adminPost('/reload', `${FIXTURE_TOKEN}x`);
  t.is(wrong.status, 401);
});

test.serial('an unchanged reload keeps the SOA serial', async (t) => {
  const before = await soaSerial();
  t.is((await adminPost('/reload', FIXTURE_TOKEN)).status, 200);
  t.is(await soaSerial(), before);
});

test.serial('an invalid file: 422 from /reload with the reason, SIGHUP logs it, answers stay', async (t) => {
  const loop = queryLoop(t);
  const from = engine.logs().length;
  engine.writeConfig(replaceOnce(fixtureConfig({ euAddress: '192.0.2.14' }), '    service: web\n', '    service: web\n    bogus: 1\n'));
  const r = await adminPost('/reload', FIXTURE_TOKEN);
  t.is(r.status, 422);
  t.is(r.body.ok, false);
  t.regex(
    (r.body.error as string).slice(engine.configFile.length),
    /^:\d+:\d+: records\[0\]\.bogus: unknown key \(not part of the configuration schema; check the spelling\)$/,
  );
  t.true((r.body.error as string).startsWith(engine.configFile));
  engine.signal('SIGHUP');
  const line = await engine.waitForLog(failed('SIGHUP'), 10000, from);
  t.like(line.problems, [{ path: 'records[0].bogus', message: 'unknown key (not part of the configuration schema; check the spelling)' }]);
  const { answers, failures } = await loop.stop();
  t.deepEqual(failures, []);
  t.deepEqual([...answers.keys()], ['192.0.2.13'], 'the running configuration keeps answering');
  t.is(await euAnswer(), '192.0.2.13');
});

test.serial('a file with a YAML syntax error is refused with line:column', async (t) => {
  engine.writeConfig('zones: [\n');
  const r = await adminPost('/reload', FIXTURE_TOKEN);
  t.is(r.status, 422);
  t.regex(r.body.error as string, /\.yaml:2:1: YAML: /);
  t.is(await euAnswer(), '192.0.2.13');
});

test.serial('a valid file after invalid ones is taken again', async (t) => {
  engine.writeConfig(fixtureConfig({ euAddress: '192.0.2.15' }));
  t.is((await adminPost('/reload', FIXTURE_TOKEN)).status, 200);
  t.is(await euAnswer(), '192.0.2.15');
  t.false(
    engine.logs().some((l) => l.level >= 50 && l.msg !== 'reload failed; keeping the running configuration'),
    'no other error was logged',
  );
});

test.serial('a file naming a missing location file: 422 naming the key, answers stay', async (t) => {
  engine.writeConfig(replaceOnce(fixtureConfig({ euAddress: '192.0.2.16' }), 'path: loc4.mmdb', 'path: gone4.mmdb'));
  const r = await adminPost('/reload', FIXTURE_TOKEN);
  t.is(r.status, 422);
  t.deepEqual(r.body, { ok: false, error: `${engine.configFile}: geo.sources[0].path: cannot read "gone4.mmdb": ENOENT` });
  t.is(await euAnswer(), '192.0.2.15');
});

test.serial('a reload with a new admin token: the new token works at once, the old one no longer', async (t) => {
  // The file watch does the reloads here: a POST racing the watch could meet either token.
  const newToken = `${FIXTURE_TOKEN}-rotated`;
  let from = engine.logs().length;
  engine.writeConfig(fixtureConfig({ euAddress: '192.0.2.17', adminToken: newToken }));
  await engine.waitForLog(reloaded('file changed'), 10000, from);
  t.is(await euAnswer(), '192.0.2.17');
  t.is((await adminPost('/reload', FIXTURE_TOKEN)).status, 401);
  t.is((await adminPost('/reload', newToken)).status, 200);
  from = engine.logs().length;
  engine.writeConfig(fixtureConfig({ euAddress: '192.0.2.15' }));
  await engine.waitForLog(reloaded('file changed'), 10000, from);
  t.is((await adminPost('/reload', newToken)).status, 401);
  t.is((await adminPost('/reload', FIXTURE_TOKEN)).status, 200);
});

import test from 'ava';
import { buildQuery, decodeReply } from '../support/dnsClient.js';
import { startEngine, stopAllEngines } from '../support/engineProcess.js';
import { fixtureConfig, fixtureLocationFiles, WWW } from '../support/fixtureDeployment.js';
import { exchangeAllOrUnanswered } from '../support/udpExchangeAll.js';

/**
 * A log reader that stops reading (a stalled journald, a paused `| less`, a container runtime's
 * full log pipe) must not stop the query path (issue 17: nothing a peer does stops it). The engine
 * logs every query (`dns.queryLogSampleRate: 1`) to a stdout this test stops reading: before, its
 * synchronous log writes found the pipe full and retried every 100 ms until the reader read,
 * so once the pipe was full no query was answered (src/core/telemetry/logger.ts).
 */

test.after.always(stopAllEngines);

const QUERIES = 6000;

test('with its log reader stalled, the engine keeps answering every query, and the lines are all there once the reader reads again', async (t) => {
  const engine = await startEngine(fixtureConfig({ dnsBehaviour: 'queryLogSampleRate: 1' }), { files: fixtureLocationFiles() });
  engine.pauseLogs();
  // About 300 bytes of query log per query: 1.8 MB, several times what the stdout socket holds.
  const queries = Array.from({ length: QUERIES }, (_, i) => buildQuery({ id: i, name: 'www.example.test', type: 'A', edns: { ecs: '10.20.30.0/24' } }));
  const replies = await exchangeAllOrUnanswered(engine.server.address, engine.server.port, queries, 500, 2);
  const answered = replies.filter((r) => r !== undefined).map((r) => decodeReply(r));
  t.is(answered.length, QUERIES);
  t.true(
    answered.every((r) => r.answers.length === 1 && r.answers[0] === `www.example.test A ${WWW.ap}`),
    JSON.stringify(answered.find((r) => r.answers[0] !== `www.example.test A ${WWW.ap}`)),
  );
  engine.resumeLogs();
  // Every query's line reaches the log (the buffer holds 16 MiB), none dropped.
  const logged = (): number => engine.logs().filter((l) => l.component === 'query-log').length;
  for (let i = 0; i < 200 && logged() < QUERIES; i++) await new Promise((r) => setTimeout(r, 50));
  t.is(logged(), QUERIES);
  t.false(engine.logs().some((l) => String(l.msg).startsWith('log lines dropped')));
  await engine.stop();
});

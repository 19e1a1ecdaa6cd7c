import test from 'ava';
import { connect, type Socket } from 'node:net';
import { tcpQuery, udpQuery } from '../support/dnsClient.js';
import { startEngine, stopAllEngines } from '../support/engineProcess.js';
import { fixtureConfig, fixtureLocationFiles } from '../support/fixtureDeployment.js';

/**
 * The admin port under a flood of slow connections (one local client once held ~20,000 and used
 * every file descriptor: TCP DNS failed, reloads failed with EMFILE). The real engine runs under a
 * lowered descriptor limit; 49 attackers (127.0.0.2–127.0.0.50) keep 980 connections open that
 * send half a request and stall, reconnecting when closed: four times the descriptor limit. DNS over UDP and TCP keeps answering and a reload still
 * succeeds. A timing test: it runs for seconds and bounds how long answers take.
 */

test.after.always(stopAllEngines);

const ATTACKERS = 49;
const SLOTS_PER_ATTACKER = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('an admin flood from 49 addresses under a 256-descriptor limit: UDP and TCP DNS keep answering, a reload succeeds', async (t) => {
  const engine = await startEngine(fixtureConfig({ adminToken: null }), { files: fixtureLocationFiles(), prlimit: ['--nofile=256:256'] });
  const port = Number(new URL(engine.adminUrl!).port);
  let running = true;
  let opened = 0;
  const sockets = new Set<Socket>();
  /** One attacker's slot: connect, send half a request, stall; reconnect when closed. */
  const slot = async (from: string): Promise<void> => {
    while (running) {
      await new Promise<void>((done) => {
        const s = connect({ host: '127.0.0.1', port, localAddress: from });
        sockets.add(s);
        s.on('connect', () => {
          opened++;
          s.write('GET /status HTTP/1.1\r\nHost: x\r\n');
        });
        s.on('error', () => undefined);
        s.on('close', () => {
          sockets.delete(s);
          done();
        });
      });
      // Slow connections, not a connection-rate flood: a refused attacker comes back after a pause.
      await sleep(500);
    }
  };
  const attack: Promise<void>[] = [];
  for (let a = 0; a < ATTACKERS; a++) for (let i = 0; i < SLOTS_PER_ATTACKER; i++) attack.push(slot(`127.0.0.${a + 2}`));

  const failures: string[] = [];
  let answered = 0;
  const ask = async (tcp: boolean) => {
    while (running) {
      try {
        const q = { name: 'www.example.test', type: 'A' as const };
        const r = tcp ? await tcpQuery(engine.server, q, 3000) : await udpQuery(engine.server, q, 3000);
        if (r.rcode !== 0 || r.answers.length !== 1) failures.push(`${tcp ? 'TCP' : 'UDP'}: rcode ${r.rcode}`);
        else answered++;
      } catch (e) {
        failures.push(`${tcp ? 'TCP' : 'UDP'}: ${(e as Error).message}`);
      }
      await sleep(50);
    }
  };
  const queries = [ask(false), ask(true)];
  await sleep(3000);
  const from = engine.logs().length;
  engine.writeConfig(fixtureConfig({ adminToken: null, euAddress: '192.0.2.11' }));
  engine.signal('SIGHUP');
  const reloaded = await engine.waitForLog(
    (l) => l.msg === 'configuration reloaded' || l.msg === 'reload failed; keeping the running configuration',
    30000,
    from,
  );
  await sleep(2000);
  running = false;
  for (const s of sockets) s.destroy();
  await Promise.all([...queries, ...attack]);
  t.true(opened >= ATTACKERS * SLOTS_PER_ATTACKER, `the attackers opened ${opened} connections`);
  t.deepEqual(failures, []);
  t.true(answered > 20, `${answered} answers during the flood`);
  t.is(reloaded.msg, 'configuration reloaded', JSON.stringify(reloaded));
  await engine.stop();
});

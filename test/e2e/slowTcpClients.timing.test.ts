import test from 'ava';
import { connect, type Socket } from 'node:net';
import { tcpQuery, udpQuery } from '../support/dnsClient.js';
import { startEngine, stopAllEngines } from '../support/engineProcess.js';
import { fixtureConfig, fixtureLocationFiles } from '../support/fixtureDeployment.js';

/**
 * DNS over TCP under slow clients (300 slow, reconnecting clients once blocked 20 % of legitimate
 * TCP queries): the real engine under a lowered descriptor limit, 300 connections from 30
 * addresses (127.0.0.2–127.0.0.31) that announce a query and trickle its bytes, reconnecting when
 * closed — more than the 256-connection cap. Per-client limits and fair eviction (RFC 7766
 * §6.2.3) keep every legitimate query from 127.0.0.1 answered. A timing test: it runs for seconds.
 */

test.after.always(stopAllEngines);

const ADDRESSES = 30;
const PER_ADDRESS = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('300 slow reconnecting TCP clients over the cap: every legitimate TCP and UDP query is answered', async (t) => {
  const engine = await startEngine(fixtureConfig({ adminToken: false }), { files: fixtureLocationFiles(), prlimit: ['--nofile=512:512'] });
  const { address, port } = engine.server;
  let running = true;
  let connected = 0;
  const sockets = new Set<Socket>();
  const slow = async (from: string): Promise<void> => {
    while (running) {
      await new Promise<void>((done) => {
        const s = connect({ host: address, port, localAddress: from });
        sockets.add(s);
        let timer: NodeJS.Timeout | undefined;
        s.on('connect', () => {
          connected++;
          s.write(Buffer.from([0xff, 0xff]));
          timer = setInterval(() => s.write(Buffer.alloc(1)), 200);
        });
        s.on('error', () => undefined);
        s.on('close', () => {
          clearInterval(timer);
          sockets.delete(s);
          done();
        });
      });
      await sleep(10);
    }
  };
  const attack: Promise<void>[] = [];
  for (let a = 0; a < ADDRESSES; a++) for (let i = 0; i < PER_ADDRESS; i++) attack.push(slow(`127.0.0.${a + 2}`));
  // The slow connections fill the cap first; legitimate queries start once they have.
  await sleep(1500);
  const failures: string[] = [];
  let answered = 0;
  const ask = async (tcp: boolean) => {
    const until = Date.now() + 6000;
    while (Date.now() < until) {
      try {
        const q = { name: 'www.example.test', type: 'A' as const };
        const r = tcp ? await tcpQuery(engine.server, q, 2000) : await udpQuery(engine.server, q, 2000);
        if (r.rcode !== 0 || r.answers.length !== 1) failures.push(`${tcp ? 'TCP' : 'UDP'}: rcode ${r.rcode}`);
        else answered++;
      } catch (e) {
        failures.push(`${tcp ? 'TCP' : 'UDP'}: ${(e as Error).message}`);
      }
      await sleep(20);
    }
  };
  await Promise.all([ask(true), ask(true), ask(false)]);
  running = false;
  for (const s of sockets) s.destroy();
  await Promise.all(attack);
  t.true(connected >= ADDRESSES * PER_ADDRESS, `${connected} slow connections`);
  t.deepEqual(failures, []);
  t.true(answered > 10, `${answered} legitimate answers`);
  await engine.stop();
});

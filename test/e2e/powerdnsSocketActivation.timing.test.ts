import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { stringify } from 'yaml';
import { queryLoop, rcodeCounts, startActivatedEngine, type LoopAnswer } from '../support/activatedEngine.js';
import { freePort } from '../support/freePort.js';
import { startPdns, type PdnsServer } from '../support/pdnsServer.js';
import { zonesConfig } from '../support/powerdnsFixture.js';

/**
 * PowerDNS 4.7 during an engine outage (issue 26, item 4), with the engine's listening socket held
 * by the service manager (systemd socket activation, examples/powerdns/gslbd.socket;
 * test/support/activatedEngine.ts restarts the engine at once whenever it dies).
 * The engine is killed with SIGKILL under a steady query load through pdns_server. While it is
 * away, PowerDNS's new connections wait in the held socket and their queries are answered when the
 * next engine accepts them (within the connection string's timeout).
 * - Unix connector: the connections the dead engine held fail once each — one SERVFAIL per
 *   PowerDNS connection, one more per connection for each full timeout an outage lasts —
 *   instead of every query of the outage (test/e2e/powerdnsProcess.test.ts shows that without activation).
 * - HTTP connector (`listeners.powerdns.http`): PowerDNS finds its connection closed before it
 *   writes and connects again, so only a request the engine had read when it was killed fails
 *   (typically the queries in flight; at most one per connection), none for an idle connection.
 */

/** receiver-threads × distributor-threads + 1 (TCP) of examples/powerdns/pdns.conf: the connections PowerDNS holds. */
const PDNS_CONNECTIONS = 1 * 6 + 1;
/** The connection string's `timeout` of the test's pdns_server (test/support/pdnsServer.ts). */
const PDNS_TIMEOUT_MS = 2000;
/** Queries kept in flight through PowerDNS during the test. */
const IN_FLIGHT = 4;

interface Outcome {
  readonly answers: readonly LoopAnswer[];
  readonly outage: readonly LoopAnswer[];
  readonly downMs: number;
  readonly pdns: PdnsServer;
}

/** Engine under activation on `listen`, pdns_server with `connection`, killed once under load. */
async function killUnderLoad(
  t: ExecutionContext,
  listen: string,
  listeners: Record<string, unknown>,
  connection: string,
  clientTimeoutMs = 5000,
): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-pdns-activation-'));
  const configFile = join(dir, 'gslbd.yaml');
  const resolved = JSON.parse(JSON.stringify(listeners).replaceAll('DIR', dir)) as Record<string, unknown>;
  writeFileSync(configFile, stringify({ ...zonesConfig(), listeners: { powerdns: resolved } }));
  const engine = await startActivatedEngine(listen.replaceAll('DIR', dir), configFile);
  let pdns: PdnsServer | undefined;
  t.teardown(async () => {
    await pdns?.stop();
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  // PowerDNS starts once the engine is up, as the units order it: PowerDNS exits at start when
  // its first requests are not answered within the timeout, and a loaded machine can take longer.
  pdns = await startPdns({
    socketPath: join(dir, 'gslbd.sock'),
    instance: 'activation',
    settings: { 'remote-connection-string': connection.replaceAll('DIR', dir) },
  });
  const loop = queryLoop({ address: pdns.address, port: pdns.port }, IN_FLIGHT, clientTimeoutMs);
  await new Promise((r) => setTimeout(r, 1000));
  const killedMs = performance.now() - loop.startedMs;
  process.kill(engine.ups[0]!.pid, 'SIGKILL');
  for (let i = 0; i < 600 && engine.ups.length < 2; i++) await new Promise((r) => setTimeout(r, 25));
  t.is(engine.ups.length, 2, `the next engine came up:\n${engine.log()}`);
  const upMs = engine.ups[1]!.atMs - loop.startedMs;
  await new Promise((r) => setTimeout(r, 1500));
  await loop.stop();
  const outage = loop.answers.filter((a) => a.sentMs >= killedMs && a.sentMs < upMs);
  t.log(
    `engine down ${Math.round(upMs - killedMs)} ms; ${loop.answers.length} queries: ${JSON.stringify(rcodeCounts(loop.answers))}; sent while down: ${JSON.stringify(rcodeCounts(outage))}`,
  );
  t.deepEqual(
    loop.answers.filter((a) => a.rcode !== 'NOERROR' && a.rcode !== 'SERVFAIL'),
    [],
    'never NXDOMAIN, no timeout',
  );
  t.true(
    loop.answers.filter((a) => a.rcode === 'NOERROR').every((a) => a.answers.join() === 'www.example.test A 192.0.2.10'),
    'every answer is the engine’s',
  );
  t.true(
    outage.some((a) => a.rcode === 'NOERROR'),
    'queries sent while no engine ran were answered once the next one accepted them',
  );
  t.is(pdns.exitCode(), undefined, 'PowerDNS kept running');
  return { answers: loop.answers, outage, downMs: upMs - killedMs, pdns };
}

test.serial(
  'Unix socket held by systemd, engine killed under load behind PowerDNS: one SERVFAIL per PowerDNS connection (and per timeout of the outage), not one per query',
  async (t) => {
    t.timeout(120000);
    const { answers, downMs } = await killUnderLoad(
      t,
      'DIR/gslbd.sock',
      { path: 'DIR/gslbd.sock' },
      `unix:path=DIR/gslbd.sock,timeout=${PDNS_TIMEOUT_MS},instance=activation`,
    );
    // One per connection the killed engine held, and one per connection for each full timeout the
    // outage lasted (a loaded machine can take seconds to start even this small configuration).
    const servfail = answers.filter((a) => a.rcode === 'SERVFAIL').length;
    const bound = PDNS_CONNECTIONS * (1 + Math.floor(downMs / PDNS_TIMEOUT_MS));
    t.true(servfail <= bound, `${servfail} SERVFAIL, at most ${bound}`);
  },
);

/**
 * The HTTP test's connection-string `timeout`: longer than the engine's restart even on a loaded
 * test machine, so that requests wait for the next engine instead of failing (the operator's
 * choice in the README: a timeout above the restart time).
 */
const HTTP_TIMEOUT_MS = 10000;

test.serial(
  'HTTP listener held by systemd, engine killed under load behind PowerDNS: only requests the dying engine had read get SERVFAIL (at most one per connection), none for idle connections or the outage',
  async (t) => {
    t.timeout(120000);
    const port = await freePort();
    const { answers, downMs, pdns } = await killUnderLoad(
      t,
      `127.0.0.1:${port}`,
      { path: 'DIR/gslbd.sock', http: { address: '127.0.0.1', port } },
      `http:url=http://127.0.0.1:${port}/dns,post=1,post_json=1,timeout=${HTTP_TIMEOUT_MS}`,
      HTTP_TIMEOUT_MS + 5000,
    );
    // A request the dying engine had read is lost (PowerDNS reads a reset), at most one per
    // PowerDNS connection (it connects again after that): typically the queries in flight, but
    // the engine's sockets close one by one while it exits, so a client answered SERVFAIL can
    // meet a second connection not closed yet. Requests sent while no engine ran wait in the held
    // socket; only an outage longer than the timeout fails them, once per query in flight and timeout.
    const servfail = answers.filter((a) => a.rcode === 'SERVFAIL').length;
    const bound = PDNS_CONNECTIONS + IN_FLIGHT * Math.ceil(Math.max(0, downMs - HTTP_TIMEOUT_MS) / HTTP_TIMEOUT_MS);
    const reasons = [...new Set(pdns.output().match(/prevented lookup \(.*\)/g) ?? [])].join('\n');
    t.true(servfail <= bound, `${servfail} SERVFAIL, at most ${bound}; engine down ${Math.round(downMs)} ms; PowerDNS:\n${reasons}`);
    t.false(/Could not send a message/.test(pdns.output()), 'no request was written into a dead connection');
    t.true(
      reasons.split('\n').every((r) => r === '' || /Exception caught when receiving/.test(r)),
      `every SERVFAIL is a request the dying engine had read:\n${reasons}`,
    );
  },
);

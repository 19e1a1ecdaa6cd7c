import test from 'ava';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGslbd } from './gslbdProcess.js';
import { udpQuery } from '../../test/support/dnsClient.js';

/**
 * Issue 23, item 3: `dns.queryLogSampleRate` and `logging.level` changed in the file apply on
 * reload, exactly: rate 0 → 1 logs every later query, 1 → 0 none; level info → warn silences the
 * info lines (query log included), warn → info brings them back. One in-process engine on a
 * loopback port, asked over UDP.
 */

const config = (rate: number, level: string): string => `
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
logging: { level: ${level} }
dns: { queryLogSampleRate: ${rate} }
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
    records:
      - { name: www, type: A, data: 192.0.2.1 }
`;

test('query-log sampling and the logging level apply on reload', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-reload-logging-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'gslbd.yaml');
  const logFile = join(dir, 'gslbd.log');
  writeFileSync(file, config(0, 'info'));
  const gslbd = await startGslbd(file, { signals: false, watchFile: false, logDestination: openSync(logFile, 'a') });
  t.teardown(() => gslbd.stop());
  const server = gslbd.dns.bound[0]!;
  const queryLines = (): number =>
    readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"component":"query-log"')).length;
  /** Asks `n` queries and returns how many query-log lines they added. */
  const ask = async (n: number): Promise<number> => {
    const before = queryLines();
    for (let i = 0; i < n; i++) t.deepEqual((await udpQuery(server, { name: 'www.example.test', type: 'A' })).answers.length, 1);
    return queryLines() - before;
  };
  const reload = async (rate: number, level: string): Promise<void> => {
    writeFileSync(file, config(rate, level));
    t.like(await gslbd.reload('test'), { ok: true });
  };

  t.is(await ask(20), 0);
  await reload(1, 'info');
  t.is(await ask(20), 20);
  await reload(0, 'info');
  t.is(await ask(20), 0);
  // The level: at warn the sampled queries (info lines) are not written; back at info they are.
  await reload(1, 'warn');
  t.is(await ask(20), 0);
  await reload(1, 'info');
  t.is(await ask(20), 20);
});

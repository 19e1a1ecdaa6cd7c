import test from 'ava';
import { copyFileSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGslbd } from '../../src/process/gslbdProcess.js';
import { dig } from '../support/dig.js';

/**
 * Issue 23, item 4: records from a zone's RFC 1035 zone file (`test/fixtures/zoneFile/example.test.zone`)
 * answered by the standalone listener, read by the real dig: the SOA (the file's serial), an
 * address of an omitted owner with `$TTL`, a TXT with escapes, and an HTTPS record below `$ORIGIN`.
 */

test('dig reads records of a zone file from the standalone listener', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-zonefile-e2e-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  copyFileSync(join(import.meta.dirname, '../fixtures/zoneFile/example.test.zone'), join(dir, 'example.test.zone'));
  writeFileSync(
    join(dir, 'gslbd.yaml'),
    'listeners:\n  dns: [{ address: 127.0.0.1, port: 0 }]\nzones:\n  - name: example.test\n    zoneFile: example.test.zone\n',
  );
  const gslbd = await startGslbd(join(dir, 'gslbd.yaml'), { signals: false, watchFile: false, logDestination: openSync(join(dir, 'gslbd.log'), 'a') });
  t.teardown(() => gslbd.stop());
  const server = gslbd.dns.bound[0]!;
  const answer = async (name: string, type: string): Promise<string[]> =>
    (await dig(server, [name, type])).answer.map((r) => `${r.name} ${r.ttl} ${r.type} ${r.data}`);
  t.deepEqual(await answer('example.test', 'SOA'), ['example.test. 3600 SOA ns1.example.test. hostmaster.example.test. 2024010101 3600 600 604800 60']);
  t.deepEqual(await answer('www.example.test', 'AAAA'), ['www.example.test. 3600 AAAA 2001:db8::1']);
  t.deepEqual(await answer('txt.example.test', 'TXT'), ['txt.example.test. 3600 TXT "hello \\"world\\"" "plain" "a;b\\\\c"']);
  t.deepEqual(await answer('web.svc.example.test', 'HTTPS'), ['web.svc.example.test. 3600 HTTPS 0 www.example.test.']);
});

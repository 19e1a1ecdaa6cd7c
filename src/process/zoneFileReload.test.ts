import test from 'ava';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCandidateConfig } from './candidateConfig.js';
import { startGslbd } from './gslbdProcess.js';
import { udpQuery } from '../../test/support/dnsClient.js';

/**
 * Issue 23, item 4: a zone file is read again at every reload. An edit of the file alone applies
 * (the configuration file unchanged); a bad file keeps the running configuration and the reload's
 * error names `FILE:LINE`. One in-process engine answering on a loopback port.
 */

const CONFIG = `
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
zones:
  - name: example.test
    zoneFile: example.test.zone
`;

const zone = (www: string): string => `$TTL 300
@ IN SOA ns1 hostmaster ( 1 3600 600 604800 60 )
  IN NS ns1
ns1 A 192.0.2.53
www A ${www}
`;

test('a zone file is reloaded with the configuration; a bad one keeps the running configuration and names file:line', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-zonefile-reload-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, CONFIG);
  writeFileSync(join(dir, 'example.test.zone'), zone('192.0.2.1'));
  const gslbd = await startGslbd(file, { signals: false, watchFile: false, logDestination: openSync(join(dir, 'gslbd.log'), 'a') });
  t.teardown(() => gslbd.stop());
  const server = gslbd.dns.bound[0]!;
  const www = async (): Promise<string[]> => (await udpQuery(server, { name: 'www.example.test', type: 'A' })).answers;
  t.deepEqual(await www(), ['www.example.test A 192.0.2.1']);

  // The zone file is part of the fingerprint: a file watch event after an edit of it alone reloads.
  const before = readCandidateConfig(file).fingerprint;
  writeFileSync(join(dir, 'example.test.zone'), zone('192.0.2.2'));
  t.not(readCandidateConfig(file).fingerprint, before);
  t.like(await gslbd.reload('test'), { ok: true });
  t.deepEqual(await www(), ['www.example.test A 192.0.2.2']);

  writeFileSync(join(dir, 'example.test.zone'), zone('192.0.2.300'));
  const failed = await gslbd.reload('test');
  t.false(failed.ok);
  t.regex((failed as { error: string }).error, /zones\[0\]\.zoneFile: example\.test\.zone:5: A: "192\.0\.2\.300" is not an IPv4 address/);
  t.deepEqual(await www(), ['www.example.test A 192.0.2.2']);
});

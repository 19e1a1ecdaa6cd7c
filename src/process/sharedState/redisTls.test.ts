import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../test/support/freePort.js';
import { stopAllRedis, startRedis } from '../../../test/support/redisServer.js';
import { sleep, waitFor } from '../../../test/support/waitFor.js';
import { openStateStore, type OpenedStore } from './openStateStore.js';
import type { RedisStateStore } from './redisStateStore.js';
import { storeSchema } from './storeSchema.js';

/**
 * The store over TLS as an ACL user (src/process/sharedState/README.md): a real redis-server with
 * a `tls-port` only for clients, a certificate authority and server certificate made by openssl
 * here, the default user off and a `gslbd` user limited to the namespace's keys.
 */

const dir = mkdtempSync(join(tmpdir(), 'gslbd-redis-tls-'));
const opened: OpenedStore[] = [];
test.after.always(async () => {
  await Promise.all(opened.map((o) => o.stop()));
  await stopAllRedis();
  rmSync(dir, { recursive: true, force: true });
});

/** A CA and a server certificate for 127.0.0.1 signed by it (`openssl`, 2048-bit RSA, 1 day). */
function certificates(): { ca: string; cert: string; key: string } {
  const f = (name: string): string => join(dir, name);
  const openssl = (...args: string[]): void => void execFileSync('openssl', args, { stdio: 'ignore' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=gslbd test CA', '-keyout', f('ca.key'), '-out', f('ca.pem'));
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', f('server.key'), '-out', f('server.csr'));
  writeFileSync(f('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.pem'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    f('san.ext'),
    '-out',
    f('server.pem'),
  );
  return { ca: f('ca.pem'), cert: f('server.pem'), key: f('server.key') };
}

test('two nodes share state over TLS as an ACL user limited to the namespace; a wrong password or an untrusted server never connects', async (t) => {
  const c = certificates();
  const tlsPort = await freePort();
  const redis = await startRedis([
    ['tls-port', String(tlsPort)],
    ['tls-cert-file', c.cert],
    ['tls-key-file', c.key],
    ['tls-ca-cert-file', c.ca],
    ['tls-auth-clients', 'no'],
    ['user', 'default', 'off'],
    ['user', 'admin', 'on', '>admin-secret', '~*', '&*', '+@all'],
    ['user', 'gslbd', 'on', '>gslbd-secret', '~{tls}:*', '&*', '+@all'],
  ]);
  const store = async (node: string, password: string, tlsCaFile?: string): Promise<RedisStateStore> => {
    const o = openStateStore(
      storeSchema.parse({
        redis: {
          url: `rediss://127.0.0.1:${tlsPort}`,
          username: 'gslbd',
          password,
          ...(tlsCaFile ? { tlsCaFile } : {}),
          node,
          namespace: 'tls',
          connectTimeoutSeconds: password === 'gslbd-secret' && tlsCaFile ? 5 : 1,
        },
      }),
    );
    opened.push(o);
    await o.ready();
    return o.store as RedisStateStore;
  };
  const a = await store('a', 'gslbd-secret', c.ca);
  const b = await store('b', 'gslbd-secret', c.ca);
  t.is(a.connection().state, 'connected');
  a.map<number>('m').set('k', 1);
  await waitFor('b sees a’s write over TLS', () => b.map<number>('m').get('k') === 1, 5000);
  a.stream<number>('q').append(9);
  await waitFor('the stream entry is stored', async () => (await b.stream<number>('q').backlog('g')) === 1, 5000);
  t.deepEqual(
    (await b.stream<number>('q').read('g', 10)).map((e) => e.value),
    [9],
    'streams and consumer groups work within the ACL user’s keys',
  );
  t.is(redis.cli('--user', 'admin', '--pass', 'admin-secret', '--no-auth-warning', 'HGET', '{tls}:map:m', 'k'), '1');

  const wrong = await store('c', 'not-the-secret', c.ca);
  const untrusted = await store('d', 'gslbd-secret');
  await sleep(500);
  t.is(wrong.connection().state, 'disconnected', 'a wrong password is refused');
  t.is(untrusted.connection().state, 'disconnected', 'a server certificate of an authority not trusted is refused');
  t.is(wrong.map<number>('m').get('k'), undefined);
});

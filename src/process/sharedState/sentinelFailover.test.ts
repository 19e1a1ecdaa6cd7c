import test from 'ava';
import { startRedis, startSentinel, stopAllRedis } from '../../../test/support/redisServer.js';
import { waitFor } from '../../../test/support/waitFor.js';
import { openStateStore, type OpenedStore } from './openStateStore.js';
import type { RedisStateStore } from './redisStateStore.js';
import { storeSchema } from './storeSchema.js';

/**
 * Through Sentinel (one sentinel, quorum 1, 1 s down-after, a primary and a replica, all real):
 * the primary is killed, Sentinel promotes the replica, the client follows it, and the state
 * written before the failover is still there; replicas keep serving meanwhile.
 */

const opened: OpenedStore[] = [];
test.after.always(async () => {
  await Promise.all(opened.map((o) => o.stop()));
  await stopAllRedis();
});

test('a Sentinel failover: both nodes follow the new primary, nothing written is lost, reads never stop', async (t) => {
  const primary = await startRedis();
  const replica = await startRedis([['replicaof', '127.0.0.1', String(primary.port)]]);
  await waitFor('replica in sync', () => replica.cli('INFO', 'replication').includes('master_link_status:up'), 15_000);
  const sentinel = await startSentinel('gslbd', primary, 1000);
  const node = async (name: string): Promise<RedisStateStore> => {
    const o = openStateStore(
      storeSchema.parse({
        redis: { sentinels: [{ host: '127.0.0.1', port: sentinel.port }], masterName: 'gslbd', node: name, namespace: 's', connectTimeoutSeconds: 10 },
      }),
    );
    opened.push(o);
    t.true(await o.ready(), `${name} connected through the sentinel`);
    return o.store as RedisStateStore;
  };
  const a = await node('a');
  const b = await node('b');
  const ma = a.map<string>('ov');
  const mb = b.map<string>('ov');
  ma.set('before', 'v1');
  await waitFor('b sees before', () => mb.get('before') === 'v1', 5000);
  await waitFor('the replica has it', () => replica.cli('HGET', '{s}:map:ov', 'before') === '"v1"', 5000);

  await primary.kill();
  t.is(mb.get('before'), 'v1', 'the replica in process serves during the failover');
  const failoverStarted = Date.now();
  await waitFor('the replica promoted', () => replica.cli('ROLE').startsWith('master'), 30_000);
  ma.set('after', 'v2');
  await waitFor('a write after the failover reaches the other node', () => mb.get('after') === 'v2', 30_000);
  t.log(`failover: primary killed → a write on node a seen on node b after ${Date.now() - failoverStarted} ms`);
  t.is(replica.cli('HGET', '{s}:map:ov', 'before'), '"v1"', 'state written before the failover survived it');
  t.is(mb.get('before'), 'v1');
});

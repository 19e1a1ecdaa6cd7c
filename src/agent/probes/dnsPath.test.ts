import test from 'ava';
import { startDnsPeer } from '../../../test/support/dnsPeer.js';
import { probeInNamespace } from '../../../test/support/probeInNamespace.js';
import { createRoutedPath, type RoutedPath } from '../../../test/support/routedPath.js';

/**
 * DNS over UDP across routed network namespaces this test creates (test/support/routedPath.ts: agent ─
 * n routers ─ target, IPv4 and IPv6; removed in teardown): the peer in the target namespace answers
 * with Linux's default TTL and hop limit 64, each router takes one off, and the prober's native UDP
 * socket reads what is left (IP_RECVTTL, IPV6_RECVHOPLIMIT), from which it infers hops as for ICMP.
 */

const paths: RoutedPath[] = [];
test.after.always(async () => {
  await Promise.all(paths.map((p) => p.destroy()));
});

for (const routers of [1, 2]) {
  test(`DNS over UDP across ${routers} routed namespace(s), IPv4 and IPv6: hops = ${routers}, TTL = ${64 - routers}, nothing lost`, async (t) => {
    const p = createRoutedPath(routers, { ipv6: true });
    paths.push(p);
    const peer = await startDnsPeer(p);
    for (const target of [p.targetAddress, p.targetAddress6!]) {
      const config = { allow: [`${target}/${target.includes(':') ? 128 : 32}`], methods: ['dns'], port: 53, trainLength: 5, gapMs: 5, timeoutMs: 2000 };
      const [r] = await probeInNamespace(p, config, target);
      t.like(r, { target, method: 'dns', sent: 5, received: 5, ttl: 64 - routers, hops: routers });
    }
    t.deepEqual(await peer.stop(), { udp: 10, tcp: 0 });
  });
}

import test from 'ava';
import { startDnsPeer } from '../../../test/support/dnsPeer.js';
import { startIcmpResponder } from '../../../test/support/icmpResponder.js';
import { probeInNamespace } from '../../../test/support/probeInNamespace.js';
import { createRoutedPath, type RoutedPath } from '../../../test/support/routedPath.js';

/**
 * Probes over IPv6 across routed network namespaces this test creates (test/support/routedPath.ts
 * with `ipv6`: agent ─ n routers forwarding IPv6 ─ target, fd00:99:i::/64 per link, only inside
 * them, removed in teardown). ICMPv6: the target's kernel ignores echo requests
 * (`net.ipv6.icmp.echo_ignore_all`), a userspace responder answers with Linux's default hop limit
 * 64, each router takes one off, and the prober reads it from IPV6_HOPLIMIT (RFC 3542 §6.3). DNS
 * over UDP and TCP connects go to a peer on port 53 in the target namespace.
 */

const paths: RoutedPath[] = [];
test.after.always(async () => {
  await Promise.all(paths.map((p) => p.destroy()));
});

function path(routers: number): RoutedPath {
  const p = createRoutedPath(routers, { ipv6: true });
  paths.push(p);
  return p;
}

const probes = (target: string, methods: string[]): Record<string, unknown> => ({
  allow: [`${target}/128`],
  methods,
  port: 53,
  trainLength: 5,
  gapMs: 5,
  timeoutMs: 2000,
  maxPacketsPerSecond: 1000,
});

for (const routers of [0, 1, 2]) {
  test(`ICMPv6 across ${routers} routed namespace(s): hops = ${routers}, hop limit = ${64 - routers}, nothing lost`, async (t) => {
    const p = path(routers);
    const target = p.targetAddress6!;
    const responder = await startIcmpResponder(p, 0, 0, 1, 6);
    const [r] = await probeInNamespace(p, probes(target, ['icmp']), target);
    t.like(r, { target, method: 'icmp', sent: 5, received: 5, ttl: 64 - routers, hops: routers });
    t.is(await responder.stop(), 5, 'the responder saw the whole train');
  });
}

test('DNS over UDP and TCP connects over IPv6 across 2 routers: every packet answered, the peer saw each one', async (t) => {
  const p = path(2);
  const target = p.targetAddress6!;
  const peer = await startDnsPeer(p);
  const results = await probeInNamespace(p, probes(target, ['dns', 'tcp']), target);
  t.like(results, [
    { target, method: 'dns', sent: 5, received: 5, ttl: 62, hops: 2 },
    { target, method: 'tcp', sent: 5, received: 5 },
  ]);
  t.is(results[1]!.ttl, undefined, 'a TCP connect gives no TTL');
  t.deepEqual(await peer.stop(), { udp: 5, tcp: 5 });
});

test('an IPv6 target written in another spelling (fd00:99:1:0:0:0:0:2) is measured, not read as all lost', async (t) => {
  const p = path(1);
  const spelled = 'fd00:99:1:0:0:0:0:2';
  t.is(p.targetAddress6, 'fd00:99:1::2');
  const responder = await startIcmpResponder(p, 0, 0, 1, 6);
  const peer = await startDnsPeer(p);
  const results = await probeInNamespace(p, { ...probes(spelled, ['icmp', 'dns']), allow: ['fd00:99:1::/64'] }, spelled);
  t.like(results, [
    { target: spelled, method: 'icmp', sent: 5, received: 5, hops: 1 },
    { target: spelled, method: 'dns', sent: 5, received: 5 },
  ]);
  await responder.stop();
  await peer.stop();
});

test('an IPv6 probe outside probes.allow is refused before any packet: the peers see nothing', async (t) => {
  const p = path(1);
  const responder = await startIcmpResponder(p, 0, 0, 1, 6);
  const peer = await startDnsPeer(p);
  await t.throwsAsync(probeInNamespace(p, { ...probes(p.targetAddress6!, ['icmp', 'dns', 'tcp']), allow: [`${p.agentAddress6}/128`] }, p.targetAddress6!), {
    message: /outside probes\.allow/,
  });
  t.is(await responder.stop(), 0);
  t.deepEqual(await peer.stop(), { udp: 0, tcp: 0 });
});

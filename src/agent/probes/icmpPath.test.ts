import test from 'ava';
import { startIcmpResponder } from '../../../test/support/icmpResponder.js';
import { probeInNamespace } from '../../../test/support/probeInNamespace.js';
import { createRoutedPath, type RoutedPath } from '../../../test/support/routedPath.js';

/**
 * ICMP echo trains across routed network namespaces this test creates (test/support/routedPath.ts:
 * agent ─ n routers ─ target; addresses only inside them, removed in teardown). The target's kernel
 * ignores echo requests; a userspace responder answers (or drops, seeded), so every reply is one the
 * test set. Hops and TTL come from the replies' TTL: the responder sends with Linux's 64, each
 * router takes one off.
 */

const paths: RoutedPath[] = [];
test.after.always(async () => {
  await Promise.all(paths.map((p) => p.destroy()));
});

function path(routers: number): RoutedPath {
  const p = createRoutedPath(routers);
  paths.push(p);
  return p;
}

const probes = (target: string, over: Record<string, unknown> = {}): Record<string, unknown> => ({
  allow: [`${target}/32`],
  methods: ['icmp'],
  trainLength: 5,
  gapMs: 5,
  timeoutMs: 2000,
  maxPacketsPerSecond: 1000,
  ...over,
});

for (const routers of [0, 1, 2]) {
  test(`ICMP across ${routers} routed namespace(s): hops = ${routers}, TTL = ${64 - routers}, nothing lost`, async (t) => {
    const p = path(routers);
    const responder = await startIcmpResponder(p, 0);
    const [r] = await probeInNamespace(p, probes(p.targetAddress), p.targetAddress);
    t.like(r, { target: p.targetAddress, method: 'icmp', sent: 5, received: 5, ttl: 64 - routers, hops: routers });
    t.is(await responder.stop(), 5, 'the responder saw the whole train');
  });
}

test('ICMP with 20 % loss at the responder: the loss read is within the binomial bound (n = 200, ± 3σ = ± 17 packets)', async (t) => {
  const p = path(1);
  const responder = await startIcmpResponder(p, 0, 0.2, 7);
  const [r] = await probeInNamespace(p, probes(p.targetAddress, { trainLength: 200, gapMs: 2, timeoutMs: 500 }), p.targetAddress);
  t.is(await responder.stop(), 200, 'every request reached the responder');
  const lost = r!.sent - r!.received;
  t.true(Math.abs(lost - 40) <= 17, `${lost} of 200 lost`);
  t.like(r, { ttl: 63, hops: 1 });
});

test('an ICMP probe outside probes.allow is refused before any packet: the responder sees nothing', async (t) => {
  const p = path(0);
  const responder = await startIcmpResponder(p, 0);
  await t.throwsAsync(probeInNamespace(p, probes('10.99.0.1'), p.targetAddress), { message: /outside probes\.allow/ });
  t.is(await responder.stop(), 0);
});

import test from 'ava';
import { startIcmpResponder } from '../../../test/support/icmpResponder.js';
import { probeInNamespace } from '../../../test/support/probeInNamespace.js';
import { createRoutedPath, sysctl, type RoutedPath } from '../../../test/support/routedPath.js';

/**
 * ICMP probes without CAP_NET_RAW (src/agent/probes/nativeSockets.ts): the prober runs as `nobody`
 * (uid and gid 65534, no capability: `setpriv`) in the agent namespace of a routed path this test
 * creates (test/support/routedPath.ts, one router, IPv4 and IPv6; removed in teardown). A raw socket is
 * refused, so it opens ping sockets, which the kernel grants to the groups of
 * `net.ipv4.ping_group_range` — a per-namespace setting (a new namespace's "1 0" grants none), set
 * here in the test's own namespace only, so nothing outside it needs restoring. The results must be
 * the raw path's: every echo answered, the same TTL and hops.
 */

let p: RoutedPath;
test.before(() => {
  p = createRoutedPath(1, { ipv6: true });
});
test.after.always(async () => {
  await p?.destroy();
});

const asNobody = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', '--bounding-set=-all'];
const config = (target: string): Record<string, unknown> => ({
  allow: [`${target}/${target.includes(':') ? 128 : 32}`],
  methods: ['icmp'],
  trainLength: 5,
  gapMs: 5,
  timeoutMs: 2000,
});

test.serial("without CAP_NET_RAW, ICMP and ICMPv6 probes go over ping sockets when ping_group_range allows, with the raw path's results", async (t) => {
  for (const family of [4, 6] as const) {
    const target = family === 6 ? p.targetAddress6! : p.targetAddress;
    const responder = await startIcmpResponder(p, 0, 0, 1, family);
    sysctl(p.agentNs, 'net.ipv4.ping_group_range', '1 0');
    await t.throwsAsync(probeInNamespace(p, config(target), target, { wrapper: asNobody }), { message: /ping_group_range/ }, 'no raw socket, no ping group');
    const [raw] = await probeInNamespace(p, config(target), target);
    sysctl(p.agentNs, 'net.ipv4.ping_group_range', '65534 65534');
    const [ping] = await probeInNamespace(p, config(target), target, { wrapper: asNobody });
    t.like(raw, { target, method: 'icmp', sent: 5, received: 5, ttl: 63, hops: 1 });
    const { rttMinMs: _a, rttMedianMs: _b, jitterMs: _c, ...rawCounts } = raw!;
    const { rttMinMs: _d, rttMedianMs: _e, jitterMs: _f, ...pingCounts } = ping!;
    t.deepEqual(pingCounts, rawCounts, `IPv${family}: the ping socket's train reads as the raw socket's`);
    t.true(ping!.rttMinMs! >= 0 && ping!.rttMedianMs! < 100, `IPv${family} ping socket: min ${ping!.rttMinMs} median ${ping!.rttMedianMs} ms`);
    t.is(await responder.stop(), 10, 'the responder answered both trains');
  }
});

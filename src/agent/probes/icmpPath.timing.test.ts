import test from 'ava';
import { startIcmpResponder } from '../../../test/support/icmpResponder.js';
import { probeInNamespace } from '../../../test/support/probeInNamespace.js';
import { createRoutedPath, type RoutedPath } from '../../../test/support/routedPath.js';

/**
 * ICMP and ICMPv6 echo RTT against set delays across two routed namespaces (test/support/routedPath.ts; the
 * namespaces are removed in teardown): a userspace responder in the target namespace answers each
 * request after d ms. The RTT runs from just before `sendto` to the kernel's receive timestamp, so
 * only the responder's own timer can stretch it: a reply never comes before d, and the upper bounds
 * are the (min ≤ d + 3, median ≤ d + 5).
 */

let p: RoutedPath;
test.before(() => {
  p = createRoutedPath(2, { ipv6: true });
});
test.after.always(async () => {
  await p?.destroy();
});

for (const family of [4, 6] as const) {
  for (const d of [5, 40, 120]) {
    test.serial(
      `ICMP${family === 6 ? 'v6' : ''} train with a set delay of ${d} ms two hops away: min RTT in [d, d + 3], median ≤ d + 5, nothing lost`,
      async (t) => {
        const target = family === 6 ? p.targetAddress6! : p.targetAddress;
        const responder = await startIcmpResponder(p, d, 0, 1, family);
        const config = {
          allow: [`${target}/${family === 6 ? 128 : 32}`],
          methods: ['icmp'],
          trainLength: 20,
          gapMs: 10,
          timeoutMs: 2000,
          maxPacketsPerSecond: 1000,
        };
        const [r] = await probeInNamespace(p, config, target);
        await responder.stop();
        t.like(r, { method: 'icmp', sent: 20, received: 20, hops: 2 });
        t.true(r!.rttMinMs! >= d && r!.rttMinMs! <= d + 3, `min ${r!.rttMinMs} ms`);
        t.true(r!.rttMedianMs! <= d + 5, `median ${r!.rttMedianMs} ms`);
        t.log(`IPv${family} d=${d}: min ${r!.rttMinMs} median ${r!.rttMedianMs} jitter ${r!.jitterMs}`);
      },
    );
  }
}

import test from 'ava';
import { startDnsPeer } from '../../../test/support/dnsPeer.js';
import { probeInNamespace } from '../../../test/support/probeInNamespace.js';
import { createDelayLine, type DelayLine } from '../../../test/support/tunDelayLine.js';

/**
 * TCP connect and DNS trains against set delays across two network namespaces joined by the TUN
 * delay line (test/support/tunDelayLine.ts and .c: no `tc netem` here), IPv4 and IPv6. The line
 * holds each packet half the set delay each way from the moment it read it, so no answer can come
 * before d. A connected TCP probe's RTT is the kernel's SYN → SYN-ACK sample (TCP_INFO), so it gets
 * the bounds (min in [d, d + 3], median ≤ d + 5) even on a loaded machine. A DNS probe is
 * timed by Node (`performance.now()` around a datagram: Node's UDP sockets expose no kernel
 * timestamp), so the event loop's lateness adds to it: on this shared 2-core machine at load
 * average 20–28 its median ran up to 16 ms over d, so DNS gets [d, d + 15] for the minimum and d + 30
 * for the median. The namespaces and the line are removed in teardown.
 */

const lines: DelayLine[] = [];
test.after.always(async () => {
  await Promise.all(lines.map((l) => l.destroy()));
});

const probes = (targets: string[], methods: string[], port = 53): Record<string, unknown> => ({
  allow: targets.map((a) => `${a}/${a.includes(':') ? 128 : 32}`),
  methods,
  port,
  trainLength: 20,
  gapMs: 10,
  timeoutMs: 2000,
  maxPacketsPerSecond: 1000,
});

for (const d of [5, 40, 120]) {
  test.serial(
    `TCP connect and DNS trains over a ${d} ms delay line, IPv4 and IPv6: TCP min RTT in [d, d + 3] and median ≤ d + 5 (DNS: d + 15, d + 30), nothing lost`,
    async (t) => {
      const line = await createDelayLine({ toTargetMs: d / 2, toAgentMs: d / 2 });
      lines.push(line);
      const peer = await startDnsPeer(line);
      for (const target of [line.targetAddress, line.targetAddress6!]) {
        const results = await probeInNamespace(line, probes([target], ['tcp', 'dns']), target);
        for (const r of results) {
          t.like(r, { target, sent: 20, received: 20 });
          const [minSlack, medianSlack] = r.method === 'tcp' ? [3, 5] : [15, 30];
          t.true(r.rttMinMs! >= d && r.rttMinMs! <= d + minSlack, `${target} ${r.method} min ${r.rttMinMs} ms`);
          t.true(r.rttMedianMs! <= d + medianSlack, `${target} ${r.method} median ${r.rttMedianMs} ms`);
          t.log(`d=${d} ${target} ${r.method}: min ${r.rttMinMs} median ${r.rttMedianMs} jitter ${r.jitterMs}`);
        }
      }
      t.deepEqual(await peer.stop(), { udp: 40, tcp: 40 });
      const counters = await line.stopLine();
      t.is(counters.toTarget.dropped + counters.toTarget.overflowed + counters.toAgent.overflowed, 0);
    },
  );
}

test.serial('a TCP connect refused by the target (RST) times the path through a 40 ms delay line too (timed by Node: min in [40, 50])', async (t) => {
  const line = await createDelayLine({ toTargetMs: 20, toAgentMs: 20 });
  lines.push(line);
  const [r] = await probeInNamespace(line, probes([line.targetAddress], ['tcp'], 9), line.targetAddress);
  t.like(r, { method: 'tcp', sent: 20, received: 20 });
  // A refused socket has no TCP_INFO: the event loop times it, hence the DNS-like slack.
  t.true(r!.rttMinMs! >= 40 && r!.rttMinMs! <= 50, `min ${r!.rttMinMs} ms`);
});

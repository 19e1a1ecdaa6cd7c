import test from 'ava';
import { startDnsPeer } from '../../../test/support/dnsPeer.js';
import { probeInNamespace } from '../../../test/support/probeInNamespace.js';
import { createDelayLine, type DelayLine } from '../../../test/support/tunDelayLine.js';

/**
 * TCP connect and DNS trains against set delays across two network namespaces joined by the TUN
 * delay line (test/support/tunDelayLine.ts and .c: no `tc netem` here), IPv4 and IPv6. The line
 * holds each packet half the set delay each way from the moment it read it, so no answer can come
 * before d. A connected TCP probe's RTT is the kernel's SYN → SYN-ACK sample (TCP_INFO); a DNS probe's
 * runs from just before `sendto` to the kernel's receive timestamp (the native UDP socket of
 * src/agent/probes/nativeSockets.ts). Neither is stretched by a late event loop, so both get the
 * issue's bounds (min in [d, d + 3], median ≤ d + 5) on a loaded machine — and with the prober's own
 * event loop blocked most of the time. The namespaces and the line are removed in teardown.
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
  test.serial(`TCP connect and DNS trains over a ${d} ms delay line, IPv4 and IPv6: min RTT in [d, d + 3] and median ≤ d + 5, nothing lost`, async (t) => {
    const line = await createDelayLine({ toTargetMs: d / 2, toAgentMs: d / 2 });
    lines.push(line);
    const peer = await startDnsPeer(line);
    for (const target of [line.targetAddress, line.targetAddress6!]) {
      const results = await probeInNamespace(line, probes([target], ['tcp', 'dns']), target);
      for (const r of results) {
        t.like(r, { target, sent: 20, received: 20 });
        t.true(r.rttMinMs! >= d && r.rttMinMs! <= d + 3, `${target} ${r.method} min ${r.rttMinMs} ms`);
        t.true(r.rttMedianMs! <= d + 5, `${target} ${r.method} median ${r.rttMedianMs} ms`);
        t.log(`d=${d} ${target} ${r.method}: min ${r.rttMinMs} median ${r.rttMedianMs} jitter ${r.jitterMs}`);
      }
    }
    t.deepEqual(await peer.stop(), { udp: 40, tcp: 40 });
    const counters = await line.stopLine();
    t.is(counters.toTarget.dropped + counters.toTarget.overflowed + counters.toAgent.overflowed, 0);
  });
}

test.serial(
  "a DNS train over a 40 ms delay line while the prober's event loop is blocked 30 ms out of every 35: min RTT in [d, d + 3], median ≤ d + 5, IPv4 and IPv6",
  async (t) => {
    const line = await createDelayLine({ toTargetMs: 20, toAgentMs: 20 });
    lines.push(line);
    const peer = await startDnsPeer(line);
    for (const target of [line.targetAddress, line.targetAddress6!]) {
      const [r] = await probeInNamespace(line, probes([target], ['dns']), target, { stallMs: 30 });
      t.like(r, { target, method: 'dns', sent: 20, received: 20 });
      t.true(r!.rttMinMs! >= 40 && r!.rttMinMs! <= 43, `${target} min ${r!.rttMinMs} ms`);
      t.true(r!.rttMedianMs! <= 45, `${target} median ${r!.rttMedianMs} ms`);
      t.log(`stalled loop, ${target} dns: min ${r!.rttMinMs} median ${r!.rttMedianMs} jitter ${r!.jitterMs}`);
    }
    t.deepEqual(await peer.stop(), { udp: 40, tcp: 0 });
  },
);

test.serial('a TCP connect refused by the target (RST) times the path through a 40 ms delay line too (timed by Node: min in [40, 50])', async (t) => {
  const line = await createDelayLine({ toTargetMs: 20, toAgentMs: 20 });
  lines.push(line);
  const [r] = await probeInNamespace(line, probes([line.targetAddress], ['tcp'], 9), line.targetAddress);
  t.like(r, { method: 'tcp', sent: 20, received: 20 });
  // A refused socket has no TCP_INFO: the event loop times it, hence the DNS-like slack.
  t.true(r!.rttMinMs! >= 40 && r!.rttMinMs! <= 50, `min ${r!.rttMinMs} ms`);
});

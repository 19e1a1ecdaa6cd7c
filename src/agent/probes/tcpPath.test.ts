import test from 'ava';
import { startDnsPeer } from '../../../test/support/dnsPeer.js';
import { probeInNamespace } from '../../../test/support/probeInNamespace.js';
import { createDelayLine, type DelayLine } from '../../../test/support/tunDelayLine.js';

/**
 * Loss on a TCP path between two network namespaces joined by the TUN delay line
 * (test/support/tunDelayLine.ts and .c), which drops a seeded share of the agent → target packets:
 * a dropped SYN is not answered within the train's deadline (the kernel's SYN retransmission waits
 * 1 s, the deadline is 500 ms), so it counts as lost. The namespaces and the line are removed in teardown.
 */

const lines: DelayLine[] = [];
test.after.always(async () => {
  await Promise.all(lines.map((l) => l.destroy()));
});

const probes = (target: string, methods: string[], trainLength: number): Record<string, unknown> => ({
  allow: [`${target}/32`],
  methods,
  port: 53,
  trainLength,
  gapMs: 2,
  timeoutMs: 500,
  maxPacketsPerSecond: 1000,
});

test('TCP connects through a line dropping 20 %: the loss read is within the binomial bound (n = 200, ± 3σ = ± 17), and the peer accepted no more than were answered', async (t) => {
  const line = await createDelayLine({ toTargetMs: 1, toAgentMs: 1, loss: 0.2, seed: 11 });
  lines.push(line);
  const peer = await startDnsPeer(line);
  const [r] = await probeInNamespace(line, probes(line.targetAddress, ['tcp'], 200), line.targetAddress);
  const lost = r!.sent - r!.received;
  t.true(Math.abs(lost - 40) <= 17, `${lost} of 200 lost`);
  // A SYN-ACK counts as answered; the peer counts a connection only once the handshake's last ACK (which the line may drop too) arrives.
  t.true((await peer.stop()).tcp <= r!.received);
  t.true((await line.stopLine()).toTarget.dropped >= lost, 'each lost connect is a SYN the line dropped');
});

test('a line that drops everything: TCP and DNS trains read 100 % loss, no RTT', async (t) => {
  const line = await createDelayLine({ toTargetMs: 1, toAgentMs: 1, loss: 1 });
  lines.push(line);
  const peer = await startDnsPeer(line);
  const results = await probeInNamespace(line, probes(line.targetAddress, ['tcp', 'dns'], 5), line.targetAddress);
  t.like(results, [
    { method: 'tcp', sent: 5, received: 0 },
    { method: 'dns', sent: 5, received: 0 },
  ]);
  t.is(results[0]!.rttMinMs, undefined);
  t.deepEqual(await peer.stop(), { udp: 0, tcp: 0 });
});

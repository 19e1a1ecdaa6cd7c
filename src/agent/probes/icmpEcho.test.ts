import test from 'ava';
import { IcmpEchoer } from './icmpEcho.js';
import { PacketBudget } from './packetBudget.js';

// Echo trains to 127.0.0.1, answered by the kernel (raw socket: runs as root, as the tests do).

test('1,000 ICMP trains at once to one address each get all their replies: identifiers unique in flight, a burst fits the socket', async (t) => {
  const echoer = new IcmpEchoer();
  const pacing = { length: 2, gapMs: 1, timeoutMs: 5000, budget: new PacketBudget(100_000) };
  // With identifiers drawn at random, 1,000 trains share one with probability 1 − e^(−1000²/2¹⁷) ≈ 99.95 %;
  // a train whose entries another one overwrote never settled. And with a default receive buffer, reading
  // its own requests too (loopback), the socket dropped most of a burst of 1,000 replies.
  const outcomes = await Promise.all(Array.from({ length: 1000 }, () => echoer.train('127.0.0.1', pacing)));
  t.is(outcomes.filter((o) => o.rtts.length === 2).length, 1000);
  t.true(outcomes.every((o) => o.ttls!.length === 2 && o.ttls!.every((ttl) => ttl === 64)));
});

test('a train to an address the kernel refuses to send to counts its packets as lost, and the socket is released', async (t) => {
  const echoer = new IcmpEchoer();
  const pacing = { length: 3, gapMs: 1, timeoutMs: 200, budget: new PacketBudget(1000) };
  // 0.0.0.0 as a destination means this host on Linux; 255.255.255.255 needs SO_BROADCAST: sendto fails (EACCES).
  const outcome = await echoer.train('255.255.255.255', pacing);
  t.deepEqual(outcome, { sent: 3, rtts: [], ttls: [] });
  const again = await echoer.train('127.0.0.1', pacing);
  t.is(again.rtts.length, 3, 'a later train opens a new socket');
});

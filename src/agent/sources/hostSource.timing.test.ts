import test from 'ava';
import { execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { writeFileSync } from 'node:fs';
import { hostSourceSchema } from './hostSchema.js';
import { HostSource } from './hostSource.js';

/**
 * The host source's bandwidth against a known transfer over a test veth pair (root namespace ↔ a
 * network namespace this test creates; addresses only inside them): UDP datagrams of a known
 * size at a known rate, read back as bits/s over the window, ± 10 %. CPU and memory against known
 * loads: hostLoad.timing.test.ts.
 */

const NS = `gslbdbw${process.pid % 100_000}`;
const HOST_IF = `gbw${process.pid % 100_000}a`;
const PEER_IF = `gbw${process.pid % 100_000}b`;

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: 'pipe' });
}

test.before(() => {
  ip('netns', 'add', NS);
  ip('link', 'add', HOST_IF, 'type', 'veth', 'peer', 'name', PEER_IF);
  ip('link', 'set', PEER_IF, 'netns', NS);
  // Only the datagrams may cross the veth: no IPv6 (router solicitations, DAD) on either end; the
  // peer holds no address, so it drops the datagrams silently (no ICMP back), and a static
  // neighbour entry means no ARP exchange.
  writeFileSync(`/proc/sys/net/ipv6/conf/${HOST_IF}/disable_ipv6`, '1');
  execFileSync('ip', ['netns', 'exec', NS, 'sh', '-c', `echo 1 > /proc/sys/net/ipv6/conf/${PEER_IF}/disable_ipv6`]);
  ip('addr', 'add', '10.251.0.1/30', 'dev', HOST_IF);
  ip('link', 'set', HOST_IF, 'up');
  ip('-n', NS, 'link', 'set', PEER_IF, 'up');
  const mac = execFileSync('ip', ['-n', NS, '-j', 'link', 'show', PEER_IF], { encoding: 'utf8' });
  ip('neigh', 'replace', '10.251.0.2', 'lladdr', (JSON.parse(mac) as { address: string }[])[0]!.address, 'dev', HOST_IF, 'nud', 'permanent');
});

test.after.always(() => {
  try {
    ip('link', 'del', HOST_IF);
  } catch {
    // gone with the namespace already
  }
  try {
    ip('netns', 'del', NS);
  } catch {
    // never created
  }
});

test('bandwidth of a configured interface: a known UDP transfer over a veth reads its rate ± 10 %, and its share of capacity', async (t) => {
  const source = new HostSource(hostSourceSchema.parse({ interfaces: [{ name: HOST_IF, capacityMbps: 10 }] }), undefined);
  const socket = createSocket('udp4');
  t.teardown(() => socket.close());
  const payload = Buffer.alloc(1000);
  const packets = 400;
  await source.baseline();
  const started = performance.now();
  // 400 datagrams of 1000 bytes over ~1 s: each is 1042 bytes on the veth (Ethernet 14 + IPv4 20 + UDP 8).
  for (let i = 0; i < packets; i++) {
    await new Promise<void>((done) => socket.send(payload, 9, '10.251.0.2', () => done()));
    if (i % 40 === 39) await new Promise((r) => setTimeout(r, 100));
  }
  const reading = await source.read();
  const seconds = (performance.now() - started) / 1000;
  const expected = (packets * 1042 * 8) / reading.windowSeconds;
  const measured = reading.interfaces[HOST_IF]!.bitsPerSecond;
  t.log(`sent ${packets} × 1042 B in ${seconds.toFixed(2)} s; window ${reading.windowSeconds} s; expected ${Math.round(expected)} bit/s, measured ${measured}`);
  t.true(Math.abs(measured - expected) <= expected * 0.1, `measured ${measured} vs expected ${Math.round(expected)} bit/s`);
  t.is(reading.sample.bw, measured);
  t.true(Math.abs(reading.interfaces[HOST_IF]!.percentOfCapacity! - (measured / 10e6) * 100) < 0.01);
  t.true(typeof reading.sample.cpu === 'number' && typeof reading.sample.mem === 'number');
  t.is(reading.sample.status, 'up', 'no check points: up while the agent runs');
});

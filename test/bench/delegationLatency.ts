import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import dnsPacket from 'dns-packet';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import type { BenchContext } from './harness/benchGroup.js';

/** The table the delegation rows go to. */
export const DELEGATION_TABLE = 'proximity-delegation';
/** Query pairs per run (one through the top tier, one straight to the sub-tier, interleaved). */
const PAIRS = 2000;
const WARM_UP_PAIRS = 300;

/** The sub-tier (PDNS-0.1 of seed 000): its own zones and data centers, keyed by the ECS network. */
const SUB_TIER = `listeners: { dns: [{ address: 127.0.0.1, port: 0 }] }
logging: { level: silent }
networkProximity:
  zones:
    - { id: "0.1.1", name: Boston }
    - { id: "0.1.2", name: Atlanta }
  defaultOrder: ["0.1.2"]
  ecs: true
zones:
  - { name: work.test, soa: { mname: ns1.z01.work.test, rname: hostmaster.work.test }, ns: [ns1.z01.work.test] }
datacenters:
  - { name: boston, proximityZone: "0.1.1" }
  - { name: atlanta, proximityZone: "0.1.2" }
services:
  - { name: web, endpoints: [{ dc: boston, address: 192.0.2.11 }, { dc: atlanta, address: 192.0.2.12 }] }
records:
  - { name: www.work.test, type: A, ttl: 300, service: web, policy: { type: network-proximity } }
`;

/** The top tier: zone 0.1 delegated to the sub-tier on `port`, resolved recursively, first in the fallback order. */
const topTier = (port: number): string => `listeners: { dns: [{ address: 127.0.0.1, port: 0 }] }
logging: { level: silent }
networkProximity:
  zones:
    - { id: "0", name: U.S. }
    - { id: "0.1", name: East Coast, delegate: { nameServers: [{ name: ns1.z01.work.test, address: 127.0.0.1, port: ${port} }] } }
    - { id: "1", name: Europe }
  defaultOrder: ["0.1", "1"]
  ecs: true
zones:
  - { name: work.test, soa: { mname: ns1.work.test, rname: hostmaster.work.test }, ns: [ns1.work.test] }
datacenters:
  - { name: eu, proximityZone: "1" }
services:
  - { name: web, endpoints: [{ dc: eu, address: 192.0.2.3 }] }
records:
  - { name: www.work.test, type: A, ttl: 300, service: web, policy: { type: network-proximity, delegation: { mode: recursive } } }
`;

async function start(text: string, dir: string, name: string): Promise<RunningGslbd> {
  const file = join(dir, name);
  writeFileSync(file, text);
  return startGslbd(file, { signals: false, watchFile: false, logDestination: openSync('/dev/null', 'w') });
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/**
 * Recursive delegation's added latency (issue 20: "recursive delegation adds ≤ 1 ms p50 on
 * loopback beyond the sub-tier's own time"): two engines in this process on loopback, the top tier
 * delegating zone 0.1 to the sub-tier's standalone listener. Per run, {@link PAIRS} pairs of
 * queries, one at a time, interleaved (the order alternates per pair): `www.work.test A` with an
 * ECS /24 through the top tier, and the same question with the same ECS network straight to the
 * sub-tier. Every pair uses a new /24, so the top tier's answer cache (10,000 entries) never
 * answers: each query through the top tier asks the sub-tier. The value is queries/s one at a time
 * (1 / mean latency); the details are p50/p99 µs and, on the delegated row, the added p50.
 */
export async function measureDelegation(ctx: BenchContext): Promise<void> {
  if (!ctx.wants(DELEGATION_TABLE, 'direct') && !ctx.wants(DELEGATION_TABLE, 'delegated')) return;
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-bench-delegation-'));
  const sub = await start(SUB_TIER, dir, 'sub.yaml');
  let top: RunningGslbd | undefined;
  const socket = createSocket('udp4');
  try {
    const subAddr = sub.dns.bound[0]!;
    top = await start(topTier(subAddr.port), dir, 'top.yaml');
    const topAddr = top.dns.bound[0]!;
    socket.bind(0, '127.0.0.1');
    await once(socket, 'listening');
    let waiting: { id: number; resolve: (answer: string) => void } | undefined;
    socket.on('message', (msg) => {
      const m = dnsPacket.decode(msg);
      if (waiting === undefined || m.id !== waiting.id) return;
      const w = waiting;
      waiting = undefined;
      w.resolve((m.answers ?? []).map((a) => ('data' in a && typeof a.data === 'string' ? a.data : '')).join());
    });
    let nextId = 0;
    const ask = async (port: number, net: number): Promise<{ us: number; answer: string }> => {
      const id = (nextId = (nextId + 1) & 0xffff);
      const ip = `10.${(net >> 8) & 255}.${net & 255}.0`;
      const msg = dnsPacket.encode({
        type: 'query',
        id,
        flags: 0,
        questions: [{ type: 'A', name: 'www.work.test' }],
        additionals: [
          {
            type: 'OPT',
            name: '.',
            udpPayloadSize: 1232,
            options: [{ code: 8, family: 1, sourcePrefixLength: 24, scopePrefixLength: 0, ip }],
          } as dnsPacket.Answer,
        ],
      });
      const started = performance.now();
      const answer = new Promise<string>((resolve) => (waiting = { id, resolve }));
      socket.send(msg, port, '127.0.0.1');
      const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('timeout'), 2000).unref());
      const got = await Promise.race([answer, timeout]);
      return { us: (performance.now() - started) * 1000, answer: got };
    };
    let net = 0;
    const pairs = async (n: number): Promise<{ direct: number[]; delegated: number[] }> => {
      const direct: number[] = [];
      const delegated: number[] = [];
      for (let i = 0; i < n && !ctx.signal.aborted; i++) {
        net = (net + 1) % 65536;
        const order = i % 2 === 0 ? ([subAddr.port, topAddr.port] as const) : ([topAddr.port, subAddr.port] as const);
        for (const port of order) {
          const r = await ask(port, net);
          if (r.answer !== '192.0.2.12')
            throw new Error(`${port === topAddr.port ? 'the top tier' : 'the sub-tier'} answered ${r.answer}, expected 192.0.2.12`);
          (port === topAddr.port ? delegated : direct).push(r.us);
        }
      }
      return { direct, delegated };
    };
    await pairs(WARM_UP_PAIRS);
    for (let run = 1; run <= ctx.runs; run++) {
      const { direct, delegated } = await pairs(PAIRS);
      const stats = (us: number[]): { p50: number; p99: number; perSecond: number } => {
        const sorted = [...us].sort((a, b) => a - b);
        return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), perSecond: 1e6 / (us.reduce((a, b) => a + b, 0) / us.length) };
      };
      const d = stats(direct);
      const g = stats(delegated);
      ctx.record(DELEGATION_TABLE, 'direct', d.perSecond, { 'p50 µs': d.p50, 'p99 µs': d.p99 });
      ctx.record(DELEGATION_TABLE, 'delegated', g.perSecond, { 'p50 µs': g.p50, 'p99 µs': g.p99, 'added p50 µs': g.p50 - d.p50 });
      ctx.log(
        `run ${run} delegation: direct p50 ${d.p50.toFixed(0)} µs p99 ${d.p99.toFixed(0)} µs; delegated p50 ${g.p50.toFixed(0)} µs p99 ${g.p99.toFixed(0)} µs; added p50 ${(g.p50 - d.p50).toFixed(0)} µs`,
      );
    }
    const counts = ((await top.metrics.registry.metrics()).match(/^gslbd_proximity_delegations_total\{result="\w+"\} \d+$/gm) ?? []).map((l) =>
      l.replace('gslbd_proximity_delegations_total', ''),
    );
    ctx.note(
      `delegation: loopback, both engines in the benchmark process (one event loop, not pinned); the top tier's delegations after the runs: ${counts.join(', ')}`,
    );
  } finally {
    socket.close();
    await top?.stop();
    await sub.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

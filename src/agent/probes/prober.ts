import { isIPv6, SocketAddress } from 'node:net';
import type { ProbeResultReport } from '../../core/contracts/agentApi.js';
import { AllowList } from './allowList.js';
import { PacketBudget } from './packetBudget.js';
import { hopsFromTtl } from './hopCount.js';
import { IcmpEchoer } from './icmpEcho.js';
import { kernelTcpRttMs } from './nativeSockets.js';
import { dnsTrain, tcpTrain, type TrainOutcome, type TrainPacing } from './pathProbes.js';
import type { ProbesConfig } from './probeSchema.js';
import { trainStats } from './trainStats.js';

/** Thrown for a probe toward an address outside `probes.allow`: no packet was sent. */
export class ProbeRefusedError extends Error {}

/**
 * Measures the path to one address with every configured method (docs/PRODUCT.md §5): a train per
 * method, each packet paced by the global packet budget, and the result in the agent API's shape
 * (`src/core/contracts/agentApi.ts`: sent, received, RTT min and median, RFC 3550 jitter). ICMP
 * and DNS trains also give the reply TTL and the hops inferred from it (src/agent/probes/hopCount.ts):
 * the highest TTL of the train, i.e. its shortest path. TCP trains give no TTL (a connect reads no
 * datagram of the target's).
 */
export class Prober {
  private readonly allow: AllowList;
  readonly budget: PacketBudget;
  private readonly icmp = new IcmpEchoer();

  constructor(private readonly config: ProbesConfig) {
    this.allow = new AllowList(config.allow);
    this.budget = new PacketBudget(config.maxPacketsPerSecond);
  }

  /** Whether `target` may be probed (inside `probes.allow`). */
  allows(target: string): boolean {
    return this.allow.allows(target);
  }

  /**
   * One train per method toward `target`; the results name `target` as given. Replies are matched
   * against the address as Node writes it (RFC 5952: `fd00:99::2`), so any spelling of an IPv6
   * address (`fd00:99:0::2`, `FD00:99:0:0:0:0:0:2`) is measured, not read as all lost.
   * @throws ProbeRefusedError when `target` is outside `probes.allow` (nothing is sent).
   */
  async probe(target: string): Promise<ProbeResultReport[]> {
    if (!this.allow.allows(target)) throw new ProbeRefusedError(`${target} is outside probes.allow: not probed`);
    const address = new SocketAddress({ address: target, family: isIPv6(target) ? 'ipv6' : 'ipv4' }).address;
    const c = this.config;
    const pacing = { length: c.trainLength, gapMs: c.gapMs, timeoutMs: c.timeoutMs, budget: this.budget };
    const out: ProbeResultReport[] = [];
    for (const method of c.methods) {
      const outcome = await this.train(method, address, pacing);
      const stats = trainStats(outcome.rtts);
      const ttl = outcome.ttls && outcome.ttls.length > 0 ? Math.max(...outcome.ttls) : undefined;
      out.push({
        target,
        method,
        sent: outcome.sent,
        received: outcome.rtts.length,
        ...(stats ?? {}),
        ...(ttl === undefined ? {} : { ttl, hops: hopsFromTtl(ttl) }),
      });
    }
    return out;
  }

  private train(method: ProbesConfig['methods'][number], target: string, pacing: TrainPacing): Promise<TrainOutcome> {
    switch (method) {
      case 'icmp':
        return this.icmp.train(target, pacing);
      case 'dns':
        return dnsTrain(target, this.config.port, this.config.dnsName, pacing);
      case 'tcp':
        return tcpTrain(target, this.config.port, pacing, kernelTcpRttMs);
    }
  }
}

import type { ProbeResultReport } from '../../core/contracts/agentApi.js';
import { AllowList } from './allowList.js';
import { PacketBudget } from './packetBudget.js';
import { dnsTrain, tcpTrain, type TrainOutcome } from './pathProbes.js';
import type { ProbesConfig } from './probeSchema.js';
import { trainStats } from './trainStats.js';

/** Thrown for a probe toward an address outside `probes.allow`: no packet was sent. */
export class ProbeRefusedError extends Error {}

/**
 * Measures the path to one address with every configured method (docs/PRODUCT.md §5): a train per
 * method, each packet paced by the global packet budget, and the result in the agent API's shape
 * (`src/core/contracts/agentApi.ts`: sent, received, RTT min and median, RFC 3550 jitter). TTL and
 * hops are not measured: Node gives no access to a reply's TTL (IP_RECVTTL), see src/agent/README.md.
 */
export class Prober {
  private readonly allow: AllowList;
  readonly budget: PacketBudget;

  constructor(private readonly config: ProbesConfig) {
    this.allow = new AllowList(config.allow);
    this.budget = new PacketBudget(config.maxPacketsPerSecond);
  }

  /** Whether `target` may be probed (inside `probes.allow`). */
  allows(target: string): boolean {
    return this.allow.allows(target);
  }

  /**
   * One train per method toward `target`.
   * @throws ProbeRefusedError when `target` is outside `probes.allow` (nothing is sent).
   */
  async probe(target: string): Promise<ProbeResultReport[]> {
    if (!this.allow.allows(target)) throw new ProbeRefusedError(`${target} is outside probes.allow: not probed`);
    const c = this.config;
    const pacing = { length: c.trainLength, gapMs: c.gapMs, timeoutMs: c.timeoutMs, budget: this.budget };
    const out: ProbeResultReport[] = [];
    for (const method of c.methods) {
      const outcome: TrainOutcome = method === 'dns' ? await dnsTrain(target, c.port, c.dnsName, pacing) : await tcpTrain(target, c.port, pacing);
      const stats = trainStats(outcome.rtts);
      out.push({ target, method, sent: outcome.sent, received: outcome.rtts.length, ...(stats ?? {}) });
    }
    return out;
  }
}

import type { StateMap, StateStore } from '../../core/contracts/stateStore.js';
import { formatIp, maskAddress, parseIp } from '../../core/net/ipAddress.js';
import type { AgentIdentity } from './credentials.js';
import type { ProbeResultReport } from '../../core/contracts/agentApi.js';
import { PROBE_RESULTS_MAP, type StoredProbeResult } from '../../core/contracts/probeResultsMap.js';

export { PROBE_RESULTS_MAP, type StoredProbeResult } from '../../core/contracts/probeResultsMap.js';

/** The network (`address/len`) an address stands for, masked to the queue's lengths. */
export function networkOf(address: string, lengths: { readonly ipv4: number; readonly ipv6: number }): string {
  const a = parseIp(address);
  const len = a.family === 4 ? lengths.ipv4 : lengths.ipv6;
  return `${formatIp(maskAddress(a, len))}/${len}`;
}

/**
 * Probe results in the state store (map {@link PROBE_RESULTS_MAP}, key `<group>|<network>`): the
 * freshness check of the probe-request queue reads them, and they expire by the engine's receive
 * time. Bounded: results older than the TTL go at every sweep, and beyond `maxEntries` the least
 * recently updated go first.
 */
export class ProbeResults {
  private readonly map: StateMap<StoredProbeResult>;
  ttlMs = 900_000;
  maxEntries = 100_000;

  constructor(store: StateStore) {
    this.map = store.map<StoredProbeResult>(PROBE_RESULTS_MAP);
  }

  /** Stores an agent's results received at `nowMs`, each under its client network. */
  record(agent: AgentIdentity, probes: readonly ProbeResultReport[], lengths: { readonly ipv4: number; readonly ipv6: number }, nowMs: number): void {
    for (const p of probes) {
      const network = networkOf(p.target, lengths);
      const lossPercent = Math.round(((p.sent - p.received) / p.sent) * 100_000) / 1000;
      const key = resultKey(agent.group, network);
      // Removed first so the map's order is update order: the bound drops the least recently updated.
      this.map.delete(key);
      this.map.set(key, { ...p, agent: agent.name, group: agent.group, network, lossPercent, atMs: nowMs });
    }
    this.trimTo(this.maxEntries);
  }

  /** When `group` last measured `network` (engine receive time), or undefined. */
  measuredAt(group: string, network: string): number | undefined {
    return this.map.get(resultKey(group, network))?.atMs;
  }

  /** The stored result of (group, network), if any. */
  get(group: string, network: string): StoredProbeResult | undefined {
    return this.map.get(resultKey(group, network));
  }

  get size(): number {
    return this.map.size;
  }

  /** Drops results older than the TTL at `nowMs`; returns how many went. */
  sweep(nowMs: number): number {
    const old: string[] = [];
    for (const [key, r] of this.map.entries()) if (nowMs - r.atMs > this.ttlMs) old.push(key);
    for (const key of old) this.map.delete(key);
    return old.length;
  }

  private trimTo(max: number): void {
    if (this.map.size <= max) return;
    const excess: string[] = [];
    for (const [key] of this.map.entries()) {
      if (excess.length >= this.map.size - max) break;
      excess.push(key);
    }
    for (const key of excess) this.map.delete(key);
  }
}

function resultKey(group: string, network: string): string {
  return `${group}|${network}`;
}

import type { StateStore, StateStream } from '../../core/contracts/stateStore.js';
import type { Client } from '../../core/model/query.js';
import { formatIp, maskAddress, type IpAddress } from '../../core/net/ipAddress.js';
import { clientNetworkKey } from '../../core/views/metricView.js';
import type { ProbeDemand } from '../../core/views/probeDemand.js';
import type { ProbeQueueConfig } from './agentsSchema.js';
import type { ProbeResults } from './probeResults.js';

/** The state-store stream of probe requests, read once per consumer group (a data center's or a zone's agents). */
export const PROBE_REQUESTS_STREAM = 'agents.probeRequests';

/** Networks noted between two drains at most; more are dropped (and counted) until the next drain. */
export const MAX_PENDING = 4096;

/** Longest long-poll an agent may ask for (docs/PRODUCT.md §7 agent API: ≤ 30 s). */
export const MAX_WAIT_MS = 30_000;

/** One request in the stream: the address to probe and the client network it stands for. */
export interface ProbeRequest {
  /** The address agents probe: a resolver's address, or an ECS network's first address. */
  readonly target: string;
  /** The network it stands for (`address/len`): results are kept per network. */
  readonly network: string;
  /** When the engine queued it (ms since the epoch): requests older than `maxAgeSeconds` are skipped. */
  readonly atMs: number;
}

/** Counts for Prometheus (`gslbd_agent_probe_requests_total`). */
export interface ProbeQueueCounts {
  queued: number;
  /** Noted networks dropped because {@link MAX_PENDING} were already waiting for the drain. */
  dropped: number;
  given: number;
  /** Skipped at read: older than `maxAgeSeconds`. */
  expired: number;
  /** Skipped at read: the group measured the network within `refreshSeconds`. */
  fresh: number;
}

/**
 * The engine side of the probe-request queue (docs/PRODUCT.md §5 "queues a probe for a network it
 * does not know", §7). On the query path ({@link note}) it only remembers a network it has not
 * seen within `refreshSeconds` (one map lookup; an allocation only for such a network) and
 * schedules a drain; the drain, off the query path, appends the requests to the state store's
 * stream {@link PROBE_REQUESTS_STREAM}. Agents read it through the agent API per consumer group
 * (`dc:<name>`, `zone:<id>`), so every data center and zone measures every network once, while
 * the agents of one group share the work; at read, requests the group measured within
 * `refreshSeconds` or older than `maxAgeSeconds` are skipped. By default the resolver's address
 * is queued (seed 000 probes the client's DNS server); with `ecs: true` also the ECS network,
 * masked to at most /24 and /56 (RFC 7871 §11).
 */
export class ProbeQueue implements ProbeDemand {
  /** Opened at the first configuration, with its `maxLength` (a later change needs a restart). */
  private stream: StateStream<ProbeRequest> | undefined;
  private config: ProbeQueueConfig | undefined;
  /**
   * Networks noted recently → until when (ms) they are not noted again, one map per family and
   * length (`family * 256 + length`: keys of two lengths may be equal numbers); insertion order = age.
   */
  private readonly recent = new Map<number, Map<string | number, number>>();
  /** Noted networks waiting for the drain: the address to probe and the network (masked) it stands for. */
  private pending: { target: IpAddress; network: IpAddress; prefix: number }[] = [];
  private drainScheduled = false;
  private readonly waiters = new Set<() => void>();
  /** Appends seen (any node's): a long poll whose read was under way when one arrived reads again instead of waiting. */
  private appends = 0;
  private stopped = false;
  readonly counts: ProbeQueueCounts = { queued: 0, dropped: 0, given: 0, expired: 0, fresh: 0 };

  constructor(
    private readonly store: StateStore,
    private readonly results: ProbeResults,
    private readonly now: () => number,
  ) {}

  /** The running configuration (after a reload); before the first call nothing is queued. */
  configure(config: ProbeQueueConfig): void {
    if (this.stream === undefined) {
      this.stream = this.store.stream<ProbeRequest>(PROBE_REQUESTS_STREAM, { maxLength: config.maxLength });
      this.stream.watch(() => {
        this.appends++;
        for (const w of [...this.waiters]) w();
      });
    }
    if (this.config && (this.config.ipv4Prefix !== config.ipv4Prefix || this.config.ipv6Prefix !== config.ipv6Prefix)) this.recent.clear();
    this.config = config;
    this.results.ttlMs = config.resultTtlSeconds * 1000;
  }

  /** The lengths a target is masked to for its network. */
  get lengths(): { readonly ipv4: number; readonly ipv6: number } {
    return { ipv4: this.config?.ipv4Prefix ?? 24, ipv6: this.config?.ipv6Prefix ?? 48 };
  }

  /** Requests kept in the stream now. */
  get length(): number {
    return this.stream?.length ?? 0;
  }

  note(client: Client, nowMs: number): void {
    const c = this.config;
    if (c === undefined || this.stopped) return;
    const resolver = client.fromEcs ? client.resolver : client.address;
    if (resolver !== undefined) this.noteAddress(resolver, resolver.family === 4 ? c.ipv4Prefix : c.ipv6Prefix, nowMs, c);
    if (c.ecs && client.fromEcs) {
      const a = client.address;
      this.noteAddress(a, Math.min(a.family === 4 ? c.ipv4Prefix : c.ipv6Prefix, a.family === 4 ? 24 : 56, client.sourcePrefix), nowMs, c);
    }
  }

  /**
   * Up to `max` requests for `group` (oldest first), skipping those it measured within
   * `refreshSeconds` and those older than `maxAgeSeconds`; when none is there, waits up to
   * `waitMs` (at most {@link MAX_WAIT_MS}) for one.
   */
  async take(group: string, max: number, waitMs: number): Promise<ProbeRequest[]> {
    let seen = this.appends;
    const first = await this.read(group, max);
    if (first.length > 0 || waitMs <= 0 || this.stopped) return first;
    const deadline = this.now() + Math.min(waitMs, MAX_WAIT_MS);
    for (;;) {
      const remaining = deadline - this.now();
      if (remaining <= 0 || this.stopped) return [];
      // A shared store's read is asynchronous: an append seen while it ran must not be slept through.
      if (seen === this.appends)
        await new Promise<void>((resolve) => {
          const wake = (): void => {
            clearTimeout(timer);
            this.waiters.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, remaining);
          this.waiters.add(wake);
        });
      seen = this.appends;
      const got = await this.read(group, max);
      if (got.length > 0) return got;
    }
  }

  /** Requests `group` has not been given yet (before skipping). */
  backlog(group: string): Promise<number> {
    return this.stream?.backlog(group) ?? Promise.resolve(0);
  }

  /** Ends every long poll (they answer with no requests) and queues nothing more. */
  stop(): void {
    this.stopped = true;
    for (const w of [...this.waiters]) w();
  }

  /** Appends the noted networks to the stream (off the query path). */
  drain(): void {
    this.drainScheduled = false;
    const pending = this.pending;
    this.pending = [];
    const stream = this.stream;
    if (stream === undefined) return;
    const atMs = this.now();
    for (const { target, network, prefix } of pending) {
      stream.append({ target: formatIp(target), network: `${formatIp(network)}/${prefix}`, atMs });
      this.counts.queued++;
    }
  }

  private async read(group: string, max: number): Promise<ProbeRequest[]> {
    const c = this.config;
    const stream = this.stream;
    const out: ProbeRequest[] = [];
    if (c === undefined || stream === undefined) return out;
    const nowMs = this.now();
    while (out.length < max) {
      const batch = await stream.read(group, max - out.length);
      if (batch.length === 0) break;
      for (const { value } of batch) {
        if (nowMs - value.atMs > c.maxAgeSeconds * 1000) {
          this.counts.expired++;
          continue;
        }
        const measured = this.results.measuredAt(group, value.network);
        if (measured !== undefined && nowMs - measured < c.refreshSeconds * 1000) {
          this.counts.fresh++;
          continue;
        }
        out.push(value);
      }
    }
    this.counts.given += out.length;
    return out;
  }

  private noteAddress(address: IpAddress, prefix: number, nowMs: number, c: ProbeQueueConfig): void {
    const key = clientNetworkKey(address, { ipv4: prefix, ipv6: prefix });
    let recent = this.recent.get(address.family * 256 + prefix);
    if (recent === undefined) this.recent.set(address.family * 256 + prefix, (recent = new Map()));
    const until = recent.get(key);
    if (until !== undefined && until > nowMs) return;
    if (until !== undefined) recent.delete(key);
    recent.set(key, nowMs + c.refreshSeconds * 1000);
    if (recent.size > c.maxNetworks) recent.delete(recent.keys().next().value!);
    if (this.pending.length >= MAX_PENDING) {
      this.counts.dropped++;
      return;
    }
    // The target is the address itself — the resolver, whose path seed 000 measures — never the
    // network's first address, which no host answers; the network is the dedupe and result key.
    this.pending.push({ target: address, network: maskAddress(address, prefix), prefix });
    if (!this.drainScheduled) {
      this.drainScheduled = true;
      setImmediate(() => this.drain());
    }
  }
}

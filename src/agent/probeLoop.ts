import { setTimeout as delay } from 'node:timers/promises';
import { AGENT_API_VERSION, type ProbeRequestsReply, type ProbeResultReport } from '../core/contracts/agentApi.js';
import type { Logger } from '../core/telemetry/logger.js';
import type { AgentTelemetry } from './agentTelemetry.js';
import type { EngineClient } from './engineClient.js';
import type { ProbesConfig } from './probes/probeSchema.js';
import { ProbeRefusedError, type Prober } from './probes/prober.js';

/** Networks remembered for dedupe and back-off at most (the oldest forgotten first). */
const MAX_REMEMBERED = 100_000;

/**
 * Pulls probe requests from each engine (`GET /agent/v1/probes`, a long poll) and probes them
 * (docs/PRODUCT.md §5; src/agent/README.md "Probes"): requests wait in a bounded queue
 * (`maxQueue`, extra ones dropped and counted), a network probed within `refreshSeconds` is not
 * probed again (dedupe across engines), a network whose train got no reply backs off
 * (`backoffSeconds`, doubled per silent train), an address outside `probes.allow` is refused —
 * logged and counted, never sent a packet — and at most `concurrency` trains run at once. Results
 * go to every engine's reporter with the next report.
 */
export class ProbeLoop {
  private readonly queue: { target: string; network: string }[] = [];
  private readonly probedAt = new Map<string, number>();
  private readonly silent = new Map<string, { untilMs: number; count: number }>();
  private readonly queued = new Set<string>();
  private running = 0;
  private stopped = false;
  private readonly stopping = new AbortController();
  private readonly polls: Promise<void>[] = [];

  constructor(
    private readonly config: ProbesConfig,
    private readonly prober: Prober,
    private readonly clients: readonly EngineClient[],
    private readonly deliver: (results: readonly ProbeResultReport[]) => void,
    private readonly telemetry: AgentTelemetry,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts one long-poll loop per engine. */
  start(): void {
    for (const client of this.clients) this.polls.push(this.poll(client));
  }

  /** Stops polling and probing (a poll in flight ends when the engine clients close). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    await Promise.all(this.polls);
  }

  /** Takes requests into the queue (also for tests and `--once`); returns how many were queued. */
  offer(requests: readonly { readonly target: string; readonly network: string }[]): number {
    let queued = 0;
    const now = this.now();
    for (const r of requests) {
      const result = this.admit(r, now);
      this.telemetry.probeRequests.inc({ result });
      if (result === 'queued') {
        this.queue.push({ target: r.target, network: r.network });
        this.queued.add(r.network);
        queued++;
      } else if (result === 'refused') {
        this.log.warn({ network: r.network }, 'probe request outside probes.allow refused');
      }
    }
    this.pump();
    return queued;
  }

  private admit(r: { readonly target: string; readonly network: string }, now: number): 'queued' | 'refused' | 'fresh' | 'backoff' | 'dropped' {
    if (!this.prober.allows(r.target)) return 'refused';
    const at = this.probedAt.get(r.network);
    if (this.queued.has(r.network) || (at !== undefined && now - at < this.config.refreshSeconds * 1000)) return 'fresh';
    const s = this.silent.get(r.network);
    if (s !== undefined && now < s.untilMs) return 'backoff';
    if (this.queue.length >= this.config.maxQueue) return 'dropped';
    return 'queued';
  }

  private pump(): void {
    while (!this.stopped && this.running < this.config.concurrency && this.queue.length > 0) {
      const r = this.queue.shift()!;
      this.running++;
      void this.run(r).finally(() => {
        this.running--;
        this.queued.delete(r.network);
        this.pump();
      });
    }
    this.telemetry.probeQueue.set(this.queue.length);
  }

  private async run(r: { target: string; network: string }): Promise<void> {
    let results: ProbeResultReport[];
    try {
      results = await this.prober.probe(r.target);
    } catch (e) {
      this.telemetry.probeRequests.inc({ result: e instanceof ProbeRefusedError ? 'refused' : 'failed' });
      this.log.warn({ network: r.network, err: (e as Error).message }, 'probe failed');
      return;
    }
    const now = this.now();
    remember(this.probedAt, r.network, now);
    if (results.every((x) => x.received === 0)) {
      const count = (this.silent.get(r.network)?.count ?? 0) + 1;
      const delay = Math.min(this.config.maxBackoffSeconds, this.config.backoffSeconds * 2 ** Math.min(20, count - 1)) * 1000;
      remember(this.silent, r.network, { untilMs: now + delay, count });
    } else {
      this.silent.delete(r.network);
    }
    this.telemetry.probeRequests.inc({ result: 'probed' });
    this.log.debug({ network: r.network, results }, 'probed');
    this.deliver(results);
  }

  private async poll(client: EngineClient): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      const room = this.config.maxQueue - this.queue.length;
      if (room <= 0) {
        await this.sleep(200);
        continue;
      }
      const max = Math.min(this.config.pollMax, room);
      try {
        const wait = this.config.pollWaitSeconds;
        const { status, json } = await client.request('GET', `/agent/v${AGENT_API_VERSION}/probes?max=${max}&wait=${wait}`, undefined, (wait + 10) * 1000);
        if (status !== 200) throw new Error(`HTTP ${status}`);
        failures = 0;
        const reply = json as ProbeRequestsReply;
        this.offer(reply.requests);
        if (reply.requests.length === 0 && wait === 0) await this.sleep(1000);
      } catch (e) {
        if (this.stopped) return;
        failures++;
        if (failures === 1) this.log.warn({ engine: client.url, err: (e as Error).message }, 'probe requests not readable; retrying');
        // Full jitter below a doubling ceiling (1 s … 30 s), as the reporter retries.
        await this.sleep(Math.random() * Math.min(30_000, 1000 * 2 ** Math.min(5, failures - 1)));
      }
    }
  }

  /** Waits `ms`, or less when the loop stops. */
  private sleep(ms: number): Promise<void> {
    return delay(ms, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }
}

/** Sets `key` (moved to the newest position) and forgets the oldest beyond {@link MAX_REMEMBERED}. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_REMEMBERED) map.delete(map.keys().next().value!);
}

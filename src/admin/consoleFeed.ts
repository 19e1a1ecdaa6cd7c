import type { EngineMetrics } from '../core/telemetry/engineMetrics.js';
import type { Engine } from '../pipeline/engine.js';
import type { EngineCondition } from './engineCondition.js';

/** One endpoint as the console shows it. */
export interface ConsoleEndpoint {
  readonly key: string;
  readonly status: string;
  readonly override: string | null;
  /** When the status was entered (ISO 8601), null when never (an unmonitored endpoint). */
  readonly since: string | null;
}

/** What the console shows, sent on every update. */
export interface ConsoleState {
  readonly at: string;
  readonly generation: number;
  readonly status: EngineCondition['status'];
  readonly reasons: EngineCondition['reasons'];
  readonly lastReload: unknown;
  readonly dataCenters: readonly {
    readonly name: string;
    readonly status: string;
    readonly endpoints: readonly ConsoleEndpoint[];
    /**
     * GSLB answers naming this DC since start, and over the last minute (the console's own samples
     * of `gslbd_dc_answers_total`, taken only while a console is subscribed: the first minute of
     * watching counts from the first subscriber).
     */
    readonly answers: { readonly total: number; readonly lastMinute: number };
  }[];
}

/** How often subscribed consoles get the state (ms); nothing is computed while none is subscribed. */
export const CONSOLE_UPDATE_MS = 2000;
/** The window of the per-DC answer counts (ms). */
const WINDOW_MS = 60000;

/**
 * The console's live state, built from the engine's snapshot (data centers, endpoints and their
 * health with since when), its condition (fail-safe, last reload) and its counters, and pushed to
 * subscribers every {@link CONSOLE_UPDATE_MS} by one shared timer: the cost is one state per
 * period whatever the number of subscribers (bounded by the admin listener's `maxEventStreams`).
 */
export class ConsoleFeed {
  private readonly subscribers = new Set<(state: ConsoleState) => void>();
  private timer: NodeJS.Timeout | undefined;
  /** Samples of the per-DC answer counters, oldest first, over the last {@link WINDOW_MS}. */
  private samples: { atMs: number; counts: Map<string, number> }[] = [];

  constructor(
    private readonly engine: Engine,
    private readonly metrics: EngineMetrics,
    private readonly condition: () => EngineCondition,
  ) {}

  /** Adds a subscriber: it gets the state now and on every update until the returned function is called. */
  subscribe(send: (state: ConsoleState) => void): () => void {
    this.subscribers.add(send);
    void this.state().then(send);
    this.timer ??= setInterval(() => void this.tick(), CONSOLE_UPDATE_MS);
    return () => {
      this.subscribers.delete(send);
      if (this.subscribers.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
        this.samples = [];
      }
    };
  }

  private async tick(): Promise<void> {
    const s = await this.state();
    for (const send of this.subscribers) send(s);
  }

  /** The state now (samples the answer counters). */
  async state(): Promise<ConsoleState> {
    const nowMs = Date.now();
    const counts = new Map<string, number>();
    for (const v of (await this.metrics.dcAnswers.get()).values) counts.set(String(v.labels.dc), v.value);
    this.samples.push({ atMs: nowMs, counts });
    while (this.samples.length > 1 && this.samples[0]!.atMs < nowMs - WINDOW_MS) this.samples.shift();
    const oldest = this.samples[0]!.counts;
    const snap = this.engine.snapshot;
    const health = snap.env.health;
    const byDc = new Map<string, Set<string>>(snap.dataCenters.map((d) => [d.name, new Set<string>()]));
    for (const r of snap.records) for (const c of r.candidates) for (const e of c.endpoints) byDc.get(c.dc.name)?.add(e.key);
    const c = this.condition();
    return {
      at: new Date(nowMs).toISOString(),
      generation: snap.generation,
      status: c.status,
      reasons: c.reasons,
      lastReload: c.lastReload ?? null,
      dataCenters: [...byDc].map(([name, keys]) => ({
        name,
        status: health.hostStatus(name),
        endpoints: [...keys].sort().map((key) => {
          const h = health.endpointHealth(key);
          return { key, status: h.status, override: h.override ?? null, since: h.sinceMs > 0 ? new Date(h.sinceMs).toISOString() : null };
        }),
        answers: { total: counts.get(name) ?? 0, lastMinute: (counts.get(name) ?? 0) - (oldest.get(name) ?? 0) },
      })),
    };
  }
}

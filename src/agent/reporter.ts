import { AGENT_API_VERSION, MAX_PROBES_PER_REPORT, type ProbeResultReport } from '../core/contracts/agentApi.js';
import type { Logger } from '../core/telemetry/logger.js';
import type { AgentTelemetry } from './agentTelemetry.js';
import type { EngineClient } from './engineClient.js';
import type { ReadingSlots } from './readingSlots.js';

/** How one reporter retries and bounds itself (the `report` section). */
export interface ReporterOptions {
  readonly timeoutMs: number;
  readonly retryMs: number;
  readonly maxRetryMs: number;
  readonly maxPendingProbes: number;
}

/**
 * Sends the agent's reports to one engine (docs/PRODUCT.md §7): one batch per cycle
 * (`POST /agent/v1/report`) holding the fresh source readings the engine has not accepted yet
 * and the probe results waiting for it. A failure (network, TLS, timeout, 5xx) keeps the probe
 * results — at most `maxPendingProbes`, the oldest dropped first and counted — and retries after a
 * delay drawn uniformly below `retryMs × 2^(failures−1)` (capped at `maxRetryMs`: full jitter, so
 * agents do not retry in step); the retry sends the readings current then, never old ones. A
 * rejection (400, 422) or refusal (401, 403) is logged and dropped: sending it again would fail
 * again.
 */
export class EngineReporter {
  private pending: ProbeResultReport[] = [];
  private readonly delivered = new Map<string, number>();
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** The outcome of the last attempt, for `--once` and logs. */
  lastResult: string = 'none';

  constructor(
    private readonly client: EngineClient,
    private readonly identity: { readonly dc?: string; readonly zone?: string },
    private readonly slots: ReadingSlots,
    private readonly options: ReporterOptions,
    private readonly telemetry: AgentTelemetry,
    private readonly log: Logger,
    private readonly random: () => number = Math.random,
    private readonly now: () => number = Date.now,
  ) {}

  /** Probe results to send with the next report. */
  addProbes(results: readonly ProbeResultReport[]): void {
    this.pending.push(...results);
    const excess = this.pending.length - this.options.maxPendingProbes;
    if (excess > 0) {
      this.pending.splice(0, excess);
      this.telemetry.droppedProbes.inc({ engine: this.client.url }, excess);
    }
    this.telemetry.pendingProbes.set({ engine: this.client.url }, this.pending.length);
  }

  /** Whether the reporter waits for a retry after a failure. */
  get backingOff(): boolean {
    return this.retryTimer !== undefined;
  }

  /** Sends a report now (a cycle), unless one is in flight (then once more after it) or a retry is scheduled (then at the retry). */
  send(): Promise<void> {
    if (this.stopped || this.retryTimer !== undefined) return Promise.resolve();
    if (this.sending) {
      this.again = true;
      return this.sending;
    }
    this.sending = this.attempt().finally(() => {
      this.sending = undefined;
      if (this.again && !this.stopped && this.retryTimer === undefined) {
        this.again = false;
        void this.send();
      }
    });
    return this.sending;
  }

  /** Stops retrying; a report in flight finishes. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await this.sending;
    this.client.close();
  }

  private async attempt(): Promise<void> {
    const parts = this.slots.collect(this.delivered, this.now());
    const probes = this.pending.slice(0, MAX_PROBES_PER_REPORT);
    if (parts.host === undefined && parts.services.length === 0 && probes.length === 0) return;
    const body = {
      ...(this.identity.dc !== undefined ? { dc: this.identity.dc } : { zone: this.identity.zone }),
      ...(parts.host ? { host: parts.host } : {}),
      ...(parts.services.length > 0 ? { services: parts.services } : {}),
      ...(probes.length > 0 ? { probes } : {}),
    };
    const engine = this.client.url;
    const done = (): void => {
      for (const [slot, version] of parts.versions) this.delivered.set(slot, version);
      this.pending.splice(0, probes.length);
      this.telemetry.pendingProbes.set({ engine }, this.pending.length);
    };
    let status: number;
    let json: unknown;
    try {
      ({ status, json } = await this.client.request('POST', `/agent/v${AGENT_API_VERSION}/report`, body, this.options.timeoutMs));
    } catch (e) {
      this.fail(`${(e as Error).message}`);
      return;
    }
    if (status === 200) {
      if (this.failures > 0) this.log.info({ engine, after: this.failures }, 'engine reachable again');
      this.failures = 0;
      this.lastResult = 'accepted';
      this.telemetry.reports.inc({ engine, result: 'accepted' });
      done();
    } else if (status === 400 || status === 422 || status === 401 || status === 403) {
      // Sending the same data again would be refused again: drop it, say why.
      const result = status === 401 || status === 403 ? 'refused' : 'rejected';
      this.lastResult = `${result} (${status})`;
      this.telemetry.reports.inc({ engine, result });
      if (probes.length > 0) this.telemetry.droppedProbes.inc({ engine }, probes.length);
      this.log.error({ engine, status, reply: json }, status === 401 ? 'engine refused the agent credential' : `engine ${result} the report`);
      done();
    } else {
      this.fail(`HTTP ${status}`);
    }
  }

  private fail(reason: string): void {
    this.failures++;
    this.lastResult = `failed: ${reason}`;
    this.telemetry.reports.inc({ engine: this.client.url, result: 'failed' });
    const ceiling = Math.min(this.options.maxRetryMs, this.options.retryMs * 2 ** Math.min(30, this.failures - 1));
    const delay = this.random() * ceiling;
    (this.failures === 1 ? this.log.warn.bind(this.log) : this.log.debug.bind(this.log))(
      { engine: this.client.url, reason, failures: this.failures, retryInMs: Math.round(delay) },
      'report failed; retrying',
    );
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.send();
    }, delay);
  }
}

import type { HaproxySourceConfig } from './haproxySchema.js';
import { CounterRates } from './counterRate.js';
import { haproxyCommand, parseShowInfo, parseShowStat, serverHealthy, type StatRow } from './haproxyStats.js';
import { readProcessUsage, USER_HZ } from './procStats.js';

/** One service's metrics from one HAProxy backend: a service sample of the push API without `dc`. */
export type ServiceSample = Record<string, number | string>;

/**
 * The HAProxy source (docs/PRODUCT.md §3 service metrics; seed 004: `healthyBackends` "read
 * directly from the load balancing layer of each DC"). Per configured backend, from `show stat`:
 * - `healthyBackends`: servers that are UP (or "no check") with weight > 0 (`haproxyStats.ts`);
 * - `connection`: current sessions (`scur`); `status`: up when the backend row says UP;
 * - `session_new`, `request`, `bw`: per-second rates of `stot`, `req_tot` (HTTP backends) and
 *   `bin + bout` (bits/s) between two readings — the first reading, and one after a counter went
 *   backwards (HAProxy reloaded: its counters restart), carry no rates;
 * and from `show info` the HAProxy process (`Pid`) for `cpu` (share of all CPUs since the
 * previous reading) and `mem` (resident size as a share of the host's memory).
 *
 * A missing socket, a refusal or a timeout throws from {@link read}: the agent reports no service
 * metrics of this instance that cycle (they go stale on the engines) and keeps running.
 */
export class HaproxySource {
  private readonly rates = new CounterRates();

  constructor(
    private readonly config: HaproxySourceConfig,
    private readonly host: { readonly cpus: number; readonly memTotal: number },
    private readonly now: () => number = Date.now,
  ) {}

  /** A name for logs and metrics: `haproxy:<socket>`. */
  get name(): string {
    return `haproxy:${this.config.socket}`;
  }

  /**
   * One reading: a service sample per configured backend (backends HAProxy does not have are left out).
   * @throws Error when the stats socket cannot be read.
   */
  async read(): Promise<ServiceSample[]> {
    const timeout = this.config.timeoutSeconds * 1000;
    const [statText, infoText] = await Promise.all([
      haproxyCommand(this.config.socket, 'show stat', timeout),
      haproxyCommand(this.config.socket, 'show info', timeout),
    ]);
    const atMs = this.now();
    const rows = parseShowStat(statText);
    const pid = Number(parseShowInfo(infoText).get('Pid'));
    const usage = Number.isInteger(pid) && pid > 0 ? await readProcessUsage(pid).catch(() => undefined) : undefined;
    const cpuRate = usage ? this.rates.rate(`pid:${pid}`, usage.ticks, atMs) : undefined;
    const keep = new Set<string>(usage ? [`pid:${pid}`] : []);
    const out: ServiceSample[] = [];
    for (const { backend, service } of this.config.backends) {
      const servers = rows.filter((r) => r.pxname === backend && r.type === '2');
      const total = rows.find((r) => r.pxname === backend && r.type === '1');
      if (total === undefined) continue;
      const sample: ServiceSample = {
        service,
        healthyBackends: servers.filter(serverHealthy).length,
        connection: Number(total.scur) || 0,
        status: (total.status ?? '').startsWith('UP') ? 'up' : 'down',
      };
      const rate = (name: string, value: number | undefined): number | undefined => {
        if (value === undefined || !Number.isFinite(value)) return undefined;
        keep.add(`${backend}:${name}`);
        return this.rates.rate(`${backend}:${name}`, value, atMs);
      };
      const sessions = rate('stot', counter(total, 'stot'));
      const requests = rate('req_tot', counter(total, 'req_tot'));
      const bytes = rate('bytes', sum(counter(total, 'bin'), counter(total, 'bout')));
      if (sessions !== undefined) sample.session_new = round(sessions);
      if (requests !== undefined) sample.request = round(requests);
      if (bytes !== undefined) sample.bw = Math.round(bytes * 8);
      if (cpuRate !== undefined) sample.cpu = round(Math.min(100, (cpuRate / USER_HZ / this.host.cpus) * 100));
      if (usage) sample.mem = round(Math.min(100, (usage.rss / this.host.memTotal) * 100));
      out.push(sample);
    }
    this.rates.retain(keep);
    return out;
  }
}

/** A numeric column, or undefined when the column is empty (`req_tot` of a TCP backend). */
function counter(row: StatRow, name: string): number | undefined {
  const v = row[name];
  return v === undefined || v === '' ? undefined : Number(v);
}

function sum(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : a + b;
}

function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}

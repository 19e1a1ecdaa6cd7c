import { readFile } from 'node:fs/promises';
import type { AgentConfig } from './agentSchema.js';
import { hostCheckPoints } from './agentProcess.js';
import { Prober } from './probes/prober.js';
import { HaproxySource, type ServiceSample } from './sources/haproxySource.js';
import { HostSource, type HostReading } from './sources/hostSource.js';
import { PrometheusSource, type PrometheusReading } from './sources/prometheusSource.js';
import { cpuCount, parseMemInfo } from './sources/procStats.js';

/** What `gslbd agent --once` prints: each source's reading over one window, or why it failed. */
export interface OnceReport {
  readonly agent: AgentConfig['agent'];
  readonly windowSeconds: number;
  readonly host?: HostReading | { readonly error: string };
  readonly haproxy: readonly ({ readonly source: string; readonly services: readonly ServiceSample[] } | { readonly source: string; readonly error: string })[];
  readonly prometheus: readonly ({ readonly source: string; readonly reading: PrometheusReading } | { readonly source: string; readonly error: string })[];
}

/**
 * Measures every configured source once, over one window of `windowMs` (rates need two readings),
 * and returns what a report would carry, without contacting any engine: `gslbd agent --once`, for
 * debugging a configuration (docs/PRODUCT.md §7).
 */
export async function measureOnce(config: AgentConfig, windowMs: number): Promise<OnceReport> {
  const [stat, meminfo] = await Promise.all([readFile('/proc/stat', 'utf8'), readFile('/proc/meminfo', 'utf8')]);
  const machine = { cpus: cpuCount(stat), memTotal: parseMemInfo(meminfo).total };
  const host = config.host.enabled ? new HostSource(config.host, hostCheckPoints(config, config.probes ? new Prober(config.probes) : undefined)) : undefined;
  const haproxy = config.haproxy.map((h) => new HaproxySource(h, machine));
  const prometheus = config.prometheus.map((p) => new PrometheusSource(p));
  await host?.baseline();
  // A first reading of each counter source, so the second gives rates over the window.
  await Promise.all([...haproxy.map((h) => h.read().catch(() => undefined)), ...prometheus.map((p) => p.read().catch(() => undefined))]);
  await new Promise((r) => setTimeout(r, windowMs));
  const [hostReading, ...haproxyReadings] = await Promise.all([
    host?.read().catch((e: unknown) => ({ error: (e as Error).message })),
    ...haproxy.map((h) =>
      h.read().then(
        (services) => ({ source: h.name, services }),
        (e: unknown) => ({ source: h.name, error: (e as Error).message }),
      ),
    ),
  ]);
  const prometheusReadings = await Promise.all(
    prometheus.map((p) =>
      p.read().then(
        (reading) => ({ source: p.name, reading }),
        (e: unknown) => ({ source: p.name, error: (e as Error).message }),
      ),
    ),
  );
  return {
    agent: config.agent,
    windowSeconds: windowMs / 1000,
    ...(hostReading ? { host: hostReading } : {}),
    haproxy: haproxyReadings as OnceReport['haproxy'],
    prometheus: prometheusReadings,
  };
}

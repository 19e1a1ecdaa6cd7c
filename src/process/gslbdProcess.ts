import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve as resolvePath } from 'node:path';
import { performance } from 'node:perf_hooks';
import { AdminServer } from '../admin/adminServer.js';
import { registerCoreRoutes } from '../admin/coreRoutes.js';
import { EngineMetrics } from '../core/telemetry/engineMetrics.js';
import { checkFileReferences } from './fileReferences.js';
import { ConfigError } from '../core/config/load.js';
import { loadConfigFile } from './loadConfig.js';
import type { AdminListenerConfig } from '../admin/listenerSchema.js';
import type { Config } from './configSchema.js';
import { CompactServer } from '../doors/compact/compactServer.js';
import { DnsServer } from '../doors/dns/dnsServer.js';
import { powerDnsFrontDoor, type RemoteBackendServer } from '../doors/powerdns/remoteBackendServer.js';
import { loadConfiguredLocationDb, reloadLocationDb, type ConfiguredLocationDb } from '../capabilities/geo/loadSources.js';
import type { LocationDb } from '../core/location/locationDb.js';
import { HealthMonitor } from '../capabilities/health/healthMonitor.js';
import { registerHealthRoutes } from '../capabilities/health/healthRoutes.js';
import { StatusSignals } from './statusSignals.js';
import { createLogger, type Logger } from '../core/telemetry/logger.js';
import { MetricStore } from '../capabilities/steering/metricStore.js';
import { registerMetricRoutes } from '../capabilities/steering/pushRoutes.js';
import { systemContext, type ResolveContext } from '../core/views/resolveContext.js';
import { Engine } from '../pipeline/engine.js';
import { withHealthView } from '../pipeline/snapshot.js';
import { buildSnapshot } from './snapshot.js';

/** Outcome of a reload: the new generation, or why the running configuration was kept. */
export type ReloadOutcome = { ok: true; generation: number } | { ok: false; error: string };

/** A running engine process with its front doors. */
export interface RunningGslbd {
  readonly engine: Engine;
  readonly metrics: EngineMetrics;
  readonly dns: DnsServer;
  /** The PowerDNS remote backend socket, when `listeners.powerdns` is configured. */
  readonly powerdns: RemoteBackendServer | undefined;
  /** The compact-protocol listener (CoreDNS bridge), when `listeners.compact` is configured. */
  readonly compact: CompactServer | undefined;
  readonly admin: AdminServer | undefined;
  readonly health: HealthMonitor;
  readonly log: Logger;
  /** Host, service and client metrics; the snapshot's `env.metrics` view. */
  readonly metricStore: MetricStore;
  /**
   * Re-reads the configuration file; an invalid file keeps the running snapshot. Reloads run one
   * at a time. Location data is re-read when the `geo` section changed or `options.geo` is set;
   * it is read and built off the event loop, so queries keep being answered from the old table.
   */
  reload(reason: string, options?: ReloadOptions): Promise<ReloadOutcome>;
  stop(): Promise<void>;
}

/** What a reload re-reads beyond the configuration file. */
export interface ReloadOptions {
  /** Re-read the location data even when the `geo` section is unchanged (new data files). */
  readonly geo?: boolean;
}

/** Options for tests and embedding. */
export interface StartOptions {
  readonly ctx?: ResolveContext;
  /** Reload on SIGHUP (default true). */
  readonly signals?: boolean;
  /** Reload when the file changes (default true). */
  readonly watchFile?: boolean;
  /** Log destination file descriptor (default stdout). */
  readonly logDestination?: number;
}

/**
 * Starts the engine: loads and validates the configuration, loads the location data, builds the
 * first snapshot, then opens the front doors (so no listener ever answers before the
 * configuration is loaded) and the admin listener, and arms SIGHUP and the file watch.
 * @throws ConfigError when the configuration is invalid; Error when location data cannot be
 *   loaded or a listener cannot bind.
 */
export async function startGslbd(file: string, options: StartOptions = {}): Promise<RunningGslbd> {
  // SIGHUP's default action ends the process. It is caught from the first moment; one that
  // arrives while the engine starts (seconds, while location data loads) becomes one reload
  // once the engine is up.
  let reloadNow: ((reason: string) => void) | undefined;
  let hupDuringStart = false;
  const onHup = (): void => {
    if (reloadNow) reloadNow('SIGHUP');
    else hupDuringStart = true;
  };
  const signals = options.signals ?? true;
  if (signals) process.on('SIGHUP', onHup);
  try {
    return await startAfterSignals(file, options, onHup, (reload) => {
      reloadNow = (reason) => void reload(reason);
      if (hupDuringStart) reloadNow('SIGHUP during start-up');
    });
  } catch (e) {
    process.off('SIGHUP', onHup);
    throw e;
  }
}

async function startAfterSignals(
  file: string,
  options: StartOptions,
  onHup: () => void,
  armSignals: (reload: (reason: string) => Promise<ReloadOutcome>) => void,
): Promise<RunningGslbd> {
  const { config } = loadConfigFile(file);
  checkFileReferences(config, file);
  const adminCfg = config.listeners.admin;
  const token = adminToken(adminCfg, file);
  const log = createLogger(config.logging.level, options.logDestination);
  const geo = timedGeoLoad(config, file, log);
  const metricStore = new MetricStore(config.metrics, config.datacenters.map((d) => d.name), config.services.map((s) => s.name));
  const metrics = new EngineMetrics();
  const health = new HealthMonitor({ log, registry: metrics.registry });
  const snapshot = buildSnapshot(file, config, { geo, health: health.configure(config, file), metrics: metricStore }, Date.now());
  const runningConfig = { current: config };
  const engine = new Engine(snapshot, options.ctx ?? systemContext(), log);
  const statusSignals = new StatusSignals(health, metricStore);
  statusSignals.sync(engine.ctx.now());
  metrics.generation.set(snapshot.generation);
  health.onChange((view) => {
    statusSignals.sync(engine.ctx.now());
    engine.publish(withHealthView(engine.snapshot, view));
    metrics.generation.set(engine.snapshot.generation);
  });

  const dns = new DnsServer({ engine, metrics, log, behaviour: config.dns }, config.listeners.dns);
  const admin = adminCfg ? new AdminServer(token, log) : undefined;
  const pdnsCfg = config.listeners.powerdns;
  const powerdns = pdnsCfg ? powerDnsFrontDoor(engine, metrics, log, pdnsCfg, resolvePath(dirname(file), pdnsCfg.path)) : undefined;
  const compactCfg = config.listeners.compact;
  const compact = compactCfg ? new CompactServer({ engine, metrics, log }, compactCfg, resolvePath(dirname(file), compactCfg.path)) : undefined;

  let reloading: Promise<ReloadOutcome> = Promise.resolve({ ok: true, generation: snapshot.generation });
  const reload = (reason: string, reloadOptions: ReloadOptions = {}): Promise<ReloadOutcome> => {
    reloading = reloading.then(() => reloadOnce(engine, runningConfig, metrics, metricStore, log, reason, health, statusSignals, reloadOptions, admin));
    return reloading;
  };
  if (admin) {
    registerCoreRoutes(admin, { engine, metrics, reload });
    registerMetricRoutes(admin, { store: metricStore, config: () => runningConfig.current.metrics, registry: metrics.registry, now: () => engine.ctx.now() });
    registerHealthRoutes(admin, health, engine);
  }

  // The Unix sockets open last: their existence tells PowerDNS and CoreDNS set-ups that the
  // engine is loaded, so they must not appear for a start that then fails on a port.
  const started: { stop(): Promise<void> }[] = [];
  try {
    await dns.start();
    started.push(dns);
    if (admin) {
      await admin.start(adminCfg!.address, adminCfg!.port);
      started.push(admin);
    }
    for (const socket of [powerdns, compact]) {
      if (!socket) continue;
      await socket.start();
      started.push(socket);
    }
  } catch (e) {
    await Promise.all(started.map((s) => s.stop()));
    throw e;
  }

  armSignals(reload);
  const watcher = options.watchFile ?? true ? watchConfig(file, () => void reload('file changed'), log) : undefined;
  health.start();

  log.info(
    {
      dns: dns.bound.map((b) => `${b.address.includes(':') ? `[${b.address}]` : b.address}:${b.port}`),
      admin: admin ? `${adminCfg!.address}:${admin.port}` : null,
      powerdns: powerdns?.path ?? null,
      compact: compact?.path ?? null,
      generation: snapshot.generation,
      location: geo.describe(),
    },
    'gslbd up',
  );

  return {
    engine,
    metrics,
    dns,
    powerdns,
    compact,
    admin,
    health,
    log,
    metricStore,
    reload,
    async stop() {
      process.off('SIGHUP', onHup);
      watcher?.close();
      await Promise.all([dns.stop(), powerdns?.stop(), compact?.stop(), admin?.stop(), health.stop()]);
      log.flush();
    },
  };
}

async function reloadOnce(
  engine: Engine,
  runningConfig: { current: Config },
  metrics: EngineMetrics,
  metricStore: MetricStore,
  log: Logger,
  reason: string,
  health: HealthMonitor,
  statusSignals: StatusSignals,
  options: ReloadOptions,
  admin: AdminServer | undefined,
): Promise<ReloadOutcome> {
  const running = engine.snapshot;
  try {
    const { config } = loadConfigFile(running.file);
    checkFileReferences(config, running.file);
    const token = adminToken(config.listeners.admin, running.file);
    const sameGeo = JSON.stringify(config.geo) === JSON.stringify(runningConfig.current.geo);
    const geo = sameGeo && !options.geo ? running.env.geo : await timedGeoReload(config, running.file, log);
    if (JSON.stringify(withoutToken(config.listeners)) !== JSON.stringify(withoutToken(runningConfig.current.listeners))) {
      log.warn({ reason }, 'listener settings changed; they take effect at the next restart');
    }
    const next = buildSnapshot(running.file, config, { ...running.env, geo, health: health.configure(config, running.file) }, Date.now(), running);
    metricStore.configure(config.metrics, config.datacenters.map((d) => d.name), config.services.map((s) => s.name));
    statusSignals.sync(engine.ctx.now());
    engine.publish(next);
    runningConfig.current = config;
    admin?.setToken(token);
    metrics.generation.set(next.generation);
    metrics.reloads.inc({ result: 'ok' });
    log.info({ reason, generation: next.generation }, 'configuration reloaded');
    return { ok: true, generation: next.generation };
  } catch (e) {
    metrics.reloads.inc({ result: 'invalid' });
    const problems = e instanceof ConfigError ? e.problems : undefined;
    log.error({ reason, problems, err: problems ? undefined : e }, 'reload failed; keeping the running configuration');
    return { ok: false, error: (e as Error).message };
  }
}

/**
 * The admin token of `listeners.admin`: `token`, or the contents of `tokenFile` (relative to the
 * configuration file) without surrounding whitespace; `undefined` disables mutating routes.
 * The file was checked by {@link checkFileReferences}.
 */
function adminToken(admin: AdminListenerConfig | undefined, configFile: string): string | undefined {
  if (admin?.tokenFile === undefined) return admin?.token;
  return readFileSync(resolvePath(dirname(configFile), admin.tokenFile), 'utf8').trim();
}

/** Listener settings without the admin token, which a reload applies (addresses need a restart). */
function withoutToken(listeners: Config['listeners']): unknown {
  return { ...listeners, admin: listeners.admin && { ...listeners.admin, token: undefined, tokenFile: undefined } };
}

function timedGeoLoad(config: Config, file: string, log: Logger): LocationDb {
  log.info({ sources: config.geo.sources.length, compiled: config.geo.compiled ?? null }, 'loading location data');
  const started = performance.now();
  return reportGeo(loadConfiguredLocationDb(config.geo, file), started, log);
}

async function timedGeoReload(config: Config, file: string, log: Logger): Promise<LocationDb> {
  const started = performance.now();
  return reportGeo(await reloadLocationDb(config.geo, file), started, log);
}

/** Logs a location load; the TypeScript fallback is a loud warning (also shown by /healthz). */
function reportGeo(loaded: ConfiguredLocationDb, started: number, log: Logger): LocationDb {
  const { db, fallbackReason, skipped } = loaded;
  log.info({ ms: Math.round(performance.now() - started), ...db.describe() }, 'location data loaded');
  if (skipped.count > 0) log.warn({ skipped: skipped.count, first: skipped.first }, 'lenient location load skipped bad lines');
  if (db.implementation === 'typescript' && db.describe().sources.length > 0) {
    log.warn(
      { reason: fallbackReason ?? 'geo.implementation is typescript' },
      'location lookups use the TypeScript reference implementation, several times slower than the native addon (npm run build:native)',
    );
  }
  return db;
}

/**
 * Watches the configuration file's directory (editors replace files by rename) and calls
 * `onChange` once per burst of events (250 ms debounce).
 */
function watchConfig(file: string, onChange: () => void, log: Logger): FSWatcher | undefined {
  let timer: NodeJS.Timeout | undefined;
  try {
    const w = watch(dirname(file), (_event, name) => {
      if (name !== basename(file)) return;
      clearTimeout(timer);
      timer = setTimeout(onChange, 250);
    });
    w.on('error', (e) => log.warn({ err: e }, 'configuration file watch failed'));
    return w;
  } catch (e) {
    log.warn({ err: e }, 'cannot watch the configuration file; reload with SIGHUP or the admin API');
    return undefined;
  }
}

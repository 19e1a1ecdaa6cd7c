import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve as resolvePath } from 'node:path';
import type { AdminListenerConfig } from '../admin/listenerSchema.js';
import { AdminServer } from '../admin/adminServer.js';
import { coreRoutes } from '../admin/coreRoutes.js';
import type { HealthMonitor } from '../capabilities/health/healthMonitor.js';
import type { MetricStore } from '../capabilities/steering/metricStore.js';
import { ConfigError } from '../core/config/load.js';
import type { FrontDoor } from '../core/contracts/frontDoor.js';
import { InProcessStateStore, type StateStore } from '../core/contracts/stateStore.js';
import { EngineMetrics } from '../core/telemetry/engineMetrics.js';
import { createLogger, type Logger } from '../core/telemetry/logger.js';
import { systemContext, type ResolveContext } from '../core/views/resolveContext.js';
import type { CompactServer } from '../doors/compact/compactServer.js';
import { createDoors } from '../doors/createDoors.js';
import type { DnsServer } from '../doors/dns/dnsServer.js';
import type { DoorHost } from '../doors/doorHost.js';
import type { RemoteBackendServer } from '../doors/powerdns/remoteBackendServer.js';
import { healthCapability } from '../capabilities/health/capability.js';
import { FailsafeWatch } from '../capabilities/health/failsafeWatch.js';
import { steeringCapability } from '../capabilities/steering/capability.js';
import type { CapabilityHost, CapabilityRuntime, ReloadOutcome } from '../pipeline/capability.js';
import { Engine } from '../pipeline/engine.js';
import { compileSnapshot, withEnv, type Snapshot, type SnapshotState } from '../pipeline/snapshot.js';
import { CAPABILITIES } from './capabilities.js';
import type { Config } from './configSchema.js';
import { checkFileReferences } from './fileReferences.js';
import { LISTENERS } from './frontDoors.js';
import { loadConfigFile } from './loadConfig.js';
import { StatusSignals } from './statusSignals.js';
import { engineCondition } from './engineCondition.js';
import { ReloadHistory } from './reloadHistory.js';
import { isEmptySummary, reloadSummary } from './reloadSummary.js';

export type { ReloadOutcome } from '../pipeline/capability.js';

/** What a reload re-reads beyond the configuration file. */
export interface ReloadOptions {
  /** Capabilities that re-read their own data even when their section is unchanged (`geo`: new location files). */
  readonly refresh?: readonly string[];
}

/** A running engine process with its front doors. */
export interface RunningGslbd {
  readonly engine: Engine;
  readonly metrics: EngineMetrics;
  readonly log: Logger;
  /** Every front door `listeners` configured, by kind name (`dns`, `powerdns`, `compact`). */
  readonly doors: ReadonlyMap<string, FrontDoor>;
  /** The standalone DNS listener (binds nothing when `listeners.dns` is empty). */
  readonly dns: DnsServer;
  /** The PowerDNS remote backend socket, when `listeners.powerdns` is configured. */
  readonly powerdns: RemoteBackendServer | undefined;
  /** The compact-protocol listener (CoreDNS bridge), when `listeners.compact` is configured. */
  readonly compact: CompactServer | undefined;
  readonly admin: AdminServer | undefined;
  /** Where health observations, overrides and pushed metrics are kept (in this process). */
  readonly store: StateStore;
  readonly health: HealthMonitor;
  /** Host, service and client metrics; the snapshot's `env.metrics` view. */
  readonly metricStore: MetricStore;
  /** Records answering by their all-down policy (logged, counted, and reported by `/healthz`). */
  readonly failsafe: FailsafeWatch;
  /** The last reloads' outcomes (`/healthz` is degraded while the last one failed). */
  readonly reloads: ReloadHistory;
  /**
   * Re-reads the configuration file; an invalid file keeps the running snapshot. Reloads run one
   * at a time. A capability re-reads its own data when its section changed or `refresh` names it
   * (location data is read and built off the event loop, so queries keep the old table).
   */
  reload(reason: string, options?: ReloadOptions): Promise<ReloadOutcome>;
  stop(): Promise<void>;
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
 * Starts the engine: loads and validates the configuration, starts the capabilities
 * (`capabilities.ts`) and lets each prepare its part of the state (location data, health view,
 * metric store), builds the first snapshot, then opens the front doors in `listeners` order
 * (`frontDoors.ts`: the standalone listener, the admin API, then the Unix sockets whose existence
 * tells PowerDNS and CoreDNS set-ups the engine is loaded), starts the capabilities' background
 * work, and arms SIGHUP and the file watch. No listener ever answers before the configuration is
 * loaded.
 * @throws ConfigError when the configuration is invalid; Error when a capability cannot load its
 *   data or a listener cannot bind.
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
  const log = createLogger(config.logging.level, options.logDestination, config.logging);
  const metrics = new EngineMetrics();
  const store = new InProcessStateStore();
  const ctx = options.ctx ?? systemContext();
  // The engine exists once the first snapshot does; capabilities publish only after their start.
  const engineRef: { engine?: Engine } = {};
  let reload: (reason: string, options?: ReloadOptions) => Promise<ReloadOutcome> = () => Promise.resolve({ ok: false, error: 'the engine is starting' });
  let statusSignals: StatusSignals | undefined;
  const failsafe = new FailsafeWatch(log, metrics.registry);
  const reloads = new ReloadHistory();
  // After every published snapshot: which records are all down now (off the query path).
  const published = (engine: Engine): void => failsafe.check(engine.snapshot.records, engine.snapshot.env.health, ctx.now());
  const host = (): CapabilityHost => ({
    file,
    log,
    metrics,
    store,
    now: () => ctx.now(),
    generation: () => engineRef.engine?.snapshot.generation ?? 0,
    publish(part) {
      const engine = engineRef.engine;
      if (!engine) return;
      statusSignals?.sync(ctx.now());
      engine.publish(withEnv(engine.snapshot, part));
      metrics.generation.set(engine.snapshot.generation);
      published(engine);
    },
    reload: (reason, refresh) => reload(reason, { refresh: refresh ?? [] }),
  });
  const started = new Map<unknown, { readonly name: string; readonly runtime: CapabilityRuntime<Config> }>();
  for (const c of CAPABILITIES) if ('start' in c) started.set(c, { name: c.name, runtime: c.start(host()) as CapabilityRuntime<Config> });
  const runtimes = [...started.values()];
  const health = runtimeOf(started, healthCapability);
  const steering = runtimeOf(started, steeringCapability);

  const state = await prepareAll(runtimes, config, []);
  const snapshot = compileSnapshot<Config>({ file, config, capabilities: CAPABILITIES, state, nowMs: Date.now() });
  const engine = new Engine(snapshot, ctx, log);
  engineRef.engine = engine;
  for (const { runtime } of runtimes) runtime.commit?.(config);
  // Monitor verdicts are also the metric store's host.status and service.status (seed 004).
  statusSignals = new StatusSignals(health.monitor, steering.store);
  statusSignals.sync(ctx.now());
  metrics.generation.set(snapshot.generation);
  published(engine);

  const running = { config };
  let reloading: Promise<ReloadOutcome> = Promise.resolve({ ok: true, generation: snapshot.generation });
  reload = (reason, reloadOptions = {}) => {
    reloading = reloading.then(() =>
      reloadOnce({
        engine,
        running,
        runtimes,
        metrics,
        log,
        reason,
        statusSignals: statusSignals!,
        refresh: reloadOptions.refresh ?? [],
        admin,
        published,
        reloads,
      }),
    );
    return reloading;
  };

  const doorHost: DoorHost = { file, engine, metrics, log, afterAnswer: [] };
  const doors = createDoors(LISTENERS, config, doorHost);
  const admin = adminCfg ? new AdminServer(token, log) : undefined;
  if (admin) {
    for (const r of coreRoutes({ engine, metrics, reload, condition: () => engineCondition(failsafe, reloads) })) admin.route(r);
    for (const { runtime } of runtimes) for (const r of runtime.routes ?? []) admin.route(r);
  }

  const up: Record<string, unknown> = {};
  const listening: { stop(): Promise<void> }[] = [];
  try {
    for (const section of LISTENERS) {
      if (section.name === 'admin') {
        if (admin) {
          await admin.start(adminCfg!.address, adminCfg!.port);
          listening.push(admin);
        }
        up.admin = admin ? `${adminCfg!.address}:${admin.port}` : null;
        continue;
      }
      const door = doors.get(section.name);
      if (door) {
        await door.start();
        listening.push(door);
      }
      up[section.name] = door ? door.describe()[section.name] : null;
    }
  } catch (e) {
    await Promise.all(listening.map((s) => s.stop()));
    throw e;
  }

  armSignals(reload);
  const watcher = (options.watchFile ?? true) ? watchConfig(file, () => void reload('file changed'), log) : undefined;
  for (const { runtime } of runtimes) runtime.run?.();

  log.info({ ...up, generation: snapshot.generation, ...Object.assign({}, ...runtimes.map(({ runtime }) => runtime.describe?.() ?? {})) }, 'gslbd up');

  return {
    engine,
    metrics,
    log,
    doors,
    dns: doors.get('dns') as DnsServer,
    powerdns: doors.get('powerdns') as RemoteBackendServer | undefined,
    compact: doors.get('compact') as CompactServer | undefined,
    admin,
    store,
    health: health.monitor,
    metricStore: steering.store,
    failsafe,
    reloads,
    reload,
    async stop() {
      process.off('SIGHUP', onHup);
      watcher?.close();
      await Promise.all([...[...doors.values()].map((d) => d.stop()), admin?.stop(), ...runtimes.map(({ runtime }) => runtime.stop?.())]);
      log.flush();
    },
  };
}

/** A started capability, by name. */
interface Started {
  readonly name: string;
  readonly runtime: CapabilityRuntime<Config>;
}

/** The runtime `capability.start` gave, with its own type (the composition root wires a few across capabilities). */
function runtimeOf<C extends { start(host: CapabilityHost): unknown }>(started: ReadonlyMap<unknown, Started>, capability: C): ReturnType<C['start']> {
  return started.get(capability)!.runtime as ReturnType<C['start']>;
}

/**
 * The snapshot state from every runtime's `prepare`, in list order, over `base` (a reload keeps
 * what no capability replaces); `refresh` names capabilities that must re-read their own data.
 */
async function prepareAll(runtimes: readonly Started[], config: Config, refresh: readonly string[], base?: SnapshotState): Promise<SnapshotState> {
  const state: Partial<SnapshotState> = { ...base };
  for (const { name, runtime } of runtimes) Object.assign(state, (await runtime.prepare?.(config, refresh.includes(name))) ?? {});
  return state as SnapshotState;
}

/** What one reload works with. */
interface ReloadContext {
  readonly engine: Engine;
  /** The configuration the published snapshot was built from. */
  readonly running: { config: Config };
  readonly runtimes: readonly Started[];
  readonly metrics: EngineMetrics;
  readonly log: Logger;
  readonly reason: string;
  readonly statusSignals: StatusSignals;
  /** Capability names asked to re-read their own data. */
  readonly refresh: readonly string[];
  readonly admin: AdminServer | undefined;
  /** Called after the new snapshot is published (the fail-safe watch). */
  readonly published: (engine: Engine) => void;
  readonly reloads: ReloadHistory;
}

async function reloadOnce(r: ReloadContext): Promise<ReloadOutcome> {
  const { engine, log, metrics, reason } = r;
  const current: Snapshot = engine.snapshot;
  try {
    const { config } = loadConfigFile(current.file);
    checkFileReferences(config, current.file);
    const token = adminToken(config.listeners.admin, current.file);
    if (JSON.stringify(withoutToken(config.listeners)) !== JSON.stringify(withoutToken(r.running.config.listeners))) {
      log.warn({ reason }, 'listener settings changed; they take effect at the next restart');
    }
    const { time, levels } = r.running.config.logging;
    if (config.logging.time !== time || config.logging.levels !== levels) {
      log.warn({ reason, setting: 'logging.time, logging.levels' }, 'the log line format changed; it takes effect at the next restart');
    }
    const state = await prepareAll(r.runtimes, config, r.refresh, current.env);
    const next = compileSnapshot<Config>({ file: current.file, config, capabilities: CAPABILITIES, state, nowMs: Date.now(), previous: current });
    engine.publish(next);
    const changes = reloadSummary(r.running.config, config);
    r.running.config = config;
    // The logging level applies at once (pino's level is a property of the one logger).
    log.level = config.logging.level;
    for (const { runtime } of r.runtimes) runtime.commit?.(config);
    r.statusSignals.sync(engine.ctx.now());
    r.admin?.setToken(token);
    metrics.generation.set(next.generation);
    metrics.reloads.inc({ result: 'ok' });
    r.published(engine);
    r.reloads.succeeded(reason, next.generation, Date.now());
    log.info({ reason, generation: next.generation, changes: isEmptySummary(changes) ? 'none' : changes }, 'configuration reloaded');
    return { ok: true, generation: next.generation, changes };
  } catch (e) {
    metrics.reloads.inc({ result: 'invalid' });
    const problems = e instanceof ConfigError ? e.problems : undefined;
    r.reloads.failed(reason, (e as Error).message, Date.now());
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

import { dirname, resolve as resolvePath } from 'node:path';
import type { AdminListenerConfig } from '../admin/listenerSchema.js';
import { AdminServer, type AdminTls } from '../admin/adminServer.js';
import { coreRoutes } from '../admin/coreRoutes.js';
import { whatIfRoutes } from '../admin/whatIfRoutes.js';
import { ConsoleFeed } from '../admin/consoleFeed.js';
import { consoleRoutes, consoleStream } from '../admin/consoleRoutes.js';
import { Counterfactuals } from './counterfactuals.js';
import type { EngineCondition } from '../admin/engineCondition.js';
import type { HealthMonitor } from '../capabilities/health/healthMonitor.js';
import type { MetricStore } from '../capabilities/steering/metricStore.js';
import { ConfigError } from '../core/config/load.js';
import { FILE_SIZE_LIMITS, readRegularFile } from '../core/config/regularFile.js';
import type { Server } from 'node:net';
import type { AdminRoute } from '../core/contracts/adminRoute.js';
import type { FrontDoor, ListeningSocket } from '../core/contracts/frontDoor.js';
import type { StateStore } from '../core/contracts/stateStore.js';
import { EngineMetrics } from '../core/telemetry/engineMetrics.js';
import { createLogger, type Logger } from '../core/telemetry/logger.js';
import { systemContext, type ResolveContext } from '../core/views/resolveContext.js';
import type { CompactServer } from '../doors/compact/compactServer.js';
import { createDoors } from '../doors/createDoors.js';
import type { DnsServer } from '../doors/dns/dnsServer.js';
import type { DoorHost } from '../doors/doorHost.js';
import type { RemoteBackendServer } from '../doors/powerdns/remoteBackendServer.js';
import { agentsCapability } from '../capabilities/agents/capability.js';
import { healthCapability } from '../capabilities/health/capability.js';
import { FailsafeWatch } from '../capabilities/health/failsafeWatch.js';
import { steeringCapability } from '../capabilities/steering/capability.js';
import type { CapabilityHost, CapabilityRuntime, ReloadOutcome } from '../pipeline/capability.js';
import { Engine } from '../pipeline/engine.js';
import { compileSnapshot, withEnv, type Snapshot, type SnapshotState } from '../pipeline/snapshot.js';
import { CAPABILITIES } from './capabilities.js';
import { RESTART_SETTINGS, type Config } from './configSchema.js';
import { changedRestartSettings } from '../core/config/restartOnly.js';
import { readCandidateConfig } from './candidateConfig.js';
import { LISTENERS } from './frontDoors.js';
import { compileInSlices, ConfigReader } from './reloadPipeline.js';
import { runInSlices } from '../pipeline/selection/steps.js';
import { openStateStore } from './sharedState/openStateStore.js';
import { StoreTelemetry } from './sharedState/storeTelemetry.js';
import type { FileChange } from './settledFileWatch.js';
import { ConfigFilesWatch, configurationFiles } from './configFilesWatch.js';
import { StatusSignals } from './statusSignals.js';
import { engineCondition } from './engineCondition.js';
import { ReloadHistory } from './reloadHistory.js';
import { isEmptySummary, LOGGED_NAMES, loggedSummary, reloadSummarySteps } from './reloadSummary.js';
import { ADMIN_DOOR, startReplacement, type TakeOver } from './processHandover.js';
import { monotonicUsec, notifyServiceManager } from './serviceNotify.js';

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
  /** Where health observations, overrides and pushed metrics are kept (in this process, or shared through Redis: `store`). */
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
  /**
   * `gslbd ctl replace` (`POST /replace`): starts a new engine process with this one's command
   * line, hands it the listening sockets and then the open connections (`processHandover.ts`), and
   * retires this process (`StartOptions.onReplaced`). Resolves with the new process's pid once it
   * serves.
   * @throws Error when a replace is already running, or the new process exits or is not up in
   *   time (this process then keeps serving).
   */
  replace(): Promise<number>;
  stop(): Promise<void>;
}

/** Options for tests and embedding. */
export interface StartOptions {
  readonly ctx?: ResolveContext;
  /** Reload on SIGHUP (default true). */
  readonly signals?: boolean;
  /** Reload when the file changes (default: the configuration's `watch`, true unless set). */
  readonly watchFile?: boolean;
  /** Log destination file descriptor (default stdout). */
  readonly logDestination?: number;
  /** Set when this process replaces a running one (`gslbd ctl replace`): its sockets are taken over instead of bound. */
  readonly takeOver?: TakeOver;
  /** Called when a replacement took everything over and this process stopped its work: exit now (the CLI exits 0). */
  readonly onReplaced?: () => void;
}

/** Time a replacement process has to load and take the sockets over (ms); a larger configuration or location file loads in seconds. */
const REPLACE_UP_TIMEOUT_MS = 120000;

/** How long after `gslbd up` the configuration worker starts, ready for the first reload (ms). */
const READER_WARM_DELAY_MS = 1000;

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
  const candidate = readCandidateConfig(file);
  // The start-up's phases in ms since the process began (performance.now(): Node's time origin, the exec), logged with `gslbd up`.
  const startup: Record<string, number> = { configLoaded: Math.round(performance.now()) };
  const { config } = candidate;
  const adminCfg = config.listeners.admin;
  const token = candidate.adminToken;
  const log = createLogger(config.logging.level, options.logDestination, config.logging);
  const metrics = new EngineMetrics();
  metrics.setQueryCounters(config.queryCounters);
  const storeTelemetry = new StoreTelemetry(metrics.registry);
  const opened = openStateStore(
    config.store,
    storeTelemetry.hooks((c) =>
      c.state === 'connected'
        ? log.info({ store: c.state }, 'state store connected')
        : log.warn({ store: c.state }, 'state store unreachable; serving the last state'),
    ),
  );
  const store = opened.store;
  const ctx = options.ctx ?? systemContext();
  // The engine exists once the first snapshot does; capabilities publish only after their start.
  const engineRef: { engine?: Engine } = {};
  let reload: (reason: string, options?: ReloadOptions) => Promise<ReloadOutcome> = () => Promise.resolve({ ok: false, error: 'the engine is starting' });
  let statusSignals: StatusSignals | undefined;
  const failsafe = new FailsafeWatch(log, metrics.registry);
  const reloads = new ReloadHistory();
  // After every published snapshot: which records are all down now (off the query path, in slices:
  // one check over 20,000 records held the event loop 120-180 ms).
  const published = (engine: Engine): void =>
    void failsafe
      .follow(() => ({ records: engine.snapshot.records, view: engine.snapshot.env.health, nowMs: ctx.now() }))
      .catch((err: unknown) => log.error({ err }, 'fail-safe check failed'));
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
  // Agent reports reach the metric store through the push API's own gate (validation, counters, the state store).
  runtimeOf(started, agentsCapability).connectMetricGate(steering.gate);

  // A shared store's maps exist now (the capabilities asked for them): load them before the first
  // snapshot; an unreachable store delays start-up by the configured wait at most.
  await opened.ready();
  const state = await prepareAll(runtimes, config, []);
  startup.prepared = Math.round(performance.now());
  const snapshot = compileSnapshot<Config>({ file, config, capabilities: CAPABILITIES, state, nowMs: Date.now(), contentHashes: candidate.contentHashes });
  startup.snapshot = Math.round(performance.now());
  const engine = new Engine(snapshot, ctx, log);
  engineRef.engine = engine;
  for (const { runtime } of runtimes) runtime.commit?.(config);
  // Monitor verdicts are also the metric store's host.status and service.status (seed 004).
  statusSignals = new StatusSignals(health.monitor, steering.store);
  statusSignals.sync(ctx.now());
  metrics.generation.set(snapshot.generation);
  published(engine);

  const running = { config, fingerprint: candidate.fingerprint, sharedHash: candidate.sharedHash };
  storeTelemetry.attach(store, () => running.sharedHash);
  // The configuration file and its zones' zone files: the set follows the running configuration.
  const watcher = new ConfigFilesWatch(
    (changed, change) => void requestReload(changed === file ? 'file changed' : `zone file changed: ${changed}`, { change }),
    log,
  );
  const rearmWatch = (): void => watcher.watch((options.watchFile ?? running.config.watch) ? configurationFiles(running.config, file) : []);
  const reader = new ConfigReader();
  const requests = new ReloadRequests((request) =>
    reloadOnce({ engine, running, runtimes, doors, metrics, log, request, statusSignals: statusSignals!, admin, rearmWatch, reader, published, reloads }),
  );
  const requestReload = (reason: string, from: { change?: FileChange; refresh?: readonly string[] }): Promise<ReloadOutcome> =>
    requests.request(reason, from.refresh ?? [], from.change !== undefined);
  reload = (reason, reloadOptions = {}) => requestReload(reason, { refresh: reloadOptions.refresh ?? [] });

  // Capabilities' after-answer hooks (DNSSEC signing), in list order: every door's answer wrapper runs them, and /explain.
  const afterAnswer = runtimes.flatMap(({ runtime }) => (runtime.afterAnswer ? [runtime.afterAnswer] : []));
  const zoneKeys = runtimes.find(({ runtime }) => runtime.zoneKeys !== undefined)?.runtime.zoneKeys;
  const doorHost: DoorHost = { file, engine, metrics, log, afterAnswer, ...(zoneKeys ? { zoneKeys } : {}) };
  const doors = createDoors(LISTENERS, config, doorHost);
  const admin = adminCfg ? new AdminServer(token, log, adminTls(adminCfg, file)) : undefined;
  if (admin) {
    const condition = (): EngineCondition => engineCondition(failsafe, reloads, () => steering.store.staleRows(ctx.now()));
    for (const r of coreRoutes({ engine, metrics, reload, afterAnswer, condition, store: () => storeTelemetry.describe() })) admin.route(r);
    // Counterfactual /explain and replay: candidates through the same reader as reloads, compiled apart from the live snapshot.
    const counterfactuals = new Counterfactuals({ engine, running: () => running.config, reader });
    for (const r of whatIfRoutes({ engine, counterfactual: (w) => counterfactuals.snapshot(w), afterAnswer })) admin.route(r);
    const consoleFeed = new ConsoleFeed(engine, metrics, condition, () => storeTelemetry.describe());
    for (const r of consoleRoutes(consoleFeed, engine)) admin.route(r);
    admin.stream(consoleStream(consoleFeed));
    for (const { runtime } of runtimes) for (const r of runtime.routes ?? []) admin.route(r);
    for (const door of doors.values()) for (const r of door.routes ?? []) admin.route(r);
  }

  const up: Record<string, unknown> = {};
  const listening: { stop(): Promise<void> }[] = [];
  // A replacement loads everything first, while the old process answers, and only then takes the sockets over.
  const takenOver = options.takeOver ? await options.takeOver.listeners() : new Map<string, ReadonlyMap<string, unknown>>();
  const adminKey = adminCfg ? `admin|${adminCfg.address}|${adminCfg.port}` : '';
  try {
    for (const section of LISTENERS) {
      if (section.name === 'admin') {
        if (admin) {
          const old = takenOver.get(ADMIN_DOOR)?.get(adminKey);
          await admin.start(adminCfg!.address, adminCfg!.port, old && !('send' in (old as object)) ? (old as Server) : undefined);
          listening.push(admin);
        }
        up.admin = admin ? `${adminCfg!.address}:${admin.port}` : null;
        continue;
      }
      const door = doors.get(section.name);
      if (door) {
        await door.start((takenOver.get(section.name) ?? new Map()) as ReadonlyMap<string, ListeningSocket>);
        listening.push(door);
      }
      up[section.name] = door ? door.describe()[section.name] : null;
    }
  } catch (e) {
    await Promise.all(listening.map((s) => s.stop()));
    throw e;
  }

  startup.listening = Math.round(performance.now());
  armSignals(reload);
  rearmWatch();
  // The configuration worker loads the configuration modules again (about half a second of CPU):
  // once the first queries are answered, not beside them while a restarted engine is most needed.
  const warmReader = setTimeout(() => reader.warm(), READER_WARM_DELAY_MS).unref();
  for (const { runtime } of runtimes) runtime.run?.();

  log.info(
    {
      ...up,
      generation: snapshot.generation,
      ...Object.assign({}, ...runtimes.map(({ runtime }) => runtime.describe?.() ?? {})),
      ...(options.takeOver ? { replaces: options.takeOver.replaces } : {}),
      startupMs: startup,
    },
    'gslbd up',
  );
  if (options.takeOver) void options.takeOver.up(doors, log);

  let replacing: Promise<number> | undefined;
  const retire = async (pid: number): Promise<void> => {
    // systemd: the new process is the service's main process now (it is this one's child until this exits).
    notifyServiceManager(`MAINPID=${pid}\nREADY=1\nSTATUS=replaced by pid ${pid}`, log);
    process.off('SIGHUP', onHup);
    watcher.close();
    clearTimeout(warmReader);
    await reader.close();
    await Promise.all(runtimes.map(({ runtime }) => runtime.stop?.() ?? Promise.resolve()));
    await opened.stop();
    log.info({ replacement: pid }, 'replaced: this process exits');
    log.flush();
    options.onReplaced?.();
  };
  const replace = (): Promise<number> => {
    if (replacing) return Promise.reject(new Error('a replace is already running'));
    const handing = {
      doors,
      log,
      upTimeoutMs: REPLACE_UP_TIMEOUT_MS,
      retire: (pid: number) => void retire(pid),
      ...(admin?.listening ? { admin: { key: adminKey, server: admin.listening, release: () => admin.release() } } : {}),
    };
    log.info({ pid: process.pid }, 'replace: starting the new process');
    // systemd: a reload cycle, ended by MAINPID= and READY=1 when the new process is up (retire), or by READY=1 here.
    notifyServiceManager(`RELOADING=1\nMONOTONIC_USEC=${monotonicUsec()}\nSTATUS=replacing: starting a new process`, log);
    replacing = startReplacement(handing).catch((e: unknown) => {
      replacing = undefined;
      log.error({ err: e }, 'replace failed; this process keeps serving');
      notifyServiceManager(`READY=1\nSTATUS=replace failed; serving generation ${engine.snapshot.generation}`, log);
      throw e;
    });
    return replacing;
  };
  if (admin) admin.route(replaceRoute(replace));

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
    replace,
    async stop() {
      process.off('SIGHUP', onHup);
      watcher.close();
      clearTimeout(warmReader);
      await reader.close();
      await Promise.all([...[...doors.values()].map((d) => d.stop()), admin?.stop(), ...runtimes.map(({ runtime }) => runtime.stop?.())]);
      storeTelemetry.stop();
      await opened.stop();
      log.flush();
    },
  };
}

/** `POST /replace` (`gslbd ctl replace`): the new process's pid once it serves, or why it failed (this process then keeps serving). */
function replaceRoute(replace: () => Promise<number>): AdminRoute {
  return {
    method: 'POST',
    path: '/replace',
    mutating: true,
    async handle() {
      try {
        const pid = await replace();
        return { status: 200, json: { ok: true, pid, replaced: process.pid } };
      } catch (e) {
        return { status: 409, json: { ok: false, error: (e as Error).message } };
      }
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
  /** The configuration the published snapshot was built from, and the fingerprint of its read. */
  readonly running: { config: Config; fingerprint: string; sharedHash: string };
  readonly runtimes: readonly Started[];
  /** The front doors, each told the new configuration after a reload ({@link FrontDoor.reconfigure}). */
  readonly doors: ReadonlyMap<string, FrontDoor>;
  readonly metrics: EngineMetrics;
  readonly log: Logger;
  readonly request: ReloadRequest;
  readonly statusSignals: StatusSignals;
  readonly admin: AdminServer | undefined;
  /** Starts or stops the file watch after `watch` changed. */
  readonly rearmWatch: () => void;
  readonly reader: ConfigReader;
  /** Called after the new snapshot is published (the fail-safe watch). */
  readonly published: (engine: Engine) => void;
  readonly reloads: ReloadHistory;
}

/**
 * One reload through the reload pipeline (`reloadPipeline.ts`): the file is read, parsed,
 * validated and checked on a worker thread, the capabilities prepare, the snapshot is compiled in
 * slices and published in one swap. A request that may announce an edit already applied (a file
 * watch event, or a request made while another reload ran) is skipped when the file reads the same
 * as the running configuration: one reload per edit, whether the watch or SIGHUP sees it first.
 */
async function reloadOnce(r: ReloadContext): Promise<ReloadOutcome> {
  const { engine, log, metrics, request } = r;
  const { reason, refresh } = request;
  const current: Snapshot = engine.snapshot;
  // systemd (sd_notify(3)): RELOADING=1 with the monotonic time, then READY=1 once the reload ended, whatever its outcome.
  notifyServiceManager(`RELOADING=1\nMONOTONIC_USEC=${monotonicUsec()}`, log);
  try {
    const candidate = await r.reader.read(current.file);
    const { config } = candidate;
    if (request.skipIfUnchanged && refresh.length === 0 && candidate.fingerprint === r.running.fingerprint) {
      log.debug({ reason }, 'configuration unchanged; no reload');
      return { ok: true, generation: current.generation, unchanged: true };
    }
    // Every setting the schema marks as restart-only (listeners, the log line format, the shared state store).
    for (const s of changedRestartSettings(RESTART_SETTINGS, r.running.config, config)) {
      log.warn({ reason, setting: s.path.join('.'), why: s.why }, `${s.path.join('.')} changed; it takes effect at the next restart`);
    }
    const state = await prepareAll(r.runtimes, config, refresh, current.env);
    const next = await compileInSlices({
      file: current.file,
      config,
      capabilities: CAPABILITIES,
      state,
      nowMs: Date.now(),
      previous: engine.snapshot,
      contentHashes: candidate.contentHashes,
    });
    // What changed, in slices before the swap (the swap and what follows it stay in one turn): over
    // 20,000 records the summary held the event loop for seconds.
    const changes = await runInSlices(reloadSummarySteps(r.running.config, config));
    // Health and other capabilities may have published new views while the snapshot was compiled:
    // the new snapshot takes the latest generation.
    engine.publish(engine.snapshot.generation >= next.generation ? { ...next, generation: engine.snapshot.generation + 1 } : next);
    r.running.config = config;
    r.running.fingerprint = candidate.fingerprint;
    r.running.sharedHash = candidate.sharedHash;
    // The logging level applies at once (pino's level is a property of the one logger).
    log.level = config.logging.level;
    metrics.setQueryCounters(config.queryCounters);
    for (const { runtime } of r.runtimes) runtime.commit?.(config);
    for (const door of r.doors.values()) door.reconfigure?.(config);
    r.statusSignals.sync(engine.ctx.now());
    r.admin?.setToken(candidate.adminToken);
    r.rearmWatch();
    const generation = engine.snapshot.generation;
    metrics.generation.set(generation);
    metrics.reloads.inc({ result: 'ok' });
    r.published(engine);
    r.reloads.succeeded(reason, generation, Date.now());
    log.info({ reason, generation, changes: isEmptySummary(changes) ? 'none' : loggedSummary(changes) }, 'configuration reloaded');
    return { ok: true, generation, changes };
  } catch (e) {
    metrics.reloads.inc({ result: 'invalid' });
    const problems = e instanceof ConfigError ? e.problems : undefined;
    r.reloads.failed(reason, (e as Error).message, Date.now());
    // The first problems only: a systematic mistake over 20,000 records gives 20,000 problems (check-config lists them all).
    const logged = problems && { problems: problems.slice(0, LOGGED_NAMES), omittedProblems: Math.max(0, problems.length - LOGGED_NAMES) };
    log.error({ reason, ...logged, err: problems ? undefined : e }, 'reload failed; keeping the running configuration');
    return { ok: false, error: (e as Error).message };
  } finally {
    notifyServiceManager(`READY=1\nSTATUS=serving generation ${engine.snapshot.generation}`, log);
  }
}

/** A reload asked for, with the requests that joined it. */
interface ReloadRequest {
  readonly reason: string;
  readonly refresh: readonly string[];
  /** True when every request behind it may announce an edit already applied (see {@link reloadOnce}). */
  readonly skipIfUnchanged: boolean;
}

/**
 * Reloads run one at a time; requests that arrive while one waits to start join it (their
 * `refresh` lists merged), so a burst of SIGHUPs, watch events and API calls is one reload.
 */
class ReloadRequests {
  private running: Promise<unknown> = Promise.resolve();
  private busy = false;
  private waiting: { reason: string; refresh: Set<string>; skipIfUnchanged: boolean; outcome: Promise<ReloadOutcome> } | undefined;

  constructor(private readonly run: (request: ReloadRequest) => Promise<ReloadOutcome>) {}

  /** `fromWatch`: the file watch saw a change (which SIGHUP or the API may have applied already). */
  request(reason: string, refresh: readonly string[], fromWatch: boolean): Promise<ReloadOutcome> {
    const skippable = fromWatch || this.busy;
    if (this.waiting) {
      for (const name of refresh) this.waiting.refresh.add(name);
      this.waiting.skipIfUnchanged &&= skippable;
      return this.waiting.outcome;
    }
    const entry = { reason, refresh: new Set(refresh), skipIfUnchanged: skippable, outcome: undefined as unknown as Promise<ReloadOutcome> };
    entry.outcome = this.running.then(async () => {
      this.waiting = undefined;
      this.busy = true;
      try {
        return await this.run({ reason: entry.reason, refresh: [...entry.refresh], skipIfUnchanged: entry.skipIfUnchanged });
      } finally {
        this.busy = false;
      }
    });
    this.waiting = entry;
    this.running = entry.outcome;
    return entry.outcome;
  }
}

/** The admin listener's certificate, key and client CA, read once at start-up (relative to the configuration file); undefined for plain HTTP. */
function adminTls(admin: AdminListenerConfig, configFile: string): AdminTls | undefined {
  if (admin.tls === undefined) return undefined;
  const read = (path: string): Buffer => readRegularFile(resolvePath(dirname(configFile), path), FILE_SIZE_LIMITS.tls);
  return {
    cert: read(admin.tls.certFile),
    key: read(admin.tls.keyFile),
    ...(admin.tls.clientCaFile !== undefined ? { clientCa: read(admin.tls.clientCaFile) } : {}),
  };
}

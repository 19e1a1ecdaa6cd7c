import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { AGENT_API_VERSION, type AgentHello } from '../core/contracts/agentApi.js';
import { loadConfigFileWith } from '../core/config/load.js';
import { createLogger, type Logger } from '../core/telemetry/logger.js';
import { agentConfigSchema, type AgentConfig, type EngineConfig } from './agentSchema.js';
import { AgentTelemetry } from './agentTelemetry.js';
import { EngineClient } from './engineClient.js';
import { ReadingSlots, type SourceReading } from './readingSlots.js';
import { EngineReporter } from './reporter.js';
import { HaproxySource } from './sources/haproxySource.js';
import { HostSource } from './sources/hostSource.js';
import { PrometheusSource } from './sources/prometheusSource.js';
import { ProbeLoop } from './probeLoop.js';
import { Prober } from './probes/prober.js';
import { cpuCount, parseMemInfo } from './sources/procStats.js';

/** A running agent. */
export interface RunningAgent {
  readonly config: AgentConfig;
  readonly log: Logger;
  readonly telemetry: AgentTelemetry;
  /** The agent's `/metrics` port (undefined when `metrics` is not configured). */
  readonly metricsPort: number | undefined;
  readonly reporters: readonly EngineReporter[];
  stop(): Promise<void>;
}

/** Options for tests and embedding. */
export interface AgentStartOptions {
  /** Log destination file descriptor (default stdout). */
  readonly logDestination?: number;
}

/** A source the agent reads on its own cadence. */
interface Scheduled {
  readonly name: string;
  readonly intervalMs: number;
  read(): Promise<SourceReading>;
}

/**
 * Loads and validates an agent configuration file (YAML or JSON).
 * @throws ConfigError listing every problem with its path.
 */
export function loadAgentConfig(file: string): AgentConfig {
  return loadConfigFileWith(agentConfigSchema, file).config;
}

/**
 * Starts `gslbd agent` (docs/PRODUCT.md §7; src/agent/README.md): reads every source on its own
 * cadence into the reading slots, and every `report.intervalSeconds` sends each engine one batch of
 * the fresh readings (`reporter.ts`). A source that fails is logged once per failure run and left
 * out of the reports (its metrics go stale on the engines); the agent keeps running.
 * @throws ConfigError for an invalid file; Error when a token or TLS file cannot be read or the metrics port cannot be bound.
 */
export async function startAgent(file: string, options: AgentStartOptions = {}): Promise<RunningAgent> {
  const config = loadAgentConfig(file);
  const log = createLogger(config.logging.level, options.logDestination);
  const telemetry = new AgentTelemetry();
  const slots = new ReadingSlots();
  const clients = config.engines.map((e) => engineClient(e, file));
  const reporters = clients.map(
    (client) =>
      new EngineReporter(
        client,
        config.agent,
        slots,
        {
          timeoutMs: config.report.timeoutSeconds * 1000,
          retryMs: config.report.retrySeconds * 1000,
          maxRetryMs: config.report.maxRetrySeconds * 1000,
          maxPendingProbes: config.report.maxPendingProbes,
        },
        telemetry,
        log,
      ),
  );
  const prober = config.probes ? new Prober(config.probes) : undefined;
  const probeLoop =
    config.probes && prober
      ? new ProbeLoop(config.probes, prober, clients, (results) => reporters.forEach((r) => r.addProbes(results)), telemetry, log)
      : undefined;
  if (config.probes && config.probes.allow.length === 0) log.warn('probes.allow is empty: no network may be probed, every probe request is refused');
  const sources = await buildSources(config, prober);
  const timers: NodeJS.Timeout[] = [];
  const failing = new Set<string>();
  const reading = new Set<string>();
  const run = async (s: Scheduled): Promise<void> => {
    if (reading.has(s.name)) return;
    reading.add(s.name);
    try {
      slots.put(s.name, await s.read(), Date.now(), 2 * Math.max(s.intervalMs, config.report.intervalSeconds * 1000));
      telemetry.sourceUp.set({ source: s.name }, 1);
      telemetry.readings.inc({ source: s.name, result: 'ok' });
      if (failing.delete(s.name)) log.info({ source: s.name }, 'source readable again');
    } catch (e) {
      slots.clear(s.name);
      telemetry.sourceUp.set({ source: s.name }, 0);
      telemetry.readings.inc({ source: s.name, result: 'failed' });
      if (!failing.has(s.name)) log.warn({ source: s.name, err: (e as Error).message }, 'source reading failed; its metrics go stale until it reads again');
      failing.add(s.name);
    } finally {
      reading.delete(s.name);
    }
  };
  for (const s of sources) {
    void run(s);
    timers.push(setInterval(() => void run(s), s.intervalMs));
  }
  timers.push(setInterval(() => reporters.forEach((r) => void r.send()), config.report.intervalSeconds * 1000));

  const metricsPort = config.metrics ? await telemetry.listen(config.metrics.address, config.metrics.port) : undefined;
  for (const client of clients) void greet(client, config, log);
  probeLoop?.start();
  log.info(
    {
      agent: config.agent.name,
      dc: config.agent.dc,
      zone: config.agent.zone,
      engines: clients.map((c) => c.url),
      sources: sources.map((s) => s.name),
      metricsPort,
    },
    'gslbd agent up',
  );
  return {
    config,
    log,
    telemetry,
    metricsPort,
    reporters,
    async stop() {
      for (const t of timers) clearInterval(t);
      const probing = probeLoop?.stop();
      // Closing the clients ends the probe loop's long polls.
      await Promise.all(reporters.map((r) => r.stop()));
      await probing;
      await telemetry.close();
      log.flush();
    },
  };
}

/** The sources a configuration names, each with its cadence (the host source takes its baseline first). */
async function buildSources(config: AgentConfig, prober: Prober | undefined): Promise<Scheduled[]> {
  const out: Scheduled[] = [];
  if (config.host.enabled) {
    const host = new HostSource(config.host, hostCheckPoints(config, prober));
    await host.baseline();
    out.push({ name: 'host', intervalMs: config.host.intervalSeconds * 1000, read: async () => ({ host: (await host.read()).sample }) });
  }
  if (config.haproxy.length > 0) {
    const machine = await machineSize();
    for (const h of config.haproxy) {
      const source = new HaproxySource(h, machine);
      out.push({ name: source.name, intervalMs: h.intervalSeconds * 1000, read: async () => ({ services: await source.read() }) });
    }
  }
  for (const p of config.prometheus) {
    const source = new PrometheusSource(p);
    out.push({ name: source.name, intervalMs: p.intervalSeconds * 1000, read: () => source.read() });
  }
  return out;
}

/** The host source's check points with the prober's trains (all methods' packets summed), or undefined without check points. */
export function hostCheckPoints(config: AgentConfig, prober: Prober | undefined): ConstructorParameters<typeof HostSource>[1] {
  if (prober === undefined || config.host.checkPoints.length === 0) return undefined;
  return {
    points: config.host.checkPoints,
    probe: async (address) => {
      const trains = await prober.probe(address);
      return { sent: trains.reduce((n, r) => n + r.sent, 0), received: trains.reduce((n, r) => n + r.received, 0) };
    },
  };
}

/** CPUs and memory of this machine (HAProxy's CPU and memory are shares of them). */
async function machineSize(): Promise<{ cpus: number; memTotal: number }> {
  const [stat, meminfo] = await Promise.all([readFile('/proc/stat', 'utf8'), readFile('/proc/meminfo', 'utf8')]);
  return { cpus: cpuCount(stat), memTotal: parseMemInfo(meminfo).total };
}

/** The client of one engine, with its token and TLS files read (relative to the agent's configuration file). */
function engineClient(e: EngineConfig, configFile: string): EngineClient {
  const read = (path: string): Buffer => readFileSync(resolve(dirname(configFile), path));
  const token = e.token ?? read(e.tokenFile!).toString('utf8').trim();
  return new EngineClient(e.url, token, {
    ...(e.caFile !== undefined ? { ca: read(e.caFile) } : {}),
    ...(e.certFile !== undefined ? { cert: read(e.certFile), key: read(e.keyFile!) } : {}),
  });
}

/** Asks an engine who it takes this agent for, and logs a mismatch or a refusal (the agent keeps running: the engine may come up later). */
async function greet(client: EngineClient, config: AgentConfig, log: Logger): Promise<void> {
  try {
    const { status, json } = await client.request('GET', `/agent/v${AGENT_API_VERSION}/hello`, undefined, config.report.timeoutSeconds * 1000);
    if (status !== 200) {
      log.error({ engine: client.url, status, reply: json }, 'engine refused the agent credential');
      return;
    }
    const hello = json as AgentHello;
    if (hello.dc !== config.agent.dc || hello.zone !== config.agent.zone) {
      log.error(
        { engine: client.url, engineSays: { dc: hello.dc, zone: hello.zone }, configured: { dc: config.agent.dc, zone: config.agent.zone } },
        'the engine knows this credential for another data center or zone',
      );
    } else {
      log.info({ engine: client.url, agent: hello.agent }, 'engine knows the agent');
    }
  } catch (e) {
    log.warn({ engine: client.url, err: (e as Error).message }, 'engine not reachable yet; reports will retry');
  }
}

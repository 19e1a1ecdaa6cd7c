import { z } from 'zod';
import type { ConfigProblem } from '../../core/config/load.js';
import type { AdminRoute } from '../../core/contracts/adminRoute.js';
import type { Capability, CapabilityHost, CapabilityRuntime, EnvPart } from '../../pipeline/capability.js';
import { failsafeStage } from './failsafe.js';
import { healthGateStage } from './healthGate.js';
import { compileRecordHealth } from './recordHealth.js';
import { healthDataCenterKeys, healthEndpointKeys } from './topologyKeys.js';
import { CHECK_KINDS, type CheckKindList } from './checks/registry.js';
import type { HealthConfigInput } from './healthConfig.js';
import { HealthMonitor } from './healthMonitor.js';
import { healthReferencesOf } from './healthReferences.js';
import { healthRoutes } from './healthRoutes.js';
import { healthSectionSchemaOf, RECORD_HEALTH_DEFAULTS, recordHealthSchema } from './healthSchema.js';
import { monitorFileProblems } from './monitorFiles.js';

/** A started health capability: the {@link CapabilityRuntime} and its monitor. */
export interface HealthRuntime extends CapabilityRuntime<HealthConfigInput> {
  /**
   * The monitor, for what other parts read of it (`coveredStatuses()` for the metric store's
   * `host.status` / `service.status`).
   */
  readonly monitor: HealthMonitor;
  readonly routes: readonly AdminRoute[];
  prepare(config: HealthConfigInput, refresh: boolean): EnvPart;
  run(): void;
  stop(): Promise<void>;
}

/** The {@link Capability} contract and the file check the composition root runs with the others (as geo's). */
export interface HealthCapability extends Capability<HealthConfigInput> {
  /** Missing or irregular files the monitors name, each with its key (`health.monitors[1].caFile`). */
  fileReferenceProblems(config: Pick<HealthConfigInput, 'health'>, configFile: string): ConfigProblem[];
}

/**
 * The health capability for monitors of `kinds` (src/capabilities/health/README.md):
 * - `schema`: the root keys `site` and `health`, the record key `health`, a data center's
 *   `checkPoints`, an endpoint's `monitors` and `check`;
 * - `check`: the references of the health configuration (`healthReferences.ts`);
 * - `stages`: per record, the health gate (gate slot) and the all-down policy (fallback slot)
 *   over the record's tiers (`recordHealth.ts`);
 * - `start(host)`: a monitor registering its metrics on the engine's registry and keeping its
 *   check verdicts and overrides in `host.store`. `prepare(config)` configures it and gives
 *   `{ health: view }` (it throws, naming the field, for a file a monitor cannot read);
 *   every later change of health is published through `host.publish({ health: view })`;
 *   `run()` starts the checks; `stop()` stops them and writes the state file; `routes`: `GET
 *   /health` and `POST /health/override`, answering with `host.generation()`;
 * - `fileReferenceProblems(config, configFile)`: the files monitors name (their kinds' `files`,
 *   an https monitor's `caFile`) that are missing, for `check-config` and start-up.
 */
export function healthCapabilityOf<const K extends CheckKindList>(kinds: K) {
  return {
    name: 'health',
    schema: {
      root: {
        /** The site this engine instance runs at (a data center's `site`); `localFirst` records answer it first (docs/PRODUCT.md §6). */
        site: z.string().min(1).optional().describe("The site this engine instance runs at (a data center's site); localFirst GSLB records answer it first."),
        health: healthSectionSchemaOf(kinds)
          .default({ monitors: [], stateMaxAgeMs: 300_000 })
          .describe('Health monitoring: the monitors, the state file and quorum health across nodes.'),
      },
      record: {
        /** Cold start, tiers, all-down policy, local-first and TTL while down (src/capabilities/health/README.md). */
        health: recordHealthSchema
          .default(RECORD_HEALTH_DEFAULTS)
          .describe('What the GSLB record does with health: cold start, tiers, all-down policy, local-first and TTL while down.'),
      },
      datacenter: healthDataCenterKeys,
      endpoint: healthEndpointKeys,
    },
    check: healthReferencesOf(kinds),
    stages({ record, candidates, config }) {
      const compiled = compileRecordHealth(record.health, record.failsafe.length > 0, candidates, record.service, config.site);
      return [healthGateStage(compiled), failsafeStage(compiled)];
    },
    start(host: CapabilityHost): HealthRuntime {
      const monitor = new HealthMonitor({ log: host.log, registry: host.metrics.registry, store: host.store, kinds });
      monitor.onChange((view) => host.publish({ health: view }));
      return {
        monitor,
        routes: healthRoutes(monitor, () => host.generation()),
        prepare: (config) => ({ health: monitor.configure(config, host.file) }),
        run: () => monitor.start(),
        stop: () => monitor.stop(),
      };
    },
    fileReferenceProblems(config: Pick<HealthConfigInput, 'health'>, configFile: string): ConfigProblem[] {
      return monitorFileProblems(config.health.monitors, configFile, kinds);
    },
  } satisfies HealthCapability;
}

/** The health capability of the engine's check kinds (`checks/registry.ts`). */
export const healthCapability = healthCapabilityOf(CHECK_KINDS);

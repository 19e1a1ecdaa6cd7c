import type { MonitorBase } from './checks/checkKind.js';
import type { CheckTargetConfig, DcCheckPointsConfig, RecordHealthConfig } from './healthSchema.js';

/**
 * The parts of a validated configuration that health reads: its own keys (`site`, `health`, a
 * record's `health`, an endpoint's `monitors` and `check`, a data center's `checkPoints`) and the
 * topology they refer to. Declared here, structurally, so health depends on no root
 * configuration type: the engine's whole configuration satisfies it.
 */
export interface HealthConfigInput {
  /** The site this engine instance runs at (a data center's `site`). */
  readonly site?: string | undefined;
  readonly health: HealthSectionInput;
  readonly datacenters: readonly HealthDataCenterInput[];
  readonly services: readonly HealthServiceInput[];
  readonly records: readonly HealthRecordInput[];
}

/** The `health` section as health reads it: monitors of any kind, the state file. */
export interface HealthSectionInput {
  readonly monitors: readonly MonitorBase[];
  /** Relative to the configuration file. */
  readonly stateFile?: string | undefined;
  /** ms */
  readonly stateMaxAgeMs: number;
  /** Quorum health over a shared store (absent: the defaults). */
  readonly quorum?:
    { readonly observers: number; readonly voteTtlSeconds: number; readonly graceSeconds: number; readonly checkers?: number | undefined } | undefined;
}

/** A data center, with its check points. */
export interface HealthDataCenterInput {
  readonly name: string;
  /** Defaults to the name. */
  readonly site?: string | undefined;
  readonly checkPoints?: DcCheckPointsConfig | undefined;
}

/** A service and its endpoints. */
export interface HealthServiceInput {
  readonly name: string;
  readonly endpoints: readonly HealthEndpointInput[];
}

/** An endpoint: where it is, whether it is enabled, its monitors and where they connect. */
export interface HealthEndpointInput {
  readonly dc: string;
  /** Exactly one of `address` and `target` is set. */
  readonly address?: string | undefined;
  readonly target?: string | undefined;
  readonly port?: number | undefined;
  readonly enabled: boolean;
  /** Names of `health.monitors`. */
  readonly monitors: readonly string[];
  readonly check?: CheckTargetConfig | undefined;
}

/** A GSLB record as health reads it. */
export interface HealthRecordInput {
  readonly service: string;
  readonly failsafe: readonly string[];
  readonly health: RecordHealthConfig;
}

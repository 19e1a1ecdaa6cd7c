import type { z } from 'zod';
import type { AdminRoute } from '../core/contracts/adminRoute.js';
import type { AfterAnswerHook } from '../core/contracts/frontDoor.js';
import type { ZoneSigningKeys } from '../core/contracts/zoneSigningKeys.js';
import type { StateStore } from '../core/contracts/stateStore.js';
import type { EngineMetrics } from '../core/telemetry/engineMetrics.js';
import type { Logger } from '../core/telemetry/logger.js';
import type { CompiledDataCenter } from '../core/model/topology.js';
import type { LocationDb } from '../core/location/locationDb.js';
import type { BalanceAlgorithm } from './selection/balanceAlgorithm.js';
import type { CommonPolicyShape, PolicyConfig } from './config/recordSchema.js';
import type { ClientInputs, DcCandidate, SelectionEnv, Stage } from './selection/stage.js';

/**
 * One capability of the engine — proximity, DNS policies, steering by metrics, health, location
 * data, balance algorithms — as one unit that owns everything about itself, the way a CoreDNS
 * plugin owns its `setup` and handler and a gdnsd plugin its `plugin_t`. The composition root
 * (`src/process/`) keeps the list; adding a capability is one folder and one line there.
 *
 * Every member is optional: a capability contributes only what it has.
 */
export interface Capability<C = never> {
  /** Short name, used in logs and `/status`. */
  readonly name: string;
  /** Its part of the configuration schema. */
  readonly schema?: SchemaFragment;
  /**
   * Cross-reference checks of its keys against the rest of the configuration, once the schema
   * passed (run as a zod `superRefine`, in list order, so problems carry their path).
   */
  check?(config: C, ctx: z.RefinementCtx): void;
  /**
   * Checks the references of a record's `policy` when it is of a type this capability implements
   * (data center and service names), where the query path checks the record, so every problem of
   * one record is reported together, in field order.
   */
  checkPolicy?(policy: PolicyConfig, refs: PolicyReferences, issue: (path: readonly (string | number)[], message: string) => void): void;
  /** The stages it adds to one GSLB record's pipeline (none when the record does not use it). */
  stages?(record: RecordStageInput<C>): readonly Stage[];
  /** Balance algorithms it provides, by `balanceAlgorithm` name. */
  readonly balanceAlgorithms?: readonly BalanceAlgorithm[];
  /** Starts its part of a running engine (monitors, stores, admin routes); once per process. */
  start?(host: CapabilityHost): CapabilityRuntime<C>;
}

/** A capability's part of the configuration schema, merged by the composition root in list order. */
export interface SchemaFragment {
  /** Top-level keys of the configuration file it owns. */
  readonly root?: z.ZodRawShape;
  /** Keys it adds to every GSLB record (`records[]`), after the record's own. */
  readonly record?: z.ZodRawShape;
  /** Keys it adds to every data center (`datacenters[]`), after the data center's own. */
  readonly datacenter?: z.ZodRawShape;
  /** Keys it adds to every endpoint (`services[].endpoints[]`), after the endpoint's own. */
  readonly endpoint?: z.ZodRawShape;
  /**
   * The `policy.type` variants it implements, each a strict object with a literal `type` and
   * the fields every policy has (`common`: `pickDcCount`, `balanceAlgorithm`).
   */
  policies?(common: CommonPolicyShape): readonly z.ZodObject[];
  /** The `policy` of a record that names none (one capability provides it). */
  readonly defaultPolicy?: Readonly<Record<string, unknown>>;
}

/** What a policy's references are checked against. */
export interface PolicyReferences {
  readonly dataCenters: ReadonlySet<string>;
  readonly services: ReadonlySet<string>;
}

/** What a capability sees of a record being compiled. */
export interface RecordStageInput<C> {
  /** The record's configuration, with every capability's record keys. */
  readonly record: RecordOf<C>;
  /** The whole validated configuration (global sections such as `actions`). */
  readonly config: C;
  /** Data centers that can answer the record, in configuration order, with their endpoints. */
  readonly candidates: readonly DcCandidate[];
  /** Every data center of the snapshot; `index` is the position. */
  readonly dataCenters: readonly CompiledDataCenter[];
  readonly dcByName: ReadonlyMap<string, CompiledDataCenter>;
  /** Prefix of the record's keys in the rotation store (`name/type`). */
  readonly rotationKeyPrefix: string;
  /** The location data the snapshot answers with (answer classes are built over it). */
  readonly geo: LocationDb | undefined;
  /** Where the stages' client inputs (location readers, client subnets, the query name) are registered. */
  readonly inputs: ClientInputs;
}

/** The record type of a configuration type `C` (its `records` element), or a plain object. */
export type RecordOf<C> = C extends { readonly records: readonly (infer R)[] } ? R : Record<string, unknown>;

/** The parts of the query path's state a capability can provide (location data, health, metrics, the probe demand sink, the proximity view). */
export type EnvPart = Partial<Pick<SelectionEnv, 'geo' | 'health' | 'metrics' | 'probes' | 'proximity'>>;

/** What the composition root gives a capability when it starts. */
export interface CapabilityHost {
  /** The configuration file (relative paths in it are relative to its directory). */
  readonly file: string;
  readonly log: Logger;
  /** The engine's Prometheus metrics; a capability registers its own on `metrics.registry`. */
  readonly metrics: EngineMetrics;
  /** Where state written outside the query path lives (observations, overrides, pushed metrics). */
  readonly store: StateStore;
  /** The engine's clock (ms since the epoch); tests fix it. */
  now(): number;
  /** The generation of the snapshot queries run on now. */
  generation(): number;
  /** Publishes a change of this capability's state: queries from now on run on a snapshot with it. */
  publish(part: EnvPart): void;
  /** Re-reads the configuration (as SIGHUP does); `refresh` names capabilities that must re-read their own data too. */
  reload(reason: string, refresh?: readonly string[]): Promise<ReloadOutcome>;
}

/** Names added, removed and changed by a reload, for one kind of thing (records, data centers, endpoints). */
export type ChangeSet = { readonly added: readonly string[]; readonly removed: readonly string[]; readonly changed: readonly string[] };

/**
 * Outcome of a reload: the new generation (the running one when nothing changed) and what changed
 * (by kind: `records`, `datacenters`, `endpoints`), or why the running configuration was kept.
 */
export type ReloadOutcome =
  | {
      ok: true;
      generation: number;
      /** Set when the file read the same as the running configuration and a request that could announce an applied edit was skipped. */
      unchanged?: true;
      changes?: Readonly<Record<string, ChangeSet>>;
    }
  | { ok: false; error: string };

/** A started capability. */
export interface CapabilityRuntime<C> {
  /** Its admin routes (mutating ones need the admin token). */
  readonly routes?: readonly AdminRoute[];
  /**
   * Before a snapshot is built from `config` (at start and on every reload): its part of the
   * snapshot's state. `refresh` is true when a reload asked it to re-read its own data.
   * @throws Error to refuse the configuration (the running one stays).
   */
  prepare?(config: C, refresh: boolean): EnvPart | Promise<EnvPart>;
  /** After the snapshot built from `config` is published. */
  commit?(config: C): void;
  /** Starts its background work once the front doors are open (health checks). */
  run?(): void;
  stop?(): Promise<void>;
  /** Fields for the `gslbd up` log line. */
  describe?(): Record<string, unknown>;
  /**
   * A step on every answer the engine built, before a front door encodes it (DNSSEC signing).
   * The composition root gives the front doors these hooks, in list order, as
   * `FrontDoorHost.afterAnswer`; the hook stays the same function for the life of the process
   * (it reads the capability's current state, which `commit` swaps).
   */
  readonly afterAnswer?: AfterAnswerHook;
  /**
   * The signing keys of signed zones (the DNSSEC capability), which the composition root gives
   * the front doors as `FrontDoorHost.zoneKeys` for DNS servers that sign themselves (PowerDNS).
   */
  readonly zoneKeys?: ZoneSigningKeys;
}

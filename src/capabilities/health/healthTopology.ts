import { z } from 'zod';
import type { GslbRecordConfig } from '../../pipeline/config/recordSchema.js';
import type { DataCenterConfig, EndpointConfig } from '../../pipeline/config/topologySchema.js';
import { checkTargetSchema, dcCheckPointsSchema, type CheckTargetConfig, type DcCheckPointsConfig, type RecordHealthConfig } from './healthSchema.js';

/** The keys health adds to every data center: its WAN and LAN check points (README.md, "Data center status"). */
export const healthDataCenterKeys = {
  /** WAN and LAN check points whose composite is the data center's status (src/capabilities/health/README.md). */
  checkPoints: dcCheckPointsSchema.optional(),
};

/** The keys health adds to every endpoint: the monitors run against it, and where they connect. */
export const healthEndpointKeys = {
  /** Names of `health.monitors` run against this endpoint; it is up when all of them are. */
  monitors: z.array(z.string().min(1)).default([]),
  /** Where the monitors connect when that is not the answer address (src/capabilities/health/README.md). */
  check: checkTargetSchema.optional(),
};

/** A data center with its health keys. */
export interface HealthDataCenterConfig extends DataCenterConfig {
  readonly checkPoints?: DcCheckPointsConfig | undefined;
}

/** An endpoint with its health keys. */
export interface HealthEndpointConfig extends EndpointConfig {
  readonly monitors: readonly string[];
  readonly check?: CheckTargetConfig | undefined;
}

/** A service whose endpoints carry their health keys. */
export interface HealthServiceConfig {
  readonly name: string;
  readonly endpoints: readonly HealthEndpointConfig[];
}

/** A GSLB record with its health key. */
export interface HealthRecordConfig extends GslbRecordConfig {
  readonly health: RecordHealthConfig;
}

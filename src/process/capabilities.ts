import { z } from 'zod';
import { balanceCapability } from '../capabilities/balance/capability.js';
import { geoSchema } from '../capabilities/geo/geoSchema.js';
import { failsafeStage } from '../capabilities/health/failsafe.js';
import { healthGateStage } from '../capabilities/health/healthGate.js';
import { checkHealthReferences } from '../capabilities/health/healthReferences.js';
import { compileRecordHealth } from '../capabilities/health/recordHealth.js';
import { healthSectionSchema, RECORD_HEALTH_DEFAULTS, recordHealthSchema } from '../capabilities/health/healthSchema.js';
import { healthDataCenterKeys, healthEndpointKeys } from '../capabilities/health/healthTopology.js';
import { policiesCapability } from '../capabilities/policies/capability.js';
import { proximityCapability } from '../capabilities/proximity/capability.js';
import { steeringCapability } from '../capabilities/steering/capability.js';
import type { Capability } from '../pipeline/capability.js';

const geoCapability = {
  name: 'geo',
  schema: { root: { geo: geoSchema.default({ sources: [], custom: [], mode: 'strict', implementation: 'auto' }) } },
} satisfies Capability;

const healthCapability = {
  name: 'health',
  schema: {
    root: {
      /** The site this engine instance runs at (a data center's `site`); `localFirst` records answer it first (SPEC §6). */
      site: z.string().min(1).optional(),
      health: healthSectionSchema.default({ monitors: [], stateMaxAgeMs: 300_000 }),
    },
    record: {
      /** Cold start, tiers, all-down policy, local-first and TTL while down (src/capabilities/health/README.md). */
      health: recordHealthSchema.default(RECORD_HEALTH_DEFAULTS),
    },
    datacenter: healthDataCenterKeys,
    endpoint: healthEndpointKeys,
  },
  check: checkHealthReferences,
  stages({ record, candidates, config }) {
    const compiled = compileRecordHealth(record.health, record.failsafe.length > 0, candidates, record.service, config.site);
    return [healthGateStage(compiled), failsafeStage(compiled)];
  },
} satisfies Capability<Parameters<typeof checkHealthReferences>[0]>;

/**
 * The engine's capabilities, in the order their schema fragments, checks and stages compose:
 * adding a capability is one folder under `src/capabilities/` and one line here.
 */
export const CAPABILITIES = [geoCapability, balanceCapability, proximityCapability, policiesCapability, healthCapability, steeringCapability] as const;

import { z } from 'zod';
import { balanceCapability } from '../capabilities/balance/capability.js';
import { geoSchema } from '../capabilities/geo/geoSchema.js';
import { healthCapability } from '../capabilities/health/capability.js';
import { policiesCapability } from '../capabilities/policies/capability.js';
import { proximityCapability } from '../capabilities/proximity/capability.js';
import { steeringCapability } from '../capabilities/steering/capability.js';
import type { Capability } from '../pipeline/capability.js';

const geoCapability = {
  name: 'geo',
  schema: { root: { geo: geoSchema.default({ sources: [], custom: [], mode: 'strict', implementation: 'auto' }) } },
} satisfies Capability;

/**
 * The engine's capabilities, in the order their schema fragments, checks and stages compose:
 * adding a capability is one folder under `src/capabilities/` and one line here.
 */
export const CAPABILITIES = [geoCapability, balanceCapability, proximityCapability, policiesCapability, healthCapability, steeringCapability] as const;

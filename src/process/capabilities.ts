import { agentsCapability } from '../capabilities/agents/capability.js';
import { balanceCapability } from '../capabilities/balance/capability.js';
import { dnssecCapability } from '../capabilities/dnssec/capability.js';
import { geoCapability } from '../capabilities/geo/capability.js';
import { healthCapability } from '../capabilities/health/capability.js';
import { networkProximityCapability } from '../capabilities/networkProximity/capability.js';
import { policiesCapability } from '../capabilities/policies/capability.js';
import { proximityCapability } from '../capabilities/proximity/capability.js';
import { steeringCapability } from '../capabilities/steering/capability.js';

/**
 * The engine's capabilities, in the order their schema fragments, checks and stages compose:
 * adding a capability is one folder under `src/capabilities/` and one line here.
 */
export const CAPABILITIES = [
  geoCapability,
  balanceCapability,
  proximityCapability,
  policiesCapability,
  healthCapability,
  steeringCapability,
  dnssecCapability,
  agentsCapability,
  networkProximityCapability,
] as const;

import { z } from 'zod';
import { checkTargetSchema, dcCheckPointsSchema } from './healthSchema.js';

/** The keys health adds to every data center: its WAN and LAN check points (README.md, "Data center status"). */
export const healthDataCenterKeys = {
  /** WAN and LAN check points whose composite is the data center's status (src/capabilities/health/README.md). */
  checkPoints: dcCheckPointsSchema.optional().describe("WAN and LAN check points whose composite is the data center's status (host.status)."),
};

/** The keys health adds to every endpoint: the monitors run against it, and where they connect. */
export const healthEndpointKeys = {
  /** Names of `health.monitors` run against this endpoint; it is up when all of them are. */
  monitors: z.array(z.string().min(1)).default([]).describe('Names of health.monitors run against this endpoint; it is up when all of them are; default none.'),
  /** Where the monitors connect when that is not the answer address (src/capabilities/health/README.md). */
  check: checkTargetSchema.optional().describe("Where the endpoint's monitors connect when that is not the answer address."),
};

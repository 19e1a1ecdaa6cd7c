import type { ProbeResultReport } from './agentApi.js';

/**
 * The state-store map of probe results (`StateStore.map`): the latest result per (consumer group,
 * client network), key `<group>|<network>`. The agents capability writes it from agent reports
 * (`src/capabilities/agents/probeResults.ts`); the network-proximity capability reads it into the
 * proximity database (`src/capabilities/networkProximity/`). Kept here, at the bottom, so the two
 * capabilities share one definition without importing each other.
 */
export const PROBE_RESULTS_MAP = 'agents.probeResults';

/**
 * One probe train's result as the engine keeps it (plain JSON, so a shared store can carry it):
 * what the agent reported, the network it stands for, who measured it and when the engine
 * received it.
 */
export interface StoredProbeResult extends ProbeResultReport {
  /** The reporting agent's name. */
  readonly agent: string;
  /** Its consumer group: `dc:<name>` or `zone:<id>`. */
  readonly group: string;
  /** The client network the target stands for (`198.51.100.0/24`). */
  readonly network: string;
  /** Share of the train that got no reply, percent. */
  readonly lossPercent: number;
  /** When the engine received it (ms since the epoch): age and expiry count from here, never from an agent's clock. */
  readonly atMs: number;
}

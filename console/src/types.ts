/** The JSON the console reads (shapes of `src/admin/consoleFeed.ts`, `/health`, `/explain`, `/what-if/replay`). */

export interface ConsoleEndpoint {
  key: string;
  status: string;
  override: string | null;
  since: string | null;
}

export interface ConsoleDataCenter {
  name: string;
  status: string;
  lat?: number;
  lon?: number;
  endpoints: ConsoleEndpoint[];
  answers: { total: number; lastMinute: number; perMinute: number[] };
}

export interface ConsoleCountry {
  country: string;
  lat?: number;
  lon?: number;
  dcs: Record<string, number>;
}

export interface Reload {
  reason: string;
  at: string;
  generation?: number;
  error?: string;
}

export interface ConsoleState {
  at: string;
  generation: number;
  status: 'ok' | 'degraded';
  reasons: { kind: string; message: string; since: string; detail?: unknown }[];
  lastReload: Reload | null;
  reloads: Reload[];
  dataCenters: ConsoleDataCenter[];
  map: { windowMinutes: number; countries: ConsoleCountry[]; dropped: number };
  store: { kind: string; state: string; nodes: { node?: string; id?: string; [k: string]: unknown }[] } | null;
}

export interface HealthCheck {
  check: string;
  monitor: string;
  type: string;
  status: string;
  since: string;
  secondsSinceSuccess: number | null;
  lastLatencyMs: number | null;
  lastError: string | null;
}

export interface HealthReport {
  endpoints: { endpoint: string; checks: string[] }[];
  checks: HealthCheck[];
}

export interface Explanation {
  client: { address: string; sourcePrefix: number; location: string };
  answer: { rcode: number; scope: number; answers: string[] };
  selections: { record: string; type: string; steps: Record<string, unknown>[] }[];
}

export interface ConsoleRecord {
  name: string;
  type: string;
  ttl: number;
  service: string;
  policy: string[];
  candidates: { dc: string; endpoints: string[] }[];
  failsafe: number;
}

export interface ReplayRow {
  /** `failsafe`: the record (`name/type`) whose all-down fallback answered, when one did. */
  live?: { rcode: number; dcs: string[]; failsafe?: string };
  whatIf?: { rcode: number; dcs: string[]; failsafe?: string };
  error?: string;
}

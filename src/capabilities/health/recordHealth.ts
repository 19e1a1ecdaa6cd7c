import type { RecordHealthConfig } from './healthSchema.js';
import type { DcCandidate, LiveDc } from '../../pipeline/selection/stage.js';
import type { GslbEndpoint } from '../../core/model/topology.js';

/** What a record does when no endpoint of any tier can answer (src/capabilities/health/README.md). */
export type AllDownPolicy = 'fail-open' | 'fail-closed' | 'failsafe';

/**
 * One tier of a record: its share of each candidate data center (a whole DC for a `dcs` entry,
 * single endpoints for an `endpoints` entry), and the fraction of its endpoint weight that must
 * be up for the tier to answer (0: any endpoint up).
 */
export interface CompiledTier {
  /** Shown in /explain: `tier 1`, `local site denver`, `peer sites`, `untiered`, `all`. */
  readonly label: string;
  readonly members: readonly LiveDc[];
  readonly threshold: number;
  /** True for the engine's own site in a local-first record. */
  readonly local: boolean;
}

/** A record's health behaviour, compiled against its candidates. */
export interface CompiledRecordHealth {
  readonly allDown: AllDownPolicy;
  /** 0: unknown counts as up; otherwise unknown endpoints wait this long (ms) while others are up. */
  readonly coldStartWaitMs: number;
  /** TTL (s) of the SOA in a fail-closed NODATA, capped by the zone's negative TTL. */
  readonly negativeTtl: number;
  /** Answer TTL (s) while any endpoint of the record is down; undefined: the record's TTL. */
  readonly downTtl: number | undefined;
  /** In order of preference; at least one when the record has candidates. */
  readonly tiers: readonly CompiledTier[];
  /** The engine's site when the record is local-first and has endpoints there. */
  readonly localSite: string | undefined;
}

/**
 * Compiles a record's `health` settings: resolves tiers to its candidates' endpoints (by the
 * endpoint's address or target as written, or whole data centers), puts endpoints named by no tier
 * into an implicit last tier, and for a local-first record on an engine with a `site` puts that
 * site's endpoints into a first tier of their own.
 */
export function compileRecordHealth(
  h: RecordHealthConfig,
  hasFailsafe: boolean,
  candidates: readonly DcCandidate[],
  service: string,
  site: string | undefined,
): CompiledRecordHealth {
  const defaultThreshold = h.threshold ?? 0;
  const label = (e: GslbEndpoint, dc: string): string => e.key.slice(service.length + dc.length + 2);
  const placed = new Set<GslbEndpoint>();
  const tiers: CompiledTier[] = [];
  const localSite = h.localFirst && site !== undefined && candidates.some((c) => c.dc.site === site) ? site : undefined;

  const addTier = (tierLabel: string, threshold: number, local: boolean, wanted: (c: DcCandidate, e: GslbEndpoint) => boolean): void => {
    const members: LiveDc[] = [];
    for (const c of candidates) {
      const endpoints = c.endpoints.filter((e) => !placed.has(e) && wanted(c, e));
      if (endpoints.length === 0) continue;
      for (const e of endpoints) placed.add(e);
      members.push({ candidate: c, endpoints: endpoints.length === c.endpoints.length ? c.endpoints : endpoints });
    }
    if (members.length > 0) tiers.push({ label: tierLabel, members, threshold, local });
  };

  if (localSite !== undefined) addTier(`local site ${localSite}`, defaultThreshold, true, (c) => c.dc.site === localSite);
  h.tiers.forEach((t, i) => {
    const dcs = new Set(t.dcs);
    const endpoints = new Set(t.endpoints);
    addTier(`tier ${i + 1}`, t.threshold ?? defaultThreshold, false, (c, e) => dcs.has(c.dc.name) || endpoints.has(label(e, c.dc.name)));
  });
  const restLabel = h.tiers.length > 0 ? 'untiered' : localSite !== undefined ? 'peer sites' : 'all';
  addTier(restLabel, defaultThreshold, false, () => true);

  return {
    allDown: h.allDown ?? (hasFailsafe ? 'failsafe' : 'fail-open'),
    coldStartWaitMs: h.coldStart === 'unknown-up' ? 0 : h.coldStart.waitMs,
    negativeTtl: h.negativeTtl,
    downTtl: h.downTtl,
    tiers,
    localSite,
  };
}

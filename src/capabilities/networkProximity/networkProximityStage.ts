import { KEYED_READ, narrowScope, selectionNow, type LiveDc, type SelectionState, type Stage } from '../../pipeline/selection/stage.js';
import type { DelegationRequest, ProximityView, ZoneIndexReading } from '../../core/views/proximityView.js';

/** A record's recursive delegation (`delegation: {mode: recursive}`): the delegated zones and the time the engine may spend asking them. */
export interface RecursiveDelegation {
  /** Every delegated zone of the configuration. */
  readonly zones: ReadonlySet<string>;
  readonly budgetMs: number;
  readonly attemptMs: number;
}

/**
 * `rank` by tiered network proximity (docs/PRODUCT.md §5, seed 000 step 5): the client network's
 * ordered zone index (`SelectionEnv.proximity`: the engine's cache, else the PDB, which answers at
 * once and queues a probe) orders the data centers by their proximity zone — one rank group per
 * zone, best first, so when the best zone has fewer live data centers than `pickDcCount` the next
 * zones fill the answer (the pick stage). Data centers of no zone in the index come last. Health
 * (the gate before this stage) always filters. When the PDB is unavailable (or no network
 * proximity is configured) every live data center is one group: the pick's rotation makes it
 * round-robin (the seed's step 5c).
 *
 * A zone delegated to a sub-tier's name servers is a candidate like a data center: when the record
 * has an alias for it (`delegation: {mode: alias}`) and it comes before every zone with a live data
 * center, the answer is a CNAME to that alias, a name the sub-tier resolves further (the seed's
 * step 6, without the top tier querying), and the stages after this one do not run. With
 * `delegation: {mode: recursive}` the delegated zones that come before every zone with a live data
 * center are set as the state's `delegation`: the query path asks their name servers, best first,
 * and answers with the sub-tier's records (seed 000 step 6); the stages still rank the live data
 * centers, whose answer (the next zone's) is given when no sub-tier answers within the budget.
 * A delegated zone whose name servers all fail their keepalive check (`subTierHealth.ts`) is skipped.
 *
 * Reuse by the decision cache (`Stage.keyedRead`): the outcome is a function of the live data
 * centers and the client network's ordered zone index, so with the index in the engine's cache
 * (`ProximityView.cachedIndex`, read on every query, so never past its TTL) the decision is reused
 * per cached reading — one interned object per (order, measured, scope bound) — until the cache
 * replaces or expires that network's index or the health view changes. An index the PDB derives
 * (a cache miss, measured or fallback order) and round-robin (PDB unavailable) are read by the
 * stage itself and mark the outcome as varying: not stored. Records that delegate (alias or
 * recursive) are not reused: sub-tier keepalive and the delegation request are outside the key.
 * The ECS scope is at most the client network the index is kept for (docs/PRODUCT.md §8).
 * @param zoneOf data center name → its proximity zone id.
 * @param aliases delegated zone id → the record's alias name for it.
 * @param recursive the record's recursive delegation, if it has one.
 */
export function networkProximityStage(
  zoneOf: ReadonlyMap<string, string>,
  aliases: ReadonlyMap<string, string> = new Map(),
  recursive?: RecursiveDelegation,
): Stage {
  // Zone → place, per order: the index cache interns its orders, so a hit reuses one map.
  // The last order is remembered apart: most networks share the few orders of a deployment.
  const positions = new WeakMap<readonly string[], ReadonlyMap<string, number>>();
  let lastOrder: readonly string[] | undefined;
  let lastPosition: ReadonlyMap<string, number> = new Map();
  const positionsOf = (order: readonly string[]): ReadonlyMap<string, number> => {
    if (order === lastOrder) return lastPosition;
    let p = positions.get(order);
    if (p === undefined) {
      p = new Map(order.map((z, i) => [z, i]));
      positions.set(order, p);
    }
    lastOrder = order;
    lastPosition = p;
    return p;
  };
  // The groups of the last (live list, order) pair ranked.
  let lastLive: readonly LiveDc[] | undefined;
  let lastRankedOrder: readonly string[] | undefined;
  let lastRanked: LiveDc[][] = [];
  const delegates = aliases.size > 0 || recursive !== undefined;
  return {
    slot: 'rank',
    name: 'network-proximity',
    cacheable: delegates ? 'delegates to sub-tiers, whose keepalive and answers are outside the decision' : true,
    keyedRead: delegates ? undefined : (client, env, nowMs, count) => env.proximity?.cachedIndex(client, nowMs, count),
    run(s) {
      if (s.live.length === 0 && s.demoted.length === 0) return;
      const view = s.env.proximity;
      // The decision cache's reading of the index cache (interned, so its identity keys reused decisions), else the stage's own.
      const keyed = s.keyed as ZoneIndexReading | undefined;
      const reading = keyed ?? view?.zoneIndex(s.client, selectionNow(s), s.env.probes, s.trace === undefined && s.env.ctx.unasked !== true, s.env.geo);
      // A cached index is what the decision cache keys on; one the PDB derived now, or round-robin, is not.
      const cached = reading?.source === 'cache';
      if (!cached) s.varies = 'the ordered zone index of the client network, not from the index cache (PDB or round-robin)';
      if (reading?.clientPrefix !== undefined) {
        narrowScope(s, reading.clientPrefix);
        if (cached) s.clientReads |= KEYED_READ;
      }
      if (reading === undefined || reading.source === 'round-robin') {
        s.ranked = s.demoted.length > 0 ? [[...s.live], [...s.demoted]] : [[...s.live]];
      } else {
        const alias = aliases.size > 0 && view !== undefined ? aliasFirst(s.live, reading.order, zoneOf, aliases, view) : undefined;
        if (alias !== undefined) {
          s.ranked = [];
          s.data = [alias.target];
          s.answerType = 'CNAME';
          if (s.trace) trace(s, reading, zoneOf, { zone: alias.zone, mode: 'alias', target: alias.target }, keepalive(view, aliases.keys()));
          return;
        }
        if (recursive !== undefined && view !== undefined) {
          const first = delegatedFirst(s.live, reading.order, zoneOf, recursive.zones, view);
          if (first !== undefined) {
            const request: DelegationRequest = {
              zones: first.zones,
              ttl: s.record.ttl,
              budgetMs: recursive.budgetMs,
              attemptMs: recursive.attemptMs,
              fallbackZone: first.next,
            };
            s.delegation = request;
          }
        }
        if (s.demoted.length === 0 && s.live === lastLive && reading.order === lastRankedOrder) {
          // The live list (shared, frozen, per health view) and the interned order are those of the
          // last query: so are the groups (frozen, so no later stage can change them).
          s.ranked = lastRanked;
        } else {
          const position = positionsOf(reading.order);
          if (s.demoted.length === 0) {
            s.ranked = freezeGroups(byZone(s.live, position, zoneOf));
            lastLive = Object.isFrozen(s.live) ? s.live : undefined;
            lastRankedOrder = reading.order;
            lastRanked = s.ranked;
          } else {
            s.ranked = [...byZone(s.live, position, zoneOf), ...byZone(s.demoted, position, zoneOf)];
          }
        }
      }
      if (s.trace)
        trace(
          s,
          reading,
          zoneOf,
          s.delegation && { zones: s.delegation.zones.join(' '), mode: 'recursive', budgetMs: String(s.delegation.budgetMs) },
          keepalive(view, recursive?.zones ?? aliases.keys()),
        );
    },
  };
}

/** The alias of the first delegated zone of `order` whose sub-tier is up and that comes before every zone with a live data center, if any. */
function aliasFirst(
  live: readonly LiveDc[],
  order: readonly string[],
  zoneOf: ReadonlyMap<string, string>,
  aliases: ReadonlyMap<string, string>,
  view: ProximityView,
): { zone: string; target: string } | undefined {
  for (const zone of order) {
    const target = aliases.get(zone);
    // A sub-tier whose name servers all fail their keepalive is skipped: the next zone answers.
    if (target !== undefined && view.zoneUp(zone)) return { zone, target };
    if (live.some((l) => zoneOf.get(l.candidate.dc.name) === zone)) return undefined;
  }
  return undefined;
}

/** The delegated zones of `order` whose sub-tier is up and that come before every zone with a live data center, best first, and that first zone with a live data center (`next`); undefined when no delegated zone comes first. */
function delegatedFirst(
  live: readonly LiveDc[],
  order: readonly string[],
  zoneOf: ReadonlyMap<string, string>,
  delegated: ReadonlySet<string>,
  view: ProximityView,
): { zones: string[]; next: string | undefined } | undefined {
  let zones: string[] | undefined;
  let next: string | undefined;
  for (const zone of order) {
    if (delegated.has(zone)) {
      if (view.zoneUp(zone)) (zones ??= []).push(zone);
    } else if (live.some((l) => zoneOf.get(l.candidate.dc.name) === zone)) {
      next = zone;
      break;
    }
  }
  return zones && { zones, next };
}

/** `groups` and each group frozen: they are shared by the queries that rank the same live list by the same order. */
function freezeGroups(groups: LiveDc[][]): LiveDc[][] {
  for (const g of groups) Object.freeze(g);
  return Object.freeze(groups) as LiveDc[][];
}

/** One group per zone of the order (`position`: zone → place) that has data centers in `dcs`, then one of the data centers of no listed zone. */
function byZone(dcs: readonly LiveDc[], position: ReadonlyMap<string, number>, zoneOf: ReadonlyMap<string, string>): LiveDc[][] {
  if (dcs.length === 0) return [];
  const groups: (LiveDc[] | undefined)[] = [];
  let rest: LiveDc[] | undefined;
  for (const l of dcs) {
    const zone = zoneOf.get(l.candidate.dc.name);
    const i = zone === undefined ? undefined : position.get(zone);
    if (i === undefined) (rest ??= []).push(l);
    else (groups[i] ??= []).push(l);
  }
  const out: LiveDc[][] = [];
  for (const g of groups) if (g !== undefined) out.push(g);
  if (rest !== undefined) out.push(rest);
  return out;
}

/** The keepalive state of each delegated zone the record may answer for (`up`, `down`: no candidate); undefined when it has none. */
function keepalive(view: ProximityView | undefined, zones: Iterable<string>): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const zone of zones) (out ??= {})[zone] = view === undefined || view.zoneUp(zone) ? 'up' : 'down';
  return out;
}

function trace(
  s: SelectionState,
  r: ZoneIndexReading | undefined,
  zoneOf: ReadonlyMap<string, string>,
  delegation: Record<string, string> | undefined,
  subTiers: Record<string, string> | undefined,
): void {
  s.trace!.step('network-proximity', {
    source: r === undefined ? 'round-robin (no network proximity configured)' : r.source === 'round-robin' ? 'round-robin (PDB unavailable)' : r.source,
    measured: r?.measured ?? false,
    ...(r !== undefined && !r.measured && r.source !== 'round-robin'
      ? {
          note: `not measured yet: fallback order${r.fallback === 'static-proximity' ? ' by static proximity (distance from the network’s location)' : r.fallback === 'default-order' ? ' (defaultOrder, then configuration order)' : ''}, a probe request is queued`,
        }
      : {}),
    network: r?.network ?? '',
    zoneOrder: r?.order ?? [],
    rtts: r?.rtts ?? [],
    groups: s.ranked.map((g) => g.map((l) => ({ dc: l.candidate.dc.name, zone: zoneOf.get(l.candidate.dc.name) ?? null }))),
    ...(delegation ? { delegation } : {}),
    ...(subTiers ? { subTierKeepalive: subTiers } : {}),
  });
}

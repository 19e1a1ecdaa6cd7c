import type { ZoneData, ZoneIndex } from '../../pipeline/zones/zoneIndex.js';

/** The PowerDNS domain ids of a snapshot's zones, both ways. */
export interface ZoneIds {
  idOf(zone: ZoneData): number;
  zoneOf(id: number): ZoneData | undefined;
}

const byIndex = new WeakMap<ZoneIndex, ZoneIds>();

/**
 * Domain ids for PowerDNS (`getAllDomains` `id`, `domain_id` on SOA records, the `zone-id`
 * parameter of later lookups; docs/notes/powerdns-remote-backend.md §3.1–3.2). PowerDNS keeps them in its zone cache for up to
 * `zone-cache-refresh-interval` (300 s) and keys its query cache with them, so an id is derived
 * from the zone's name alone: 31-bit FNV-1a of the canonical name, stable across reloads and
 * engine restarts. Collisions (never seen in practice) are resolved by probing upwards in name
 * order, so the result depends only on the set of zone names. Computed once per zone index.
 */
export function zoneIdsOf(zones: ZoneIndex): ZoneIds {
  let ids = byIndex.get(zones);
  if (!ids) {
    ids = computeIds(zones);
    byIndex.set(zones, ids);
  }
  return ids;
}

function computeIds(zones: ZoneIndex): ZoneIds {
  const byId = new Map<number, ZoneData>();
  const idByName = new Map<string, number>();
  const sorted = [...zones.zones].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const zone of sorted) {
    let id = fnv1a31(zone.name);
    while (byId.has(id)) id = (id + 1) & 0x7fffffff;
    byId.set(id, zone);
    idByName.set(zone.name, id);
  }
  return {
    idOf: (zone) => idByName.get(zone.name) ?? -1,
    zoneOf: (id) => byId.get(id),
  };
}

/** FNV-1a (32-bit) of the name's UTF-16 code units (ASCII for canonical names), top bit cleared. */
function fnv1a31(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h & 0x7fffffff;
}

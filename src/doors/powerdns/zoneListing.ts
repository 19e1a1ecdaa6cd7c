import { presentData } from '../../core/dns/presentation.js';
import type { RecordData, RecordType } from '../../core/dns/records.js';
import type { ZoneData } from '../../pipeline/zones/zoneIndex.js';

/**
 * The reply to PowerDNS's `list` (docs/notes/powerdns-remote-backend.md §3): every record of a
 * zone as `{qname, qtype, content, ttl}` objects, for `pdnsutil check-zone`, `list-zone` and
 * `check-all-zones`. Static records as configured (SOA and NS at the apex included); a GSLB
 * record listed with every enabled endpoint it can answer — the data the engine chooses from, with
 * the record's TTL, no client's selection — each distinct data once (RFC 2181 §5), and a GSLB CNAME
 * with its first endpoint's target only (a CNAME RRset holds one record, RFC 2181 §10.1). A name
 * with a static RRset of a type answers it instead of a GSLB record of that type, as in lookups.
 * Owners are absolute (trailing dot); names inside content are not ({@link listedContent});
 * `domain_id` is on every record, as PowerDNS's own backends give it. Zone transfers stay the operator's choice to refuse (`disable-axfr=yes`,
 * src/doors/powerdns/README.md, "`list`, `pdnsutil` and AXFR"): the same `list` would feed an AXFR.
 */
export function zoneListing(zone: ZoneData, domainId: number): string {
  const rows: string[] = [];
  const add = (owner: string, type: RecordType, ttl: number, data: RecordData): void => {
    rows.push(JSON.stringify({ qname: owner, qtype: type, content: listedContent(type, data), ttl, domain_id: domainId }));
  };
  for (const node of zone.nodes.values()) {
    const owner = node.name === '' ? '.' : `${node.name}.`;
    for (const [type, records] of node.rrsets) for (const r of records) add(owner, type, r.ttl, r.data);
    for (const [type, record] of node.gslb) {
      if (node.rrsets.has(type)) continue;
      const seen = new Set<string>();
      for (const candidate of record.candidates) {
        for (const endpoint of candidate.endpoints) {
          const text = listedContent(type, endpoint.data);
          if (seen.has(text) || (type === 'CNAME' && seen.size > 0)) continue;
          seen.add(text);
          add(owner, type, record.ttl, endpoint.data);
        }
      }
    }
  }
  return `{"result":[${rows.join(',')}]}`;
}

/** Types whose presentation form holds domain names (as tokens of their content). */
const NAME_TYPES: ReadonlySet<RecordType> = new Set<RecordType>(['NS', 'CNAME', 'PTR', 'MX', 'SRV', 'SOA']);

/**
 * A record's content as PowerDNS stores it: presentation form with the names inside written
 * without their trailing dot (the root stays `.`). `pdnsutil check-zone` parses each listed
 * record and warns "Parsed and original record content are not equal" when a name keeps the dot.
 */
function listedContent(type: RecordType, data: RecordData): string {
  const text = presentData(type, data);
  if (!NAME_TYPES.has(type)) return text;
  return text
    .split(' ')
    .map((token) => (token.length > 1 && token.endsWith('.') ? token.slice(0, -1) : token))
    .join(' ');
}

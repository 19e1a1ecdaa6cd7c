import { presentData } from '../../dns/presentation.js';
import type { ResourceRecord } from '../../dns/records.js';
import type { NameContents } from '../../zones/nameRrsets.js';
import { scopeMask, type RemoteClient } from './remoteClient.js';

/** The reply to a lookup of a name that holds nothing (or lies outside our zones). */
export const NO_RECORDS = '{"result":[]}';

/**
 * PowerDNS's marker of an empty non-terminal: a record of type 0 (`QType::ENT`; its type name
 * does not parse, so it becomes 0) with empty content (`ENTRecordContent`). packethandler.cc answers NODATA for a name whose
 * lookup returns only this record, and its wildcard search stops at it (RFC 4592 closest
 * encloser); without it an empty non-terminal would be answered NXDOMAIN (RFC 8020 violation)
 * and could be covered by a wildcard above it.
 */
const ENT_TYPE = '"ENT"';
const ENT_CONTENT = '""';

const staticContent = new WeakMap<ResourceRecord, string>();

/**
 * The JSON reply to a `lookup` (notes §3.2): every record of every RRset, owner written as
 * `qnameJson` (the qname exactly as PowerDNS sent it, JSON-encoded, so its case and presentation
 * escapes round-trip), `qtype` as a type name, `content` in presentation form with MX/SRV
 * priorities inside, `ttl` as a JSON number (a string would become 0), `domain_id` on the SOA
 * so later lookups carry the zone id, and `scopeMask` on each record of a client-dependent RRset
 * ({@link scopeMask}). An existing name without RRsets gets the empty non-terminal marker when
 * all types were asked for.
 */
export function lookupReply(qnameJson: string, contents: NameContents, rc: RemoteClient, domainId: number, allTypes: boolean): string {
  let out = '{"result":[';
  let first = true;
  for (const rrset of contents.rrsets) {
    const mask = scopeMask(rc, rrset.scope);
    const typeJson = `"${rrset.type}"`;
    for (const r of rrset.records) {
      out += first ? '{"qname":' : ',{"qname":';
      first = false;
      out += `${qnameJson},"qtype":${typeJson},"content":${contentJson(r, rrset.selected)},"ttl":${r.ttl}`;
      if (mask > 0) out += `,"scopeMask":${mask}`;
      if (r.type === 'SOA') out += `,"domain_id":${domainId}`;
      out += '}';
    }
  }
  if (first && contents.exists && allTypes) out += `{"qname":${qnameJson},"qtype":${ENT_TYPE},"content":${ENT_CONTENT},"ttl":0}`;
  return `${out}]}`;
}

/** JSON string of a record's presentation-form data; static records' texts are computed once. */
function contentJson(r: ResourceRecord, selected: boolean): string {
  if (selected) return JSON.stringify(presentData(r.type, r.data));
  let text = staticContent.get(r);
  if (text === undefined) {
    text = JSON.stringify(presentData(r.type, r.data));
    staticContent.set(r, text);
  }
  return text;
}

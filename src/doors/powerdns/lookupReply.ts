import { presentData } from '../../core/dns/presentation.js';
import type { ResourceRecord } from '../../core/dns/records.js';
import type { NameContents, NameRrset } from '../../pipeline/zones/nameRrsets.js';
import { scopeMask, type RemoteClient } from './remoteClient.js';
import { encodingSlot } from '../../core/model/encodingSlot.js';

/** The reply line to a lookup of a name that holds nothing (or lies outside our zones). */
export const NO_RECORDS = '{"result":[]}\n';

/**
 * PowerDNS's marker of an empty non-terminal: a record of type 0 (`QType::ENT`; its type name
 * does not parse, so it becomes 0) with empty content (`ENTRecordContent`). packethandler.cc answers NODATA for a name whose
 * lookup returns only this record, and its wildcard search stops at it (RFC 4592 closest
 * encloser); without it an empty non-terminal would be answered NXDOMAIN (RFC 8020 violation)
 * and could be covered by a wildcard above it.
 */
const ENT_TYPE = '"ENT"';
const ENT_CONTENT = '""';

/** A static record's content JSON, in its encoding slot (`core/model/encodingSlot.ts`). */
const STATIC_CONTENT = Symbol('powerdns static content');

/** The JSON of one RRset's records for one spelling of the owner and zone id, by scopeMask. */
interface RrsetTexts {
  readonly qnameJson: string;
  readonly domainId: number;
  /** The RRset's record objects, comma-separated, by scopeMask (0–128). */
  readonly records: string[];
  /** The whole reply line when the name holds only this RRset, by scopeMask. */
  readonly replies: string[];
}

/**
 * Texts of shared RRsets, by their record array: for the last spelling and zone id each was
 * written with (PowerDNS asks for a name in one spelling), one text per scopeMask (one decision
 * serves clients of several scopes), kept in the array's encoding slot (`core/model/encodingSlot.ts`:
 * not a WeakMap entry per decision). Only frozen arrays are kept: the engine hands the same frozen
 * array for every query a reused selection decision answers (zones/nameRrsets.ts), so the JSON is
 * written once per decision and scope instead of once per lookup; a fresh array of each lookup
 * would only fill the map.
 */
const SHARED_TEXTS = Symbol('powerdns rrset texts');

/**
 * The JSON reply to a `lookup` (docs/notes/powerdns-remote-backend.md §3.2), with its newline: every record of every RRset, owner written as
 * `qnameJson` (the qname exactly as PowerDNS sent it, JSON-encoded, so its case and presentation
 * escapes round-trip), `qtype` as a type name, `content` in presentation form with MX/SRV
 * priorities inside, `ttl` as a JSON number (a string would become 0), `domain_id` on the SOA
 * so later lookups carry the zone id, and `scopeMask` on each record of a client-dependent RRset
 * ({@link scopeMask}). An existing name without RRsets gets the empty non-terminal marker when
 * all types were asked for. The newline is part of the text, so a remembered reply is written
 * as it is, without a new string per write. The text of an RRset whose record array is frozen (a
 * reused selection decision) is remembered with it, per scopeMask, and reused while the spelling
 * and zone id stay the same.
 */
export function lookupReply(qnameJson: string, contents: NameContents, rc: RemoteClient, domainId: number, allTypes: boolean): string {
  const rrsets = contents.rrsets;
  if (rrsets.length === 0) {
    return contents.exists && allTypes ? `{"result":[{"qname":${qnameJson},"qtype":${ENT_TYPE},"content":${ENT_CONTENT},"ttl":0}]}\n` : NO_RECORDS;
  }
  if (rrsets.length === 1) {
    const only = rrsets[0]!;
    const mask = scopeMask(rc, only.scope);
    return Object.isFrozen(only.records) ? sharedReply(qnameJson, only, mask, domainId) : `{"result":[${recordsJson(qnameJson, only, mask, domainId)}]}\n`;
  }
  let out = '{"result":[';
  for (let i = 0; i < rrsets.length; i++) {
    const rrset = rrsets[i]!;
    const mask = scopeMask(rc, rrset.scope);
    if (i > 0) out += ',';
    out += Object.isFrozen(rrset.records) ? sharedRecords(textsOf(qnameJson, rrset, domainId), rrset, mask) : recordsJson(qnameJson, rrset, mask, domainId);
  }
  return `${out}]}\n`;
}

function textsOf(qnameJson: string, rrset: NameRrset, domainId: number): RrsetTexts {
  const slot = encodingSlot(rrset.records);
  const known = slot?.[SHARED_TEXTS] as RrsetTexts | undefined;
  if (known !== undefined && known.qnameJson === qnameJson && known.domainId === domainId) return known;
  const texts: RrsetTexts = { qnameJson, domainId, records: [], replies: [] };
  if (slot !== undefined) slot[SHARED_TEXTS] = texts;
  return texts;
}

/** The reply line of a name whose only RRset is the shared `rrset`. */
function sharedReply(qnameJson: string, rrset: NameRrset, mask: number, domainId: number): string {
  const texts = textsOf(qnameJson, rrset, domainId);
  return (texts.replies[mask] ??= `{"result":[${sharedRecords(texts, rrset, mask)}]}\n`);
}

function sharedRecords(texts: RrsetTexts, rrset: NameRrset, mask: number): string {
  return (texts.records[mask] ??= recordsJson(texts.qnameJson, rrset, mask, texts.domainId));
}

/** One RRset's record objects, comma-separated (RRsets are never empty). */
function recordsJson(qnameJson: string, rrset: NameRrset, mask: number, domainId: number): string {
  const typeJson = `"${rrset.type}"`;
  let out = '';
  for (const r of rrset.records) {
    out += out === '' ? '{"qname":' : ',{"qname":';
    out += `${qnameJson},"qtype":${typeJson},"content":${contentJson(r, rrset.selected)},"ttl":${r.ttl}`;
    if (mask > 0) out += `,"scopeMask":${mask}`;
    if (r.type === 'SOA') out += `,"domain_id":${domainId}`;
    out += '}';
  }
  return out;
}

/** JSON string of a record's presentation-form data; static records' texts are computed once. */
function contentJson(r: ResourceRecord, selected: boolean): string {
  if (selected) return JSON.stringify(presentData(r.type, r.data));
  const slot = encodingSlot(r);
  let text = slot?.[STATIC_CONTENT] as string | undefined;
  if (text === undefined) {
    text = JSON.stringify(presentData(r.type, r.data));
    if (slot !== undefined) slot[STATIC_CONTENT] = text;
  }
  return text;
}

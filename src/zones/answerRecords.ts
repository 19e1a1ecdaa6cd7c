import type { RecordData, ResourceRecord } from '../dns/records.js';
import type { CompiledGslbRecord } from '../selection/types.js';

/** Per record: its answer records at its own name and TTL, by record data (endpoints and fail-safe list). */
const byRecord = new WeakMap<CompiledGslbRecord, ReadonlyMap<RecordData, ResourceRecord>>();

/**
 * The answer record of a GSLB record's selected `data` at `owner` with `ttl`. At the record's own
 * (canonical) name and TTL — nearly every answer — it is built once per record and shared by
 * every query (records are immutable); a wildcard owner, another spelling of the name, or a
 * lowered TTL (`downTtl`, fail-safe TTL) gets a fresh one.
 */
export function answerRecord(record: CompiledGslbRecord, owner: string, ttl: number, data: RecordData): ResourceRecord {
  if (owner === record.name && ttl === record.ttl) {
    const shared = sharedRecords(record).get(data);
    if (shared !== undefined) return shared;
  }
  return { name: owner, type: record.type, ttl, data };
}

function sharedRecords(record: CompiledGslbRecord): ReadonlyMap<RecordData, ResourceRecord> {
  let m = byRecord.get(record);
  if (m === undefined) {
    const built = new Map<RecordData, ResourceRecord>();
    const add = (data: RecordData): void => {
      if (!built.has(data)) built.set(data, Object.freeze({ name: record.name, type: record.type, ttl: record.ttl, data }));
    };
    for (const c of record.candidates) for (const e of c.endpoints) add(e.data);
    for (const data of record.failsafe) add(data);
    byRecord.set(record, (m = built));
  }
  return m;
}

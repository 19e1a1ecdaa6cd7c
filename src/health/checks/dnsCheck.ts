import { createSocket } from 'node:dgram';
import { randomInt } from 'node:crypto';
import { isIPv6 } from 'node:net';
import dnsPacket from 'dns-packet';
import type { DnsMonitorConfig } from '../../config/healthSchema.js';
import { parseRecordData, presentData } from '../../dns/presentation.js';
import type { RecordData, RecordType } from '../../dns/records.js';
import { armTimeout, elapsedMs, type CheckOutcome, type CheckRun, type CheckTarget } from './check.js';

/**
 * DNS check: one query (`queryName`/`queryType`, RD clear) over UDP from a fresh socket to the
 * target. Succeeds when a response with the query's id arrives within `timeoutMs`, its rcode is
 * `expectRcode`, and — when `expectAnswer` is set — one answer record of `queryType` carries that
 * data (compared in presentation form, names case-insensitively). Responses with another id or
 * from another address are ignored (RFC 5452 §4); a truncated response fails when an answer is
 * expected (the check does not retry over TCP).
 */
export function dnsCheck(m: DnsMonitorConfig): CheckRun {
  const type = m.queryType as RecordType;
  const expected = m.expectAnswer !== undefined ? canonical(type, parseRecordData(type, m.expectAnswer)) : undefined;
  return (target: CheckTarget) => {
    const started = process.hrtime.bigint();
    const id = randomInt(0, 65536);
    const query = dnsPacket.encode({ type: 'query', id, flags: 0, questions: [{ name: m.queryName || '.', type: m.queryType, class: 'IN' }] });
    return new Promise<CheckOutcome>((resolve) => {
      const socket = createSocket(isIPv6(target.address) ? 'udp6' : 'udp4');
      let settled = false;
      const finish = (ok: boolean, error: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.close();
        resolve({ ok, latencyMs: elapsedMs(started), error });
      };
      const timer = armTimeout(m.timeoutMs, () => finish(false, 'timeout'));
      socket.on('error', (e: NodeJS.ErrnoException) => finish(false, e.code ?? e.message));
      socket.on('message', (msg, rinfo) => {
        if (rinfo.address !== target.address || rinfo.port !== target.port) return;
        let reply: dnsPacket.Packet;
        try {
          reply = dnsPacket.decode(msg);
        } catch {
          finish(false, 'malformed response');
          return;
        }
        if (reply.id !== id || reply.type !== 'response') return;
        const rcode = (reply as { rcode?: string }).rcode ?? 'NOERROR';
        if (rcode !== m.expectRcode) {
          finish(false, `rcode ${rcode}`);
          return;
        }
        if (expected === undefined) {
          finish(true, '');
          return;
        }
        const found = (reply.answers ?? []).some((a) => a.type === m.queryType && canonical(type, decodedData(type, (a as { data: unknown }).data)) === expected);
        finish(found, found ? '' : 'expected answer missing');
      });
      socket.send(query, target.port, target.address, (e) => {
        if (e) finish(false, (e as NodeJS.ErrnoException).code ?? e.message);
      });
    });
  };
}

/** Presentation form, lower-cased, for comparing record data. */
function canonical(type: RecordType, data: RecordData): string {
  return presentData(type, data).toLowerCase();
}

/** dns-packet's decoded data in the engine's shapes (TXT strings instead of buffers, addresses normalised). */
function decodedData(type: RecordType, data: unknown): RecordData {
  if (type === 'TXT') return (Array.isArray(data) ? data : [data]).map((b) => (Buffer.isBuffer(b) ? b.toString('utf8') : String(b)));
  if (type === 'AAAA' && typeof data === 'string') return parseRecordData('AAAA', data);
  return data as RecordData;
}

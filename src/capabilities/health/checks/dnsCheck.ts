import { createSocket } from 'node:dgram';
import { randomInt } from 'node:crypto';
import { isIPv6 } from 'node:net';
import dnsPacket from 'dns-packet';
import { z } from 'zod';
import { domainNameSchema } from '../../../core/config/fieldSchemas.js';
import { parseRecordData, presentData } from '../../../core/dns/presentation.js';
import { parseIp, sameAddress, type IpAddress } from '../../../core/net/ipAddress.js';
import type { RecordData, RecordType } from '../../../core/dns/records.js';
import { outcomeOnce, type CheckDone, type CheckRun, type CheckTarget } from './check.js';
import { checkDeadlines } from './checkDeadlines.js';
import { checkKind, monitorCommon } from './checkKind.js';
import { checkSockets, type CheckConnection, type ConnectionEvents } from './checkSockets.js';

/** One DNS query over UDP or TCP: up when the rcode (and, if set, an answer) is as expected. */
export const dnsMonitorSchema = z.strictObject({
  type: z.literal('dns').describe('DNS monitor: one query, up when the rcode (and expectAnswer, if set) is as expected.'),
  ...monitorCommon,
  /** `udp` (default) or `tcp` (RFC 1035 §4.2.2 framing, a new connection per check). */
  transport: z.enum(['udp', 'tcp']).default('udp').describe('Transport of the check query: udp or tcp (new connection per check); default udp.'),
  queryName: domainNameSchema.describe('Name asked in the check query.'),
  queryType: z.enum(['A', 'AAAA', 'CNAME', 'MX', 'NS', 'SOA', 'SRV', 'TXT', 'PTR']).default('A').describe('Type asked in the check query; default A.'),
  expectRcode: z
    .enum(['NOERROR', 'NXDOMAIN', 'REFUSED', 'SERVFAIL', 'NOTIMP', 'FORMERR'])
    .default('NOERROR')
    .describe('Rcode the answer must carry; default NOERROR.'),
  /** An answer record of `queryType` whose data, in presentation form, equals this (e.g. `192.0.2.1`). */
  expectAnswer: z.string().min(1).optional().describe('Data, in presentation form, of an answer record of queryType the answer must hold (e.g. 192.0.2.1).'),
});

export type DnsMonitorConfig = z.output<typeof dnsMonitorSchema>;

/** The `dns` check kind: port 53 by default (RFC 1035 §4.2). */
export const dnsCheckKind = checkKind({
  schema: dnsMonitorSchema,
  defaultPort: 53,
  check: (m) => dnsCheck(m),
});

/** The result of judging one DNS message, or `undefined` when it is no answer to the query. */
type Verdict = { ok: boolean; error: string } | undefined;

/**
 * DNS check: one query (`queryName`/`queryType`, RD clear) to the target over `transport`:
 * - `udp` (default): from a fresh socket; responses with another id or from another address are
 *   ignored (RFC 5452 §4), so a spoofed or stray datagram cannot decide the check; the source
 *   address is compared by its bits, not its spelling (the socket reports `::1` for a target
 *   written `0:0:0:0:0:0:0:1`);
 * - `tcp`: over a new connection, the message framed by its two-byte length (RFC 1035 §4.2.2,
 *   RFC 7766 §8); the first response on the connection decides, and one with another id fails.
 * Succeeds when a response arrives within `timeoutMs`, its rcode is `expectRcode`, and — when
 * `expectAnswer` is set — one answer record of `queryType` carries that data (compared in
 * presentation form, names case-insensitively). A truncated UDP response fails when an answer is
 * expected (the check does not retry over TCP: choose `transport: tcp` for large answers).
 */
export function dnsCheck(m: DnsMonitorConfig): CheckRun {
  const type = m.queryType as RecordType;
  const expected = m.expectAnswer !== undefined ? canonical(type, parseRecordData(type, m.expectAnswer)) : undefined;
  const verdict = (msg: Buffer, id: number): Verdict => {
    let reply: dnsPacket.Packet;
    try {
      reply = dnsPacket.decode(msg);
    } catch {
      return { ok: false, error: 'malformed response' };
    }
    if (reply.id !== id || reply.type !== 'response') return undefined;
    const rcode = (reply as { rcode?: string }).rcode ?? 'NOERROR';
    if (rcode !== m.expectRcode) return { ok: false, error: `rcode ${rcode}` };
    if (expected === undefined) return { ok: true, error: '' };
    const found = (reply.answers ?? []).some((a) => a.type === m.queryType && canonical(type, decodedData(type, (a as { data: unknown }).data)) === expected);
    return { ok: found, error: found ? '' : 'expected answer missing' };
  };
  const encodeQuery = (id: number): Buffer =>
    dnsPacket.encode({ type: 'query', id, flags: 0, questions: [{ name: m.queryName || '.', type: m.queryType, class: 'IN' }] });
  if (m.transport === 'tcp') return (target) => (done) => queryTcp(target, done, m.timeoutMs, encodeQuery, verdict);
  return (target) => {
    const address = parseIp(target.address);
    return (done) => queryUdp(target, address, done, m.timeoutMs, encodeQuery, verdict);
  };
}

/**
 * True when a datagram's source (the socket's spelling of it) is the target's address. Equal
 * strings decide at once; otherwise the bits decide. A source with a zone index (`%eth0`) is
 * never a target: configured addresses have none.
 */
export function isTargetSource(source: string, target: string, targetAddress: IpAddress): boolean {
  return source === target || (!source.includes('%') && sameAddress(parseIp(source), targetAddress));
}

function queryUdp(
  target: CheckTarget,
  address: IpAddress,
  done: CheckDone,
  timeoutMs: number,
  encodeQuery: (id: number) => Buffer,
  verdict: (msg: Buffer, id: number) => Verdict,
): void {
  const started = performance.now();
  const id = randomInt(0, 65536);
  const query = encodeQuery(id);
  const socket = createSocket(isIPv6(target.address) ? 'udp6' : 'udp4');
  const finish = outcomeOnce(started, done, () => {
    checkDeadlines.disarm(timeoutMs, deadline);
    socket.close();
  });
  const deadline = checkDeadlines.arm(timeoutMs, started, { timedOut: () => finish(false, 'timeout') });
  socket.on('error', (e: NodeJS.ErrnoException) => finish(false, e.code ?? e.message));
  socket.on('message', (msg, rinfo) => {
    if (rinfo.port !== target.port || !isTargetSource(rinfo.address, target.address, address)) return;
    const v = verdict(msg, id);
    if (v) finish(v.ok, v.error);
  });
  socket.send(query, target.port, target.address, (e) => {
    if (e) finish(false, (e as NodeJS.ErrnoException).code ?? e.message);
  });
}

function queryTcp(
  target: CheckTarget,
  done: CheckDone,
  timeoutMs: number,
  encodeQuery: (id: number) => Buffer,
  verdict: (msg: Buffer, id: number) => Verdict,
): void {
  const started = performance.now();
  const id = randomInt(0, 65536);
  const query = encodeQuery(id);
  const frame = Buffer.allocUnsafe(2 + query.length);
  frame.writeUInt16BE(query.length, 0);
  query.copy(frame, 2);
  let connection: CheckConnection;
  // Received bytes (copied: chunks are borrowed) until the length prefix and message are complete.
  let received: Buffer | undefined = Buffer.alloc(0);
  const finish = outcomeOnce(started, done, () => {
    received = undefined;
    checkDeadlines.disarm(timeoutMs, deadline);
    connection.close();
  });
  const events: ConnectionEvents = {
    connected: () => connection.socket.write(frame),
    data: (chunk) => {
      if (received === undefined) return;
      received = Buffer.concat([received, chunk]);
      if (received.length < 2) return;
      const length = received.readUInt16BE(0);
      if (received.length < 2 + length) return;
      const v = verdict(received.subarray(2, 2 + length), id);
      finish(v?.ok ?? false, v?.error ?? 'response to another query id');
    },
    ended: () => finish(false, 'connection closed before a complete response'),
    failed: (code) => finish(false, code),
  };
  const deadline = checkDeadlines.arm(timeoutMs, started, { timedOut: () => finish(false, 'timeout') });
  connection = checkSockets.connect(target.address, target.port, events);
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

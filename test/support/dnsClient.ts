import { createSocket } from 'node:dgram';
import { connect, isIPv6 } from 'node:net';
import dnsPacket from 'dns-packet';
import { addressToBytes, parseCidr } from '../../src/core/net/ipAddress.js';

/**
 * A small DNS client for end-to-end tests, on `dns-packet`: builds queries (with EDNS and ECS),
 * sends raw bytes over UDP or TCP to a loopback server, and decodes replies. Raw bytes in and out
 * so tests can also send malformed messages. Every wait is bounded by a timeout.
 */

/** A query to build with {@link buildQuery}. */
export interface QuerySpec {
  readonly name: string;
  /** Type name (`A`, `AAAA`, `ANY`, …) or numeric code. */
  readonly type: string | number;
  readonly id?: number;
  /** Header flags word (opcode, RD, …); default 0 (no RD: we ask an authoritative server). */
  readonly flags?: number;
  /** Adds an OPT record; omit for a query without EDNS. */
  readonly edns?: {
    /** Advertised UDP payload size (bytes); default 1232. */
    readonly udpPayloadSize?: number;
    readonly version?: number;
    /** ECS source prefix as `addr/len` (family 1 or 2 from the address). */
    readonly ecs?: string;
    /** Raw EDNS options `{ code, data }` added after the ECS option. */
    readonly options?: readonly { code: number; data: Buffer }[];
    /** Sets the DNSSEC OK bit (RFC 3225). */
    readonly dnssecOk?: boolean;
  };
}

/** Encodes a query message. */
export function buildQuery(q: QuerySpec): Buffer {
  const additionals: dnsPacket.Answer[] = [];
  if (q.edns) {
    const options: { code: number; data: Buffer }[] = [];
    if (q.edns.ecs !== undefined) options.push({ code: 8, data: ecsOptionData(q.edns.ecs) });
    options.push(...(q.edns.options ?? []));
    additionals.push({
      type: 'OPT',
      name: '.',
      udpPayloadSize: q.edns.udpPayloadSize ?? 1232,
      ednsVersion: q.edns.version ?? 0,
      flags: q.edns.dnssecOk ? dnsPacket.DNSSEC_OK : 0,
      options,
    } as unknown as dnsPacket.Answer);
  }
  return dnsPacket.encode({
    type: 'query',
    id: q.id ?? Math.floor(Math.random() * 65536),
    flags: q.flags ?? 0,
    questions: [{ name: q.name, type: q.type as dnsPacket.RecordType, class: 'IN' }],
    additionals,
  });
}

/**
 * `name` with each ASCII letter upper- or lower-cased at random by `random` (a draw in [0, 1) per
 * letter, e.g. `seededRandom(seed)`), as a resolver that randomises the question's letter case
 * does (DNS 0x20, draft-vixie-dnsext-dns0x20): the same name to a server (RFC 4343).
 */
export function randomLetterCase(name: string, random: () => number): string {
  let out = '';
  for (const c of name) out += /[a-z]/i.test(c) ? (random() < 0.5 ? c.toLowerCase() : c.toUpperCase()) : c;
  return out;
}

/**
 * The payload of an ECS option for `addr/len` (RFC 7871 §6): family, source prefix, scope 0 and
 * ceil(len/8) address bytes. An IPv4-mapped IPv6 prefix (`::ffff:192.0.2.0/120`) stays family 2.
 */
export function ecsOptionData(cidr: string): Buffer {
  const p = parseCidr(cidr);
  const mapped = p.address.mapped;
  const family = p.address.family === 4 && !mapped ? 1 : 2;
  const sourcePrefix = mapped ? p.prefix + 96 : p.prefix;
  const bytes = addressToBytes(p.address);
  const out = Buffer.alloc(4 + Math.ceil(sourcePrefix / 8));
  out.writeUInt16BE(family, 0);
  out[2] = sourcePrefix;
  out[3] = 0;
  Buffer.from(bytes).copy(out, 4, 0, out.length - 4);
  return out;
}

/** The ECS option of a decoded reply, or undefined when it carries none. */
export interface EcsReply {
  readonly family: number;
  readonly sourcePrefix: number;
  readonly scopePrefix: number;
  /** Address bytes as echoed. */
  readonly address: Buffer;
}

/** A decoded reply with the fields tests check most. */
export interface Reply {
  readonly raw: Buffer;
  readonly packet: dnsPacket.DecodedPacket;
  readonly id: number;
  /** Full rcode: header 4 bits plus the OPT extended bits (BADVERS = 16). */
  readonly rcode: number;
  readonly aa: boolean;
  readonly tc: boolean;
  readonly opcode: number;
  /** The OPT record, when the reply carries one. */
  readonly opt: { udpPayloadSize: number; version: number; extendedRcode: number } | undefined;
  readonly ecs: EcsReply | undefined;
  /** Answer records as `name type data` strings, data in dns-packet's form (JSON for objects). */
  readonly answers: string[];
  readonly authority: string[];
  readonly additional: string[];
}

/** Decodes a reply message. @throws Error when dns-packet cannot decode it. */
export function decodeReply(raw: Buffer): Reply {
  const packet = dnsPacket.decode(raw);
  const flags = raw.readUInt16BE(2);
  const optRecord = (packet.additionals ?? []).find((r) => (r.type as string) === 'OPT') as
    { udpPayloadSize: number; ednsVersion: number; extendedRcode: number; options?: { code: number; data: Buffer }[] } | undefined;
  let ecs: EcsReply | undefined;
  const ecsRaw = optRecord?.options?.find((o) => o.code === 8);
  if (ecsRaw) {
    ecs = { family: ecsRaw.data.readUInt16BE(0), sourcePrefix: ecsRaw.data[2]!, scopePrefix: ecsRaw.data[3]!, address: ecsRaw.data.subarray(4) };
  }
  const show = (rs: readonly dnsPacket.Answer[] | undefined): string[] =>
    (rs ?? []).filter((r) => (r.type as string) !== 'OPT').map((r) => `${r.name} ${r.type} ${showData((r as { data?: unknown }).data)}`);
  return {
    raw,
    packet,
    id: raw.readUInt16BE(0),
    rcode: (flags & 0xf) | ((optRecord?.extendedRcode ?? 0) << 4),
    aa: (flags & 0x0400) !== 0,
    tc: (flags & 0x0200) !== 0,
    opcode: (flags >> 11) & 0xf,
    opt: optRecord ? { udpPayloadSize: optRecord.udpPayloadSize, version: optRecord.ednsVersion, extendedRcode: optRecord.extendedRcode } : undefined,
    ecs,
    answers: show(packet.answers),
    authority: show(packet.authorities),
    additional: show(packet.additionals),
  };
}

function showData(d: unknown): string {
  if (typeof d === 'string') return d;
  if (Buffer.isBuffer(d)) return d.toString('hex');
  if (Array.isArray(d)) return d.map((x) => (Buffer.isBuffer(x) ? x.toString() : String(x))).join(' ');
  return JSON.stringify(d);
}

/** Where a server listens. */
export interface ServerAddress {
  readonly address: string;
  readonly port: number;
}

/**
 * Sends one UDP datagram and resolves with the first reply, or undefined when none comes within
 * `timeoutMs` (a dropped message). Never rejects for a missing reply.
 */
export function udpExchange(server: ServerAddress, message: Buffer, timeoutMs = 5000): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(isIPv6(server.address) ? 'udp6' : 'udp4');
    const timer = setTimeout(() => {
      socket.close();
      resolve(undefined);
    }, timeoutMs);
    socket.once('message', (msg) => {
      clearTimeout(timer);
      socket.close();
      resolve(msg);
    });
    socket.once('error', (e) => {
      clearTimeout(timer);
      socket.close();
      reject(e);
    });
    socket.send(message, server.port, server.address);
  });
}

/** Sends a query over UDP and decodes the reply. @throws Error when no reply comes in time. */
export async function udpQuery(server: ServerAddress, q: QuerySpec | Buffer, timeoutMs = 5000): Promise<Reply> {
  const raw = await udpExchange(server, Buffer.isBuffer(q) ? q : buildQuery(q), timeoutMs);
  if (!raw) throw new Error(`no UDP reply from ${server.address}:${server.port} within ${timeoutMs} ms`);
  return decodeReply(raw);
}

/** A DNS-over-TCP frame: two-byte length, then the message (RFC 1035 §4.2.2). */
export function frame(message: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(message.length);
  return Buffer.concat([len, message]);
}

/** What a TCP exchange saw: the reply messages (frames removed) and whether the server closed. */
export interface TcpExchange {
  readonly replies: Buffer[];
  readonly closedByServer: boolean;
}

/**
 * Opens one TCP connection, writes `bytes` in one write (framed by the caller, so tests control
 * framing), and collects reply frames until `expected` replies arrived, the server closed the
 * connection, or `timeoutMs` passed.
 */
export function tcpExchange(server: ServerAddress, bytes: Buffer, expected: number, timeoutMs = 5000): Promise<TcpExchange> {
  return new Promise((resolve, reject) => {
    const replies: Buffer[] = [];
    let pending = Buffer.alloc(0);
    let done = false;
    const socket = connect({ host: server.address, port: server.port });
    const finish = (closedByServer: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ replies, closedByServer });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const len = pending.readUInt16BE(0);
        replies.push(pending.subarray(2, 2 + len));
        pending = pending.subarray(2 + len);
      }
      if (replies.length >= expected) finish(false);
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', (e) => {
      if (done) return;
      if ((e as NodeJS.ErrnoException).code === 'ECONNRESET') finish(true);
      else {
        done = true;
        clearTimeout(timer);
        reject(e);
      }
    });
  });
}

/** Sends one query over TCP and decodes the reply. @throws Error when no reply comes in time. */
export async function tcpQuery(server: ServerAddress, q: QuerySpec | Buffer, timeoutMs = 5000): Promise<Reply> {
  const { replies } = await tcpExchange(server, frame(Buffer.isBuffer(q) ? q : buildQuery(q)), 1, timeoutMs);
  if (replies.length === 0) throw new Error(`no TCP reply from ${server.address}:${server.port} within ${timeoutMs} ms`);
  return decodeReply(replies[0]!);
}

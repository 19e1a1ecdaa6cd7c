import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import dnsPacket from 'dns-packet';
import { addressToBytes, parseIp } from '../../src/core/net/ipAddress.js';
import { FrameKind, HEADER_BYTES, PROTOCOL_VERSION, QUERY_FLAG_ECS, readHeader } from '../../src/doors/compact/frameCodec.js';
import { FrameReader } from '../../src/doors/compact/frameReader.js';

/**
 * The shim's half of the compact protocol (docs/protocol.md) for tests and benchmarks: encoders
 * of HELLO, QUERY and PING, decoders of what the engine sends, and a small client over a Unix
 * socket. The production shim is the Go plugin in coredns-bridge/.
 */

/** dns-packet's single-record codec, which its typings omit. */
export const rrCodec = (
  dnsPacket as unknown as {
    answer: { encode(a: dnsPacket.Answer): Buffer; decode: ((b: Buffer, offset: number) => dnsPacket.Answer) & { bytes: number } };
  }
).answer;

/** Fields of a QUERY as the golden vectors write them. */
export interface QueryFields {
  id: number;
  qtype: number;
  qclass: number;
  transport: number;
  /** Presentation form; absent for source family 0. */
  sourceAddress?: string;
  /** Force family 2 for an IPv4-mapped source address. */
  sourceFamily?: number;
  sourcePort: number;
  /** ECS option data as hex (RFC 7871 §6), when present. */
  ecs?: string;
  /** Wire-format labels joined with dots (no escapes in the vectors). */
  qname: string;
}

/** Decoded frames the engine sends. */
export type EngineFrame =
  | {
      kind: 'ANSWER';
      id: number;
      flags: number;
      rcode: number;
      ecsScope: number;
      clientScope: number;
      answers: dnsPacket.Answer[];
      authorities: dnsPacket.Answer[];
      additionals: dnsPacket.Answer[];
    }
  | { kind: 'ERROR'; id: number; code: number; message: string }
  | { kind: 'PONG'; id: number; state: number }
  | { kind: 'HELLO_ACK'; id: number; version: number; state: number; maxInflight: number; name: string };

export function encodeHello(minVersion: number, maxVersion: number, maxInflight: number, name: string): Buffer {
  const text = Buffer.from(name, 'utf8');
  const body = Buffer.alloc(9 + text.length);
  body[0] = minVersion;
  body[1] = maxVersion;
  body.writeUInt32BE(maxInflight, 4);
  body[8] = text.length;
  text.copy(body, 9);
  return frame(FrameKind.HELLO, 0, 0, body);
}

export function encodePing(id: number): Buffer {
  return frame(FrameKind.PING, 0, id, Buffer.alloc(0));
}

export function encodeQuery(q: QueryFields): Buffer {
  const parts: Buffer[] = [];
  const fixed = Buffer.alloc(8);
  fixed.writeUInt16BE(q.qtype, 0);
  fixed.writeUInt16BE(q.qclass, 2);
  fixed[4] = q.transport;
  let address = Buffer.alloc(0);
  if (q.sourceAddress !== undefined) {
    const ip = parseIp(q.sourceAddress);
    address = Buffer.from(addressToBytes(ip));
    fixed[5] = q.sourceFamily ?? (address.length === 4 ? 1 : 2);
  }
  fixed.writeUInt16BE(q.sourcePort, 6);
  parts.push(fixed, address);
  if (q.ecs !== undefined) {
    const ecs = Buffer.from(q.ecs, 'hex');
    parts.push(Buffer.from([ecs.length]), ecs);
  }
  parts.push(wireName(q.qname));
  return frame(FrameKind.QUERY, q.ecs !== undefined ? QUERY_FLAG_ECS : 0, q.id, Buffer.concat(parts));
}

/** A frame of any kind and version, for garbage tests. */
export function frame(kind: number, flags: number, id: number, body: Buffer, version = PROTOCOL_VERSION): Buffer {
  const out = Buffer.alloc(HEADER_BYTES + body.length);
  out.writeUInt32BE(8 + body.length, 0);
  out[4] = version;
  out[5] = kind;
  out.writeUInt16BE(flags, 6);
  out.writeUInt32BE(id >>> 0, 8);
  body.copy(out, HEADER_BYTES);
  return out;
}

export function wireName(name: string): Buffer {
  const labels = name === '' ? [] : name.split('.');
  return Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])), Buffer.from([0])]);
}

/** Decodes a frame the engine sends. */
export function decodeEngineFrame(buf: Buffer): EngineFrame {
  const h = readHeader(buf);
  const b = buf.subarray(HEADER_BYTES);
  switch (h.kind) {
    case FrameKind.ANSWER: {
      let offset = 10;
      const section = (count: number): dnsPacket.Answer[] => {
        const out: dnsPacket.Answer[] = [];
        for (let i = 0; i < count; i++) {
          out.push(rrCodec.decode(b, offset));
          offset += rrCodec.decode.bytes;
        }
        return out;
      };
      const [an, ns, ar] = [b.readUInt16BE(4), b.readUInt16BE(6), b.readUInt16BE(8)];
      return {
        kind: 'ANSWER',
        id: h.id,
        flags: h.flags,
        rcode: b.readUInt16BE(0),
        ecsScope: b[2]!,
        clientScope: b[3]!,
        answers: section(an),
        authorities: section(ns),
        additionals: section(ar),
      };
    }
    case FrameKind.ERROR:
      return { kind: 'ERROR', id: h.id, code: b.readUInt16BE(0), message: b.toString('utf8', 4, 4 + b.readUInt16BE(2)) };
    case FrameKind.PONG:
      return { kind: 'PONG', id: h.id, state: b[0]! };
    case FrameKind.HELLO_ACK:
      return { kind: 'HELLO_ACK', id: h.id, version: b[0]!, state: b[1]!, maxInflight: b.readUInt32BE(4), name: b.toString('utf8', 9, 9 + b[8]!) };
    default:
      throw new Error(`unexpected frame kind ${h.kind}`);
  }
}

/** A test connection to a compact listener: send raw bytes, await decoded frames, see the close. */
export class CompactTestClient {
  private readonly frames: EngineFrame[] = [];
  private waiters: (() => void)[] = [];
  closed = false;

  private constructor(readonly socket: Socket) {
    const reader = new FrameReader(131072, (f) => {
      this.frames.push(decodeEngineFrame(Buffer.from(f)));
      this.wake();
    });
    socket.on('data', (d: Buffer) => reader.push(d));
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  /** Connects; with `hello` (default) sends HELLO and waits for HELLO_ACK. */
  static async open(path: string, hello = true): Promise<CompactTestClient> {
    const socket = connect(path);
    await once(socket, 'connect');
    const c = new CompactTestClient(socket);
    if (hello) {
      c.send(encodeHello(1, 1, 64, 'test'));
      const ack = await c.next();
      if (ack.kind !== 'HELLO_ACK') throw new Error(`expected HELLO_ACK, got ${ack.kind}`);
    }
    return c;
  }

  send(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /**
   * The next frame from the engine; rejects when the connection closes first or after `ms` (a
   * guard against hanging, not a speed check: the default leaves room for a busy shared machine).
   */
  async next(ms = 15_000): Promise<EngineFrame> {
    const deadline = Date.now() + ms;
    while (this.frames.length === 0) {
      if (this.closed) throw new Error('connection closed');
      if (Date.now() > deadline) throw new Error('no frame in time');
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
    return this.frames.shift()!;
  }

  /** Resolves when the engine closes the connection (rejects after `ms`). */
  async waitClosed(ms = 15_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error('connection still open');
      await new Promise<void>((r) => {
        const t = setTimeout(r, 50);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

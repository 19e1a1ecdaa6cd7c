import { createSocket } from 'node:dgram';
import dnsPacket from 'dns-packet';
import { formatIp } from '../../../src/core/net/ipAddress.js';
import type { Client } from '../../../src/core/model/query.js';

/** EDNS payload size the benchmark queries advertise (the DNS flag day 2020 value). */
const UDP_PAYLOAD = 1232;

/**
 * A query packet (RD clear, as a resolver asks an authoritative server) with EDNS(0) and, when
 * `ecs` is given, a Client Subnet option carrying its source prefix (RFC 7871 §6).
 */
export function queryPacket(id: number, name: string, type: dnsPacket.RecordType, ecs?: Client): Buffer {
  const options = ecs
    ? [{ code: 8, family: ecs.address.family === 4 ? 1 : 2, sourcePrefixLength: ecs.sourcePrefix, scopePrefixLength: 0, ip: formatIp(ecs.address) }]
    : [];
  return dnsPacket.encode({
    type: 'query',
    id,
    flags: 0,
    questions: [{ name, type, class: 'IN' }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: UDP_PAYLOAD, flags: 0, options } as unknown as dnsPacket.Answer],
  });
}

/** Packets in the RFC 1035 §4.2.2 length-prefixed stream form dnsperf reads with `-B`. */
export function lengthPrefixed(packets: readonly Buffer[]): Buffer {
  return Buffer.concat(
    packets.flatMap((p) => {
      const len = Buffer.alloc(2);
      len.writeUInt16BE(p.length);
      return [len, p];
    }),
  );
}

/** What the benchmark compares between servers: answer data and the ECS scope. */
export interface WireAnswer {
  readonly rcode: string;
  readonly answers: string[];
  /** ECS SCOPE PREFIX-LENGTH of the reply, or null without ECS. */
  readonly scope: number | null;
}

/**
 * Sends one query over UDP to a loopback server and decodes the reply.
 * @throws Error after `timeoutMs` without a reply.
 */
export function exchange(port: number, packet: Buffer, timeoutMs = 2000): Promise<WireAnswer> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`no reply from 127.0.0.1:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('message', (msg) => {
      clearTimeout(timer);
      socket.close();
      try {
        const p = dnsPacket.decode(msg);
        const opt = (p.additionals ?? []).find((r) => (r.type as string) === 'OPT') as { options?: { code: number; scopePrefixLength?: number }[] } | undefined;
        const ecs = opt?.options?.find((o) => o.code === 8);
        const answers = (p.answers ?? []) as { type: string; data?: unknown }[];
        resolve({
          rcode: (p as { rcode?: string }).rcode ?? 'NOERROR',
          answers: answers.map((a) => `${a.type} ${typeof a.data === 'string' ? a.data : JSON.stringify(a.data)}`),
          scope: ecs?.scopePrefixLength ?? null,
        });
      } catch (e) {
        reject(e as Error);
      }
    });
    socket.send(packet, port, '127.0.0.1');
  });
}

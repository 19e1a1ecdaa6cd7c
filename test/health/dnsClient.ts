import { createSocket } from 'node:dgram';
import dnsPacket from 'dns-packet';

/** What a test compares of a DNS response. */
export interface DnsReply {
  rcode: string;
  aa: boolean;
  /** `TYPE data` per answer record (data as dns-packet decodes it; names without trailing dot). */
  answers: string[];
  ttls: number[];
  /** `TYPE ttl` per authority record. */
  authority: string[];
}

/**
 * Sends one query over UDP to a loopback DNS server and decodes the reply.
 * @throws Error when no reply arrives within `timeoutMs`.
 */
export function queryUdp(port: number, name: string, type: 'A' | 'AAAA' | 'CNAME' = 'A', timeoutMs = 2000, address = '127.0.0.1'): Promise<DnsReply> {
  const id = Math.floor(Math.random() * 65536);
  const msg = dnsPacket.encode({ type: 'query', id, flags: 0, questions: [{ name, type, class: 'IN' }] });
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`no reply to ${name} ${type} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('message', (buf) => {
      const r = dnsPacket.decode(buf);
      if (r.id !== id) return;
      clearTimeout(timer);
      socket.close();
      resolve({
        rcode: (r as { rcode?: string }).rcode ?? 'NOERROR',
        aa: ((r.flags ?? 0) & dnsPacket.AUTHORITATIVE_ANSWER) !== 0,
        answers: (r.answers ?? []).map((a) => `${a.type} ${String((a as { data: unknown }).data)}`),
        ttls: (r.answers ?? []).map((a) => (a as { ttl?: number }).ttl ?? -1),
        authority: (r.authorities ?? []).map((a) => `${a.type} ${(a as { ttl?: number }).ttl}`),
      });
    });
    socket.send(msg, port, address);
  });
}

/** The A addresses of a reply, sorted. */
export function aRecords(r: DnsReply): string[] {
  return r.answers.filter((a) => a.startsWith('A ')).map((a) => a.slice(2)).sort();
}

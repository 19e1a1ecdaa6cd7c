import dnsPacket from 'dns-packet';
import { udpQuery } from '../support/dnsClient.js';

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
 * Sends one query over UDP to a loopback DNS server (test/support/dnsClient.ts) and keeps what the
 * health tests compare. The default timeout is generous: these engines share their test worker
 * with many health checks, on a machine that may be busy.
 * @throws Error when no reply arrives within `timeoutMs`.
 */
export async function queryUdp(port: number, name: string, type: 'A' | 'AAAA' | 'CNAME' = 'A', timeoutMs = 10_000, address = '127.0.0.1'): Promise<DnsReply> {
  const { packet: r } = await udpQuery({ address, port }, { name, type }, timeoutMs);
  return {
    rcode: (r as { rcode?: string }).rcode ?? 'NOERROR',
    aa: ((r.flags ?? 0) & dnsPacket.AUTHORITATIVE_ANSWER) !== 0,
    answers: (r.answers ?? []).map((a) => `${a.type} ${String((a as { data: unknown }).data)}`),
    ttls: (r.answers ?? []).map((a) => (a as { ttl?: number }).ttl ?? -1),
    authority: (r.authorities ?? []).map((a) => `${a.type} ${(a as { ttl?: number }).ttl}`),
  };
}

/** The A addresses of a reply, sorted. */
export function aRecords(r: DnsReply): string[] {
  return r.answers
    .filter((a) => a.startsWith('A '))
    .map((a) => a.slice(2))
    .sort();
}

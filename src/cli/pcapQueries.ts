import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import dnsPacket from 'dns-packet';
import { parse, type GlobalHeader, type Packet } from 'pcap-parser';
import type { LoggedQuery } from './whatIfReplay.js';

/**
 * The DNS queries of a packet capture (libpcap format, as `tcpdump -w` writes it; read by the
 * pcap-parser package): every UDP datagram over IPv4 or IPv6 whose DNS header is a query (QR 0,
 * one question), on Ethernet, Linux cooked (v1, v2), BSD loopback or raw IP links. The client is
 * the query's ECS option (`address/source prefix`, RFC 7871 §6) when it has one with a prefix > 0,
 * else the source address (`/32`, `/128`) — what the engine itself would decide for. Distinct
 * (name, type, client) are counted as `readQueryLog` counts log lines.
 * Not read: DNS over TCP (no stream reassembly), IP fragments after the first, pcapng files.
 * @returns the queries in first-seen order and how many frames were skipped (not a UDP DNS query).
 * @throws Error when the file is not a libpcap capture.
 */
export function readPcapQueries(file: string): Promise<{ queries: LoggedQuery[]; skipped: number }> {
  // One chunk: the parser then never grows its buffer by copying (nor uses the deprecated Buffer constructor).
  const bytes = readFileSync(file);
  return new Promise((resolve, reject) => {
    const byKey = new Map<string, { name: string; type: string; client: string; count: number }>();
    let skipped = 0;
    let linkType = -1;
    const parser = parse(Readable.from([bytes]));
    parser.on('globalHeader', (h: GlobalHeader) => (linkType = h.linkLayerType));
    parser.on('packet', (p: Packet) => {
      const q = dnsQuery(linkType, p.data);
      if (!q) {
        skipped++;
        return;
      }
      const key = `${q.name}\u0000${q.type}\u0000${q.client}`;
      const seen = byKey.get(key);
      if (seen) seen.count++;
      else byKey.set(key, { ...q, count: 1 });
    });
    parser.on('error', (e: Error) => reject(new Error(`${file}: ${e.message}`)));
    parser.on('end', () => resolve({ queries: [...byKey.values()], skipped }));
  });
}

/** The IP packet inside a frame of link type `linkType`, or undefined for another protocol. */
function ipPayload(linkType: number, frame: Buffer): Buffer | undefined {
  switch (linkType) {
    case 1: {
      // Ethernet II, with up to two 802.1Q tags.
      let off = 12;
      while (frame.length >= off + 2 && (frame.readUInt16BE(off) === 0x8100 || frame.readUInt16BE(off) === 0x88a8)) off += 4;
      return frame.length >= off + 2 && isIpEtherType(frame.readUInt16BE(off)) ? frame.subarray(off + 2) : undefined;
    }
    case 113:
      return frame.length >= 16 && isIpEtherType(frame.readUInt16BE(14)) ? frame.subarray(16) : undefined;
    case 276:
      return frame.length >= 20 && isIpEtherType(frame.readUInt16BE(0)) ? frame.subarray(20) : undefined;
    case 0:
      return frame.subarray(4);
    case 101:
    case 228:
    case 229:
      return frame;
    default:
      return undefined;
  }
}

function isIpEtherType(t: number): boolean {
  return t === 0x0800 || t === 0x86dd;
}

/** The question and client of a UDP DNS query in a frame; undefined for anything else. */
function dnsQuery(linkType: number, frame: Buffer): { name: string; type: string; client: string } | undefined {
  const ip = ipPayload(linkType, frame);
  if (!ip || ip.length < 1) return undefined;
  let source: string;
  let udp: Buffer;
  if (ip[0]! >> 4 === 4) {
    const headerLength = (ip[0]! & 0x0f) * 4;
    // UDP only, and only a datagram's first fragment (offset 0).
    if (ip.length < headerLength + 8 || ip[9] !== 17 || (ip.readUInt16BE(6) & 0x1fff) !== 0) return undefined;
    source = `${ip[12]}.${ip[13]}.${ip[14]}.${ip[15]}/32`;
    udp = ip.subarray(headerLength, ip.readUInt16BE(2));
  } else if (ip[0]! >> 4 === 6) {
    // The UDP header right after the fixed header (no extension headers).
    if (ip.length < 48 || ip[6] !== 17) return undefined;
    source = `${ipv6Text(ip.subarray(8, 24))}/128`;
    udp = ip.subarray(40, 40 + ip.readUInt16BE(4));
  } else return undefined;
  if (udp.length < 8 + 12) return undefined;
  let message: dnsPacket.Packet;
  try {
    message = dnsPacket.decode(udp.subarray(8));
  } catch {
    return undefined;
  }
  const question = message.questions?.[0];
  if (message.type !== 'query' || message.questions?.length !== 1 || !question) return undefined;
  return { name: question.name, type: String(question.type), client: ecsClient(message) ?? source };
}

/** The ECS option of a query as `address/source prefix`; undefined without one or with prefix 0. */
function ecsClient(message: dnsPacket.Packet): string | undefined {
  for (const rr of message.additionals ?? []) {
    if (rr.type !== 'OPT') continue;
    for (const o of (rr as { options?: { code: number; ip?: string; sourcePrefixLength?: number }[] }).options ?? []) {
      if (o.code === 8 && o.ip !== undefined && (o.sourcePrefixLength ?? 0) > 0) return `${o.ip}/${o.sourcePrefixLength}`;
    }
  }
  return undefined;
}

/** An IPv6 address in text (RFC 5952 is not needed: the engine parses any valid form). */
function ipv6Text(b: Buffer): string {
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2) words.push(b.readUInt16BE(i).toString(16));
  return words.join(':');
}

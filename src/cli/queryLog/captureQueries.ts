import { Readable } from 'node:stream';
import { parse, type GlobalHeader, type Packet } from 'pcap-parser';
import { QueryCounter, QueryFileError, type QueryFileContent } from './countedQueries.js';
import { pcapngFrames, type CapturedFrame } from './pcapngFrames.js';
import { addressText, queryQuestion } from './queryMessage.js';
import { TcpDnsStreams } from './tcpStreams.js';

/**
 * The DNS queries of a packet capture: libpcap (`tcpdump -w`; read by the pcap-parser package) or
 * pcapng (`tcpdump --pcapng -w`, Wireshark; `pcapngFrames.ts`), on Ethernet, Linux cooked (v1, v2),
 * BSD loopback or raw IP links, over IPv4 or IPv6: every UDP datagram and every message of a TCP
 * stream (`tcpStreams.ts`) that is a DNS query (QR 0, one question). The client is the query's ECS
 * option (`address/source prefix`, RFC 7871 §6) when it has one with a prefix > 0, else the source
 * address (`/32`, `/128`) — what the engine itself would decide for.
 * Not read: IP fragments after the first, IPv6 extension headers before UDP or TCP.
 * @returns the distinct queries in first-seen order; `skipped` counts the frames that carried no query.
 * @throws QueryFileError naming the byte offset of a record cut short or malformed.
 */
export async function readCaptureQueries(file: string, bytes: Buffer): Promise<QueryFileContent> {
  const reader = new CaptureReader();
  if (bytes.readUInt32LE(0) === 0x0a0d0d0a) for (const frame of pcapngFrames(file, bytes)) reader.frame(frame);
  else for (const frame of await pcapFrames(file, bytes)) reader.frame(frame);
  return reader.counter.content();
}

/** The frames of a libpcap file, read by pcap-parser; a record cut short at the end is an error, not silently dropped. */
function pcapFrames(file: string, original: Buffer): Promise<CapturedFrame[]> {
  // pcap-parser knows the microsecond magic only; the timestamps are not read, so a nanosecond file is read as one.
  const bytes = Buffer.from(original);
  if (bytes.length >= 4 && bytes.toString('hex', 0, 4) === 'a1b23c4d') bytes.write('a1b2c3d4', 0, 'hex');
  if (bytes.length >= 4 && bytes.toString('hex', 0, 4) === '4d3cb2a1') bytes.write('d4c3b2a1', 0, 'hex');
  return new Promise((resolve, reject) => {
    const frames: CapturedFrame[] = [];
    let linkType = -1;
    let offset = 24;
    const parser = parse(Readable.from([bytes]));
    parser.on('globalHeader', (h: GlobalHeader) => (linkType = h.linkLayerType));
    parser.on('packet', (p: Packet) => {
      frames.push({ linkType, data: p.data, offset });
      offset += 16 + p.data.length;
    });
    parser.on('error', (e: Error) => reject(new QueryFileError(file, 'byte', 0, e.message)));
    parser.on('end', () => {
      if (bytes.length < 24) reject(new QueryFileError(file, 'byte', 0, 'a libpcap file header cut short'));
      else if (offset < bytes.length) reject(new QueryFileError(file, 'byte', offset, 'a packet record cut short by the end of the file'));
      else resolve(frames);
    });
  });
}

/** Frames to queries: UDP datagrams at once, TCP segments through their streams. */
class CaptureReader {
  readonly counter = new QueryCounter();
  private readonly tcp = new TcpDnsStreams();

  frame(frame: CapturedFrame): void {
    const ip = ipPayload(frame.linkType, frame.data);
    const transport = ip && transportOf(ip);
    let found = 0;
    if (transport?.protocol === 17) found = this.add(transport.payload.subarray(8), transport.source);
    else if (transport?.protocol === 6 && transport.payload.length >= 20) {
      const tcp = transport.payload;
      const key = `${transport.source}:${tcp.readUInt16BE(0)}>${transport.destination}:${tcp.readUInt16BE(2)}`;
      const headerLength = (tcp[12]! >> 4) * 4;
      const payload = headerLength >= 20 && headerLength <= tcp.length ? tcp.subarray(headerLength) : Buffer.alloc(0);
      for (const message of this.tcp.segment(key, tcp.readUInt32BE(4), tcp[13]!, payload)) found += this.add(message, transport.source);
    }
    if (found === 0) this.counter.skipped++;
  }

  private add(wire: Buffer, source: string): number {
    const q = queryQuestion(wire);
    if (!q) return 0;
    this.counter.add(q.name, q.type, q.ecs ?? source);
    return 1;
  }
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
      return frame.length >= 4 ? frame.subarray(4) : undefined;
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

/** The UDP (17) or TCP (6) segment of an IP packet with its addresses; undefined for other protocols and later fragments. */
function transportOf(ip: Buffer): { protocol: number; source: string; destination: string; payload: Buffer } | undefined {
  if (ip.length < 1) return undefined;
  if (ip[0]! >> 4 === 4) {
    const headerLength = (ip[0]! & 0x0f) * 4;
    if (headerLength < 20 || ip.length < headerLength + 8 || (ip[9] !== 17 && ip[9] !== 6) || (ip.readUInt16BE(6) & 0x1fff) !== 0) return undefined;
    // A total length of 0 is a segment offloaded to the NIC, captured before it was cut: the whole frame.
    const total = ip.readUInt16BE(2);
    const payload = ip.subarray(headerLength, total === 0 ? ip.length : Math.max(headerLength, total));
    return { protocol: ip[9]!, source: `${addressText(ip.subarray(12, 16))}/32`, destination: addressText(ip.subarray(16, 20)), payload };
  }
  if (ip[0]! >> 4 === 6) {
    if (ip.length < 48 || (ip[6] !== 17 && ip[6] !== 6)) return undefined;
    return {
      protocol: ip[6]!,
      source: `${addressText(ip.subarray(8, 24))}/128`,
      destination: addressText(ip.subarray(24, 40)),
      payload: ip.subarray(40, 40 + ip.readUInt16BE(4)),
    };
  }
  return undefined;
}

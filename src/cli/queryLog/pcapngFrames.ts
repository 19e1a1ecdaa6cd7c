import { QueryFileError } from './countedQueries.js';

/** One captured frame of a capture file: its interface's link type, its bytes, and the byte offset of its record. */
export interface CapturedFrame {
  /** LINKTYPE_* of the frame's interface (1 Ethernet, 113/276 Linux cooked, 0 BSD loopback, 101 raw IP). */
  readonly linkType: number;
  readonly data: Buffer;
  readonly offset: number;
}

const SECTION_HEADER = 0x0a0d0d0a;
const BYTE_ORDER_MAGIC = 0x1a2b3c4d;

/**
 * The frames of a pcapng file (draft-ietf-opsawg-pcapng §4, as `tcpdump --pcapng` and Wireshark
 * write it): every section (either byte order), its Interface Description Blocks' link types, and the
 * frames of Enhanced, Simple and (obsolete) Packet Blocks; other blocks (statistics, name resolution,
 * custom) are passed over. The block walk is here because the one npm package, pcap-ng-parser 1.0.0,
 * misreads option lengths and later sections (`README.md`); it reads block headers only, never options.
 * @throws QueryFileError with the byte offset of a block that is cut short, has an impossible length, or names an unknown interface.
 */
export function* pcapngFrames(file: string, bytes: Buffer): Generator<CapturedFrame> {
  let offset = 0;
  let little = true;
  let linkTypes: number[] = [];
  const u32 = (at: number): number => (little ? bytes.readUInt32LE(at) : bytes.readUInt32BE(at));
  const u16 = (at: number): number => (little ? bytes.readUInt16LE(at) : bytes.readUInt16BE(at));
  while (offset < bytes.length) {
    if (offset + 12 > bytes.length) throw new QueryFileError(file, 'byte', offset, 'a block header cut short by the end of the file');
    const type = bytes.readUInt32LE(offset);
    if (type === SECTION_HEADER) {
      const magic = bytes.readUInt32LE(offset + 8);
      if (magic !== BYTE_ORDER_MAGIC && bytes.readUInt32BE(offset + 8) !== BYTE_ORDER_MAGIC)
        throw new QueryFileError(file, 'byte', offset, 'a section header without the byte-order magic');
      little = magic === BYTE_ORDER_MAGIC;
      linkTypes = [];
    } else if (offset === 0) throw new QueryFileError(file, 'byte', 0, 'not a pcapng file (no section header first)');
    const length = u32(offset + 4);
    if (length < 12 || length % 4 !== 0 || offset + length > bytes.length)
      throw new QueryFileError(file, 'byte', offset, `a block of ${length} octets does not fit the file`);
    if (u32(offset + length - 4) !== length) throw new QueryFileError(file, 'byte', offset, 'a block whose trailing length differs from its leading one');
    const blockType = u32(offset);
    const body = (from: number, captured: number): Buffer => {
      if (from + captured > offset + length - 4) throw new QueryFileError(file, 'byte', offset, `a frame of ${captured} octets longer than its block`);
      return bytes.subarray(from, from + captured);
    };
    const linkOf = (id: number): number => {
      const link = linkTypes[id];
      if (link === undefined) throw new QueryFileError(file, 'byte', offset, `a frame of interface ${id}, which the section does not describe`);
      return link;
    };
    if (blockType === 1 && length >= 20) linkTypes.push(u16(offset + 8));
    else if (blockType === 6 && length >= 32) yield { linkType: linkOf(u32(offset + 8)), data: body(offset + 28, u32(offset + 20)), offset };
    else if (blockType === 3 && length >= 16) yield { linkType: linkOf(0), data: body(offset + 12, Math.min(u32(offset + 8), length - 16)), offset };
    else if (blockType === 2 && length >= 32) yield { linkType: linkOf(u16(offset + 8)), data: body(offset + 28, u32(offset + 20)), offset };
    offset += length;
  }
}

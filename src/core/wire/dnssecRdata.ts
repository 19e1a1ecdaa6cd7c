import type { DnskeyData, DnssecRecordType, DsData, NsecData, RrsigData } from '../dns/records.js';

/**
 * RDATA of the DNSSEC record types in wire format (RFC 4034 §2.1, §3.1, §4.1, §5.1; RFC 7344 §3),
 * which is also their canonical form: names are written uncompressed as they are held
 * (canonical, lower case), the NSEC type bit maps as RFC 4034 §4.1.2 defines them. dns-packet
 * knows neither CDS, CDNSKEY nor types it has no name for (NXNAME, RFC 9824 §2), so these are
 * encoded here.
 */

/**
 * RDLENGTH followed by the RDATA of one DNSSEC record, as {@link writeRecord} writes every type.
 * @throws RangeError when a name in the data has a label longer than 63 octets.
 */
export function dnssecRdataBytes(type: DnssecRecordType, data: DnskeyData | DsData | RrsigData | NsecData): Buffer {
  const body = dnssecRdata(type, data);
  const out = Buffer.allocUnsafe(2 + body.length);
  out.writeUInt16BE(body.length, 0);
  body.copy(out, 2);
  return out;
}

/** The RDATA of one DNSSEC record, without RDLENGTH. */
export function dnssecRdata(type: DnssecRecordType, data: DnskeyData | DsData | RrsigData | NsecData): Buffer {
  switch (type) {
    case 'DNSKEY':
    case 'CDNSKEY': {
      const d = data as DnskeyData;
      const head = Buffer.allocUnsafe(4);
      head.writeUInt16BE(d.flags, 0);
      head[2] = d.protocol;
      head[3] = d.algorithm;
      return Buffer.concat([head, d.publicKey]);
    }
    case 'DS':
    case 'CDS': {
      const d = data as DsData;
      const head = Buffer.allocUnsafe(4);
      head.writeUInt16BE(d.keyTag, 0);
      head[2] = d.algorithm;
      head[3] = d.digestType;
      return Buffer.concat([head, d.digest]);
    }
    case 'RRSIG': {
      const d = data as RrsigData;
      return Buffer.concat([rrsigFields(d), d.signature]);
    }
    case 'NSEC': {
      const d = data as NsecData;
      return Buffer.concat([nameWire(d.nextName), typeBitmaps(d.types)]);
    }
  }
}

/**
 * The RRSIG RDATA up to and excluding the signature: the first part of the data a signature is
 * computed over (RFC 4034 §3.1.8.1), with the signer's name in canonical form.
 */
export function rrsigFields(d: Omit<RrsigData, 'signature'>): Buffer {
  const fixed = Buffer.allocUnsafe(18);
  fixed.writeUInt16BE(d.typeCovered, 0);
  fixed[2] = d.algorithm;
  fixed[3] = d.labels;
  fixed.writeUInt32BE(d.originalTtl >>> 0, 4);
  fixed.writeUInt32BE(d.expiration >>> 0, 8);
  fixed.writeUInt32BE(d.inception >>> 0, 12);
  fixed.writeUInt16BE(d.keyTag, 16);
  return Buffer.concat([fixed, nameWire(d.signerName)]);
}

/**
 * A presentation-form name (no trailing dot needed; `\.`, `\\` and `\DDD` escapes) in
 * uncompressed wire format; `''` and `.` are the root.
 * @throws RangeError when a label is longer than 63 octets.
 */
export function nameWire(name: string): Buffer {
  const bytes: number[] = [];
  const text = name.endsWith('.') && !name.endsWith('\\.') ? name.slice(0, -1) : name;
  if (text !== '') {
    let label: number[] = [];
    const flush = (): void => {
      if (label.length > 63) throw new RangeError(`a label of "${name}" is longer than 63 octets`);
      bytes.push(label.length, ...label);
      label = [];
    };
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (c === '\\') {
        const digits = text.slice(i + 1, i + 4);
        if (/^\d{3}$/.test(digits)) {
          label.push(Number(digits));
          i += 3;
        } else {
          label.push(text.charCodeAt(++i));
        }
      } else if (c === '.') {
        flush();
      } else {
        label.push(text.charCodeAt(i) & 0xff);
      }
    }
    flush();
  }
  bytes.push(0);
  return Buffer.from(bytes);
}

/** The NSEC Type Bit Maps field (RFC 4034 §4.1.2): one window block per 256 types that has any. */
export function typeBitmaps(types: readonly number[]): Buffer {
  const windows = new Map<number, number[]>();
  for (const t of types) {
    const w = t >> 8;
    let bits = windows.get(w);
    if (!bits) {
      bits = [];
      windows.set(w, bits);
    }
    const low = t & 0xff;
    const octet = low >> 3;
    while (bits.length <= octet) bits.push(0);
    bits[octet]! |= 0x80 >> (low & 7);
  }
  const out: number[] = [];
  for (const w of [...windows.keys()].sort((a, b) => a - b)) {
    const bits = windows.get(w)!;
    out.push(w, bits.length, ...bits);
  }
  return Buffer.from(out);
}

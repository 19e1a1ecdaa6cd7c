import type { NaptrData, SshfpData, SvcbData, TlsaData } from '../dns/records.js';
import { svcParamsWire } from '../dns/svcbParams.js';
import { nameWire } from './dnssecRdata.js';

/** Static record types whose RDATA is encoded here rather than by dns-packet. */
export type OwnRdataType = 'TLSA' | 'SSHFP' | 'NAPTR' | 'SVCB' | 'HTTPS';

/** The types {@link ownRdataBytes} encodes. */
export const OWN_RDATA_TYPES: ReadonlySet<string> = new Set<OwnRdataType>(['TLSA', 'SSHFP', 'NAPTR', 'SVCB', 'HTTPS']);

/**
 * RDLENGTH followed by the RDATA of a TLSA (RFC 6698 §2.1), SSHFP (RFC 4255 §3.1), NAPTR
 * (RFC 3403 §4.1) or SVCB/HTTPS (RFC 9460 §2.2) record. Names are written uncompressed (RFC 3597
 * §4, RFC 9460 §2.2), as held (canonical), so this is also the canonical RDATA for DNSSEC
 * (RFC 4034 §6.2). dns-packet has no SVCB/HTTPS codec, and its NAPTR and SSHFP codecs take
 * strings as UTF-8 and hex text: all five are written here, from the octets the data holds.
 * @throws RangeError when the RDATA is longer than 65535 octets or a name's label longer than 63.
 */
export function ownRdataBytes(type: OwnRdataType, data: TlsaData | SshfpData | NaptrData | SvcbData): Buffer {
  const body = ownRdata(type, data);
  if (body.length > 65535) throw new RangeError(`${type} RDATA of ${body.length} octets is longer than 65535`);
  const out = Buffer.allocUnsafe(2 + body.length);
  out.writeUInt16BE(body.length, 0);
  body.copy(out, 2);
  return out;
}

function ownRdata(type: OwnRdataType, data: TlsaData | SshfpData | NaptrData | SvcbData): Buffer {
  switch (type) {
    case 'TLSA': {
      const d = data as TlsaData;
      return Buffer.concat([Buffer.from([d.usage, d.selector, d.matchingType]), d.certificate]);
    }
    case 'SSHFP': {
      const d = data as SshfpData;
      return Buffer.concat([Buffer.from([d.algorithm, d.hash]), d.fingerprint]);
    }
    case 'NAPTR': {
      const d = data as NaptrData;
      const head = Buffer.allocUnsafe(4);
      head.writeUInt16BE(d.order, 0);
      head.writeUInt16BE(d.preference, 2);
      return Buffer.concat([head, characterString(d.flags), characterString(d.services), characterString(d.regexp), nameWire(d.replacement)]);
    }
    case 'SVCB':
    case 'HTTPS': {
      const d = data as SvcbData;
      const head = Buffer.allocUnsafe(2);
      head.writeUInt16BE(d.priority, 0);
      return Buffer.concat([head, nameWire(d.target), svcParamsWire(d.params)]);
    }
  }
}

/** A <character-string> (RFC 1035 §3.3): its length octet and its octets (one per latin1 character). */
function characterString(octets: string): Buffer {
  const bytes = Buffer.from(octets, 'latin1');
  return Buffer.concat([Buffer.from([bytes.length]), bytes]);
}

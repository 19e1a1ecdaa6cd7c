import { isIP } from 'node:net';
import { configuredName } from './name.js';
import {
  TYPE_CODES,
  type AnswerRecordType,
  type CaaData,
  type DnskeyData,
  type DsData,
  type HinfoData,
  type MxData,
  type NaptrData,
  type NsecData,
  type RecordData,
  type RecordType,
  type RrsigData,
  type SoaData,
  type SrvData,
  type SshfpData,
  type SvcbData,
  type TlsaData,
} from './records.js';
import { presentationFields, quotedString } from './presentationTokens.js';
import { parseSvcParams, presentSvcParams } from './svcbParams.js';

/** Type mnemonics by numeric code, for type fields inside DNSSEC data (RFC 3597 §5 `TYPEnnn` otherwise). */
const TYPE_NAMES = new Map<number, string>(Object.entries(TYPE_CODES).map(([name, code]) => [code, name]));
TYPE_NAMES.set(128, 'NXNAME');

/** The mnemonic of a numeric type (`A`, `NXNAME`), or `TYPEnnn` for one without (RFC 3597 §5). */
export function typeMnemonic(code: number): string {
  return TYPE_NAMES.get(code) ?? `TYPE${code}`;
}

/** RRSIG times as `YYYYMMDDHHmmSS` in UTC (RFC 4034 §3.2). */
function rrsigTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** Presentation form of record data, as zone files and the PowerDNS remote backend write it. */
export function presentData(type: AnswerRecordType, data: RecordData): string {
  switch (type) {
    case 'CNAME':
    case 'NS':
    case 'PTR':
      return `${data as string}.`;
    case 'MX': {
      const d = data as MxData;
      return `${d.preference} ${d.exchange}.`;
    }
    case 'SRV': {
      const d = data as SrvData;
      return `${d.priority} ${d.weight} ${d.port} ${d.target}.`;
    }
    case 'SOA': {
      const d = data as SoaData;
      return `${d.mname}. ${d.rname}. ${d.serial} ${d.refresh} ${d.retry} ${d.expire} ${d.minimum}`;
    }
    case 'TXT':
      return (data as string[]).map((s) => `"${s.replace(/["\\]/g, '\\$&')}"`).join(' ');
    case 'CAA': {
      const d = data as CaaData;
      return `${d.flags} ${d.tag} "${d.value.replace(/["\\]/g, '\\$&')}"`;
    }
    case 'HINFO': {
      const d = data as HinfoData;
      return `"${d.cpu}" "${d.os}"`;
    }
    case 'DNSKEY':
    case 'CDNSKEY': {
      const d = data as DnskeyData;
      return `${d.flags} ${d.protocol} ${d.algorithm} ${d.publicKey.toString('base64')}`;
    }
    case 'DS':
    case 'CDS': {
      const d = data as DsData;
      return `${d.keyTag} ${d.algorithm} ${d.digestType} ${d.digest.toString('hex').toUpperCase()}`;
    }
    case 'RRSIG': {
      const d = data as RrsigData;
      const signer = d.signerName === '' ? '.' : `${d.signerName}.`;
      return `${typeMnemonic(d.typeCovered)} ${d.algorithm} ${d.labels} ${d.originalTtl} ${rrsigTime(d.expiration)} ${rrsigTime(d.inception)} ${d.keyTag} ${signer} ${d.signature.toString('base64')}`;
    }
    case 'NSEC': {
      const d = data as NsecData;
      return [`${d.nextName}.`, ...d.types.map(typeMnemonic)].join(' ');
    }
    case 'TLSA': {
      const d = data as TlsaData;
      return `${d.usage} ${d.selector} ${d.matchingType} ${d.certificate.toString('hex').toUpperCase()}`;
    }
    case 'SSHFP': {
      const d = data as SshfpData;
      return `${d.algorithm} ${d.hash} ${d.fingerprint.toString('hex').toUpperCase()}`;
    }
    case 'NAPTR': {
      const d = data as NaptrData;
      return `${d.order} ${d.preference} ${quotedString(d.flags)} ${quotedString(d.services)} ${quotedString(d.regexp)} ${absolute(d.replacement)}`;
    }
    case 'SVCB':
    case 'HTTPS': {
      const d = data as SvcbData;
      const params = presentSvcParams(d.params);
      return `${d.priority} ${absolute(d.target)}${params === '' ? '' : ` ${params}`}`;
    }
    case 'A':
    case 'AAAA':
      return data as string;
  }
}

/** A canonical name as an absolute presentation name (`''`, the root, is `.`). */
function absolute(name: string): string {
  return name === '' ? '.' : `${name}.`;
}

/** A configured name where `.` (the root) is allowed: `''` for the root, else {@link configuredName}. */
function nameOrRoot(text: string): string {
  return text === '.' ? '' : configuredName(text);
}

/** Octets written in hexadecimal, whitespace allowed between digits (RFC 4034 §5.3, RFC 6698 §2.2). */
function hexOctets(fields: readonly string[], what: string): Buffer {
  const hex = fields.join('');
  if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9A-Fa-f]+$/.test(hex)) throw new Error(`${what} must be an even number of hexadecimal digits`);
  return Buffer.from(hex, 'hex');
}

/**
 * Parses record data written in presentation form (as in a zone file, RFC 1035 §5.1) into the
 * engine's shape. Target names are absolute (a trailing dot is optional) and may be Unicode.
 * TXT takes one string or a list of character strings; each is at most 255 octets (RFC 1035 §3.3.14).
 * @throws Error with the reason when the text does not fit the type.
 */
export function parseRecordData(type: RecordType, data: string | readonly string[]): RecordData {
  if (type === 'TXT') {
    const list = typeof data === 'string' ? [data] : [...data];
    for (const s of list) {
      if (Buffer.byteLength(s) > 255) throw new Error('a TXT character string is longer than 255 octets');
    }
    return list;
  }
  if (typeof data !== 'string') throw new Error(`${type} data is one string, not a list`);
  const text = data.trim();
  const fields = text.split(/\s+/);
  const uint = (s: string | undefined, max: number, what: string): number => {
    if (s === undefined || !/^\d+$/.test(s) || Number(s) > max) throw new Error(`${what} must be an integer 0–${max}`);
    return Number(s);
  };
  switch (type) {
    case 'A':
      if (isIP(text) !== 4) throw new Error(`"${text}" is not an IPv4 address`);
      return text;
    case 'AAAA':
      if (isIP(text) !== 6 || text.includes('%')) throw new Error(`"${text}" is not an IPv6 address`);
      return text;
    case 'CNAME':
    case 'NS':
    case 'PTR':
      if (fields.length !== 1) throw new Error(`${type} data is one name`);
      return configuredName(text);
    case 'MX': {
      if (fields.length !== 2) throw new Error('MX data is "preference exchange"');
      const mx: MxData = { preference: uint(fields[0], 65535, 'MX preference'), exchange: configuredName(fields[1]!) };
      return mx;
    }
    case 'SRV': {
      if (fields.length !== 4) throw new Error('SRV data is "priority weight port target"');
      const srv: SrvData = {
        priority: uint(fields[0], 65535, 'SRV priority'),
        weight: uint(fields[1], 65535, 'SRV weight'),
        port: uint(fields[2], 65535, 'SRV port'),
        target: configuredName(fields[3]!),
      };
      return srv;
    }
    case 'CAA': {
      const m = /^(\d+)\s+([A-Za-z0-9]+)\s+"?(.*?)"?$/.exec(text);
      if (!m) throw new Error('CAA data is \'flags tag "value"\'');
      const caa: CaaData = { flags: uint(m[1], 255, 'CAA flags'), tag: m[2]!.toLowerCase(), value: m[3]! };
      return caa;
    }
    case 'HINFO':
      throw new Error('HINFO records are not served from configuration');
    case 'DS': {
      if (fields.length < 4) throw new Error('DS data is "key-tag algorithm digest-type digest"');
      const ds: DsData = {
        keyTag: uint(fields[0], 65535, 'DS key tag'),
        algorithm: uint(fields[1], 255, 'DS algorithm'),
        digestType: uint(fields[2], 255, 'DS digest type'),
        digest: hexOctets(fields.slice(3), 'DS digest'),
      };
      return ds;
    }
    case 'TLSA': {
      if (fields.length < 4) throw new Error('TLSA data is "usage selector matching-type data"');
      const tlsa: TlsaData = {
        usage: uint(fields[0], 255, 'TLSA usage'),
        selector: uint(fields[1], 255, 'TLSA selector'),
        matchingType: uint(fields[2], 255, 'TLSA matching type'),
        certificate: hexOctets(fields.slice(3), 'TLSA data'),
      };
      return tlsa;
    }
    case 'SSHFP': {
      if (fields.length < 3) throw new Error('SSHFP data is "algorithm fingerprint-type fingerprint"');
      const sshfp: SshfpData = {
        algorithm: uint(fields[0], 255, 'SSHFP algorithm'),
        hash: uint(fields[1], 255, 'SSHFP fingerprint type'),
        fingerprint: hexOctets(fields.slice(2), 'SSHFP fingerprint'),
      };
      // RFC 4255 §3.1.2, RFC 6594 §3: SHA-1 and SHA-256 fingerprints have their digest's length.
      const length = { 1: 20, 2: 32 }[sshfp.hash];
      if (length !== undefined && sshfp.fingerprint.length !== length) throw new Error(`an SSHFP fingerprint of type ${sshfp.hash} is ${length} octets`);
      return sshfp;
    }
    case 'NAPTR': {
      const f = presentationFields(text);
      if (f.length !== 6) throw new Error('NAPTR data is \'order preference "flags" "services" "regexp" replacement\'');
      for (const s of f.slice(2, 5)) if (s.value.length > 255) throw new Error('a NAPTR character string is longer than 255 octets');
      const naptr: NaptrData = {
        order: uint(f[0]!.value, 65535, 'NAPTR order'),
        preference: uint(f[1]!.value, 65535, 'NAPTR preference'),
        flags: f[2]!.value,
        services: f[3]!.value,
        regexp: f[4]!.value,
        replacement: nameOrRoot(f[5]!.value),
      };
      return naptr;
    }
    case 'SVCB':
    case 'HTTPS': {
      const f = presentationFields(text);
      if (f.length < 2) throw new Error(`${type} data is "priority target [key=value …]"`);
      const priority = uint(f[0]!.value, 65535, `${type} priority`);
      const params = parseSvcParams(f.slice(2).map((x) => x.value));
      // RFC 9460 §2.4.2: the alias form (priority 0) carries no SvcParams.
      if (priority === 0 && params.length > 0) throw new Error(`an alias-form ${type} (priority 0) has no SvcParams`);
      const svcb: SvcbData = { priority, target: nameOrRoot(f[1]!.value), params };
      return svcb;
    }
    case 'SOA': {
      if (fields.length !== 7) throw new Error('SOA data is "mname rname serial refresh retry expire minimum"');
      const soa: SoaData = {
        mname: configuredName(fields[0]!),
        rname: configuredName(fields[1]!),
        serial: uint(fields[2], 4294967295, 'SOA serial'),
        refresh: uint(fields[3], 2147483647, 'SOA refresh'),
        retry: uint(fields[4], 2147483647, 'SOA retry'),
        expire: uint(fields[5], 2147483647, 'SOA expire'),
        minimum: uint(fields[6], 2147483647, 'SOA minimum'),
      };
      return soa;
    }
  }
}

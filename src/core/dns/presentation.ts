import { isIP } from 'node:net';
import { configuredName } from './name.js';
import type { CaaData, HinfoData, MxData, RecordData, RecordType, SoaData, SrvData } from './records.js';

/** Presentation form of record data, as zone files and the PowerDNS remote backend write it. */
export function presentData(type: RecordType, data: RecordData): string {
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
    case 'A':
    case 'AAAA':
      return data as string;
  }
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

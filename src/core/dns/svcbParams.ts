import { isIP } from 'node:net';
import { addressFromBytes, addressToBytes, formatIp, parseIp } from '../net/ipAddress.js';
import { quotedString } from './presentationTokens.js';
import type { SvcParam } from './records.js';

/** SvcParamKey names (RFC 9460 §14.3.2); other keys are written `keyNNNNN` (§2.1). */
const KEY_NAMES = ['mandatory', 'alpn', 'no-default-alpn', 'port', 'ipv4hint', 'ech', 'ipv6hint'] as const;
const MANDATORY = 0;
const ALPN = 1;
const NO_DEFAULT_ALPN = 2;
const PORT = 3;
const IPV4HINT = 4;
const ECH = 5;
const IPV6HINT = 6;
/** Key 65535 is reserved (RFC 9460 §14.3.2). */
const INVALID_KEY = 65535;

/** The number of a SvcParamKey written `name` or `keyNNNNN` (RFC 9460 §2.1). */
function keyNumber(name: string): number {
  const known = (KEY_NAMES as readonly string[]).indexOf(name);
  if (known >= 0) return known;
  const m = /^key(\d{1,5})$/.exec(name);
  if (!m || Number(m[1]) >= INVALID_KEY) throw new Error(`unknown SvcParam key "${name}"`);
  return Number(m[1]);
}

/** The presentation name of SvcParamKey `key`. */
function keyName(key: number): string {
  return KEY_NAMES[key] ?? `key${key}`;
}

/**
 * The SvcParams of SVCB/HTTPS presentation fields (`key=value`, `key` alone for an empty value,
 * the value's escapes and quotes already resolved: {@link presentationFields}), in ascending key
 * order as the wire form needs them (RFC 9460 §2.2). Value-list escapes (`\,` inside an alpn id,
 * RFC 9460 Appendix A.1) are not supported: a comma always separates ids.
 * @throws Error for an unknown or repeated key, a value that does not fit its key, or a key named
 *   in `mandatory` that is absent (RFC 9460 §8).
 */
export function parseSvcParams(fields: readonly string[]): SvcParam[] {
  const params: SvcParam[] = [];
  for (const field of fields) {
    const eq = field.indexOf('=');
    const name = eq < 0 ? field : field.slice(0, eq);
    const value = eq < 0 ? undefined : field.slice(eq + 1);
    const key = keyNumber(name);
    if (params.some((p) => p.key === key)) throw new Error(`SvcParam "${name}" is given twice`);
    params.push({ key, value: paramValue(key, name, value) });
  }
  params.sort((a, b) => a.key - b.key);
  const mandatory = params.find((p) => p.key === MANDATORY);
  if (mandatory) {
    for (let i = 0; i < mandatory.value.length; i += 2) {
      const k = mandatory.value.readUInt16BE(i);
      if (!params.some((p) => p.key === k)) throw new Error(`mandatory names "${keyName(k)}", which is not given`);
    }
  }
  return params;
}

/** The wire value of key `key` from its presentation `value` (octets as latin1; undefined when no `=`). */
function paramValue(key: number, name: string, value: string | undefined): Buffer {
  const list = (): string[] => {
    if (value === undefined || value === '') throw new Error(`SvcParam "${name}" needs a value`);
    return value.split(',');
  };
  switch (key) {
    case MANDATORY: {
      const keys = [...new Set(list().map(keyNumber))].sort((a, b) => a - b);
      if (keys.includes(MANDATORY)) throw new Error('mandatory must not name itself');
      const out = Buffer.alloc(keys.length * 2);
      keys.forEach((k, i) => out.writeUInt16BE(k, i * 2));
      return out;
    }
    case ALPN:
      return Buffer.concat(
        list().map((id) => {
          if (id.length === 0 || id.length > 255) throw new Error('an alpn id is 1–255 octets');
          return Buffer.concat([Buffer.from([id.length]), Buffer.from(id, 'latin1')]);
        }),
      );
    case NO_DEFAULT_ALPN:
      if (value !== undefined) throw new Error('no-default-alpn takes no value');
      return Buffer.alloc(0);
    case PORT: {
      if (value === undefined || !/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new Error('port must be an integer 0–65535');
      const out = Buffer.alloc(2);
      out.writeUInt16BE(Number(value));
      return out;
    }
    case IPV4HINT:
    case IPV6HINT: {
      const family = key === IPV4HINT ? 4 : 6;
      return Buffer.concat(
        list().map((a) => {
          if (isIP(a) !== family || a.includes('%')) throw new Error(`"${a}" is not an IPv${family} address`);
          return Buffer.from(addressToBytes(parseIp(a)));
        }),
      );
    }
    case ECH: {
      if (value === undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) throw new Error('ech is base64');
      return Buffer.from(value, 'base64');
    }
    default:
      return Buffer.from(value ?? '', 'latin1');
  }
}

/** SvcParams in presentation form, in ascending key order: what {@link parseSvcParams} reads back to the same params. */
export function presentSvcParams(params: readonly SvcParam[]): string {
  return params.map((p) => presentParam(p)).join(' ');
}

function presentParam({ key, value }: SvcParam): string {
  const name = keyName(key);
  switch (key) {
    case MANDATORY: {
      const names: string[] = [];
      for (let i = 0; i < value.length; i += 2) names.push(keyName(value.readUInt16BE(i)));
      return `${name}=${names.join(',')}`;
    }
    case ALPN: {
      const ids: string[] = [];
      for (let i = 0; i < value.length; i += 1 + value[i]!) ids.push(value.subarray(i + 1, i + 1 + value[i]!).toString('latin1'));
      const text = ids.join(',');
      return /^[!#-[\]-~]+$/.test(text) ? `${name}=${text}` : `${name}=${quotedString(text)}`;
    }
    case NO_DEFAULT_ALPN:
      return name;
    case PORT:
      return `${name}=${value.readUInt16BE(0)}`;
    case IPV4HINT:
    case IPV6HINT: {
      const size = key === IPV4HINT ? 4 : 16;
      const addresses: string[] = [];
      for (let i = 0; i < value.length; i += size) addresses.push(formatIp(addressFromBytes(key === IPV4HINT ? 4 : 6, value, i, i + size)));
      return `${name}=${addresses.join(',')}`;
    }
    case ECH:
      return `${name}=${value.toString('base64')}`;
    default:
      return value.length === 0 ? name : `${name}=${quotedString(value.toString('latin1'))}`;
  }
}

/** The RDATA of an SVCB or HTTPS record after its priority and target: each param as key, length, value (RFC 9460 §2.2). */
export function svcParamsWire(params: readonly SvcParam[]): Buffer {
  const parts: Buffer[] = [];
  for (const p of params) {
    const head = Buffer.alloc(4);
    head.writeUInt16BE(p.key, 0);
    head.writeUInt16BE(p.value.length, 2);
    parts.push(head, p.value);
  }
  return Buffer.concat(parts);
}

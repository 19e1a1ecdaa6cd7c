import dnsPacket from 'dns-packet';

/** The question of a DNS query message and its ECS client prefix, when it has one. */
export interface QueryQuestion {
  readonly name: string;
  readonly type: string;
  /** `address/source prefix` of the ECS option (RFC 7871 §6), undefined without one or with source prefix 0. */
  readonly ecs: string | undefined;
}

/**
 * The question of a DNS message in wire format when it is a query (QR 0, one question); undefined for a
 * response, a message with no or several questions, or bytes that are not a DNS message (dns-packet decodes).
 */
export function queryQuestion(wire: Uint8Array): QueryQuestion | undefined {
  if (wire.length < 12) return undefined;
  let message: dnsPacket.Packet;
  try {
    message = dnsPacket.decode(Buffer.from(wire.buffer, wire.byteOffset, wire.length));
  } catch {
    return undefined;
  }
  const question = message.questions?.[0];
  if (message.type !== 'query' || message.questions?.length !== 1 || !question) return undefined;
  return { name: question.name, type: String(question.type), ecs: ecsOfMessage(message) };
}

function ecsOfMessage(message: dnsPacket.Packet): string | undefined {
  for (const rr of message.additionals ?? []) {
    if (rr.type !== 'OPT') continue;
    for (const o of (rr as { options?: { code: number; ip?: string; sourcePrefixLength?: number }[] }).options ?? []) {
      if (o.code === 8 && o.ip !== undefined && (o.sourcePrefixLength ?? 0) > 0) return `${o.ip}/${o.sourcePrefixLength}`;
    }
  }
  return undefined;
}

/**
 * The client prefix of an ECS option's data (RFC 7871 §6: FAMILY 2 octets, SOURCE PREFIX-LENGTH,
 * SCOPE PREFIX-LENGTH, ADDRESS truncated to the source prefix) as `address/prefix`.
 * @throws Error when the data is not a valid ECS option (unknown family, prefix too long, address longer than the prefix needs).
 */
export function ecsOptionClient(data: Uint8Array): string {
  if (data.length < 4) throw new Error('ECS option shorter than 4 octets');
  const family = (data[0]! << 8) | data[1]!;
  const prefix = data[2]!;
  const width = family === 1 ? 4 : family === 2 ? 16 : 0;
  if (width === 0) throw new Error(`ECS family ${family} is neither 1 (IPv4) nor 2 (IPv6)`);
  if (prefix === 0 || prefix > width * 8) throw new Error(`ECS source prefix ${prefix} is not within 1..${width * 8}`);
  const address = data.subarray(4);
  if (address.length !== Math.ceil(prefix / 8))
    throw new Error(`ECS address has ${address.length} octets, source prefix ${prefix} needs ${Math.ceil(prefix / 8)}`);
  const full = new Uint8Array(width);
  full.set(address);
  return `${addressText(full)}/${prefix}`;
}

/** An IPv4 (4 octets) or IPv6 (16 octets) address in text (any valid IPv6 form: the engine parses them all). */
export function addressText(b: Uint8Array): string {
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2) words.push(((b[i]! << 8) | b[i + 1]!).toString(16));
  return words.join(':');
}

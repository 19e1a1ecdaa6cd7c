import { parseCidr, parseIp, type IpAddress, type IpPrefix } from '../../core/net/ipAddress.js';
import { commonPrefixLength } from '../../core/net/subnet.js';

/**
 * The address a redirect is decided for: the TCP peer, or — when the peer is one of the trusted
 * proxies — the client it forwards for, read from `X-Forwarded-For` (only then: any client can
 * write the header, so believing it from anyone would let a client choose its own site).
 */
export class ClientAddresses {
  private readonly proxies: readonly IpPrefix[];

  /** @param trustedProxies CIDR texts (validated by the listener schema). */
  constructor(trustedProxies: readonly string[]) {
    this.proxies = trustedProxies.map(parseCidr);
  }

  /** True when `a` is inside a trusted proxy subnet (an IPv4-mapped IPv6 peer counts as IPv4). */
  trusted(a: IpAddress): boolean {
    return this.proxies.some((p) => commonPrefixLength(a, p.address) >= p.prefix);
  }

  /**
   * The client of a request from `peer` with the `X-Forwarded-For` value `forwardedFor` (several
   * header lines joined with `, `, as Node joins them). From a trusted peer, the list is read
   * from the right (each proxy appends the address it received from): the first address that is
   * not a trusted proxy is the client; if every one is trusted, the leftmost. An entry that is
   * not an address stops the walk at the last one read (never a guess past what a trusted hop
   * wrote). Entries may carry a port (`192.0.2.1:4711`, `[2001:db8::1]:4711`), as some proxies write.
   */
  clientOf(peer: IpAddress, forwardedFor: string | undefined): IpAddress {
    if (forwardedFor === undefined || !this.trusted(peer)) return peer;
    const hops = forwardedFor.split(',');
    let client = peer;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = addressOf(hops[i]!.trim());
      if (hop === undefined) return client;
      client = hop;
      if (!this.trusted(hop)) return hop;
    }
    return client;
  }
}

/** The address of one `X-Forwarded-For` entry, its port and brackets dropped; undefined when it is not one. */
function addressOf(entry: string): IpAddress | undefined {
  let text = entry;
  if (text.startsWith('[')) text = text.slice(1, text.indexOf(']') < 0 ? text.length : text.indexOf(']'));
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(text)) text = text.slice(0, text.indexOf(':'));
  try {
    return parseIp(text);
  } catch {
    return undefined;
  }
}

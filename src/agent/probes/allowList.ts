import { parseCidr, parseIp, type IpPrefix } from '../../core/net/ipAddress.js';
import { commonPrefixLength } from '../../core/net/subnet.js';

/**
 * The networks probes may go to (`probes.allow`). An address outside every one of them is never
 * sent a packet; an empty list allows nothing.
 */
export class AllowList {
  private readonly networks: readonly IpPrefix[];

  /** @throws Error for a network that is not valid CIDR (the schema has checked it already). */
  constructor(cidrs: readonly string[]) {
    this.networks = cidrs.map(parseCidr);
  }

  /** Whether `address` (IPv4 or IPv6 text) lies inside an allowed network; false for anything that is not an address. */
  allows(address: string): boolean {
    let a;
    try {
      a = parseIp(address);
    } catch {
      return false;
    }
    return this.networks.some((n) => n.address.family === a.family && commonPrefixLength(a, n.address) >= n.prefix);
  }
}

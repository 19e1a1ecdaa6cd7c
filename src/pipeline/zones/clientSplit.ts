import type { RecordType } from '../../core/dns/records.js';
import type { IpAddress } from '../../core/net/ipAddress.js';
import { ipv4BlocksScope } from '../../core/net/ipv4InIpv6.js';
import { membershipScope, subnetMembership, type SubnetConfig } from '../../core/net/subnet.js';

/**
 * A name split by `clients` between a CNAME and address records (`../config/clientsSchema.ts`):
 * for each query exactly one side answers. The load check (`../crossReferences.ts`) made the
 * sides disjoint and left at most one of them without `clients`.
 */
export interface ClientSplit {
  /** The CNAME's clients; undefined: every client outside {@link addressUnion}. */
  readonly cname: readonly SubnetConfig[] | undefined;
  /** The clients of each address type that names them; a type not here answers every client the CNAME does not. */
  readonly addresses: ReadonlyMap<RecordType, readonly SubnetConfig[]>;
  /** Every subnet of {@link addresses}, which decides an unrestricted CNAME. */
  readonly addressUnion: readonly SubnetConfig[];
}

/** A split name's restrictions by type (`CNAME`, `A`, `AAAA`), as the snapshot collects them from the configuration. */
export function clientSplitOf(restricted: ReadonlyMap<RecordType, readonly SubnetConfig[]>): ClientSplit {
  const addresses = new Map<RecordType, readonly SubnetConfig[]>();
  for (const [type, subnets] of restricted) if (type !== 'CNAME') addresses.set(type, subnets);
  return { cname: restricted.get('CNAME'), addresses, addressUnion: [...addresses.values()].flat() };
}

/**
 * Which records of a split name apply to one client, and the ECS scope of that choice: the prefix
 * length of the largest aligned block around the client in which every subnet list read gives the
 * same membership (RFC 7871 §7.2.1, docs/PRODUCT.md §8), never wider than the boundary between
 * the sides; for an IPv6 client never crossing the blocks that carry IPv4 (`ipv4InIpv6.ts`).
 */
export class SplitDecision {
  /** The scope of the lists read so far (0: none read). */
  scope = 0;
  /** True when the CNAME answers this client (then nothing else does). */
  readonly cname: boolean;

  constructor(
    private readonly split: ClientSplit,
    private readonly client: IpAddress,
  ) {
    this.cname = split.cname !== undefined ? this.member(split.cname) : !this.member(split.addressUnion);
  }

  /** Whether records of `type` at the name answer this client (only the CNAME when the CNAME does). */
  applies(type: RecordType): boolean {
    if (type === 'CNAME' || this.cname) return type === 'CNAME' && this.cname;
    const subnets = this.split.addresses.get(type);
    return subnets === undefined || this.member(subnets);
  }

  /**
   * Whether the client is in one of `subnets`, narrowing {@link scope}: inside, the widest listed
   * prefix that holds it (its whole block is inside the list); outside, the block that touches no
   * listed subnet.
   */
  private member(subnets: readonly SubnetConfig[]): boolean {
    let inside = -1;
    let outside = 0;
    for (const s of subnets) {
      const m = subnetMembership(this.client, s.address, s.prefix);
      if (m >= 0) {
        if (inside < 0 || m < inside) inside = m;
      } else if (membershipScope(m) > outside) outside = membershipScope(m);
    }
    let scope = inside >= 0 ? inside : outside;
    const floor = ipv4BlocksScope(this.client);
    if (floor > scope) scope = floor;
    if (scope > this.scope) this.scope = scope;
    return inside >= 0;
  }
}

import type { AnswerRecord } from '../dns/records.js';
import type { IpAddress } from '../net/ipAddress.js';
import type { ClassRangeSource } from '../lpm/rangeTable.js';

/**
 * What every front door exchanges with the engine: a question, the client it is asked for, and
 * the authoritative answer, independent of any wire format.
 */

/** The client a decision is made for (docs/PRODUCT.md §2). */
export interface Client {
  /** ECS address when the query carried one with a source prefix > 0, else the resolver's address. */
  readonly address: IpAddress;
  /** ECS source prefix length in bits of `address`'s family; the full length without ECS. */
  readonly sourcePrefix: number;
  /** True when `address` came from ECS. */
  readonly fromEcs: boolean;
  /**
   * The resolver's address (the query's source) when `address` came from ECS and the door knows
   * it; without ECS the resolver is `address`. Never a selection input: the probe-request queue
   * (`src/core/views/probeDemand.ts`) asks agents to measure the path to resolvers.
   */
  readonly resolver?: IpAddress;
}

/** What a query's delegation hop option says (`../wire/delegationHopOption.ts`). */
export interface DelegationHop {
  /** The id of the engine that first delegated this query (hex). */
  readonly origin: string;
  /** Engines that delegated it so far (1 when it comes straight from the origin). */
  readonly hops: number;
}

/** A question for the engine, as a front door hands it over. */
export interface Query {
  /** Query name as received (any case, trailing dot optional); echoed in owner names. */
  readonly name: string;
  /** Numeric QTYPE; unknown types are answered NODATA at existing names. */
  readonly type: number;
  readonly client: Client;
  /** `udp` answers ANY minimally (RFC 8482); `tcp` answers every RRset. */
  readonly transport: 'udp' | 'tcp';
  /**
   * The DNSSEC OK bit of the query (RFC 3225 §3): true or false when the door's protocol carries
   * it (the standalone listener); absent when it does not (the compact protocol, PowerDNS),
   * because the DNS server in front signs its answers itself, so a signer leaves them alone.
   */
  readonly dnssecOk?: boolean;
  /**
   * The delegation hop option of a query another engine sent while resolving a delegated proximity
   * zone (`../wire/delegationHopOption.ts`): the engine refuses to delegate such a query again when
   * it names this engine or has reached the hop limit (loop protection, docs/PRODUCT.md §5). Absent
   * from doors whose protocol does not carry EDNS options.
   */
  readonly delegationHop?: DelegationHop;
}

/** A GSLB record as a counter names it: its owner name and type (a GSLB record is one name and one type). */
export interface SelectedRecord {
  /** Canonical owner name (`*.` prefixed for a wildcard record). */
  readonly name: string;
  /** Record type name (`A`, `AAAA`, `CNAME`, …). */
  readonly type: string;
}

/** The authoritative answer, independent of any wire format. */
export interface Answer {
  rcode: number;
  /** AA bit: set on answers from our zones, clear on referrals and refusals. */
  authoritative: boolean;
  /**
   * Answer section. The records of a GSLB decision reused from the record's decision cache
   * (`src/pipeline/selection/decisionCache.ts`) are its frozen objects, the same for every query the decision
   * serves while it stays valid: a front door may key a WeakMap on them to reuse their encoding.
   */
  answers: AnswerRecord[];
  authority: AnswerRecord[];
  additional: AnswerRecord[];
  /**
   * ECS scope prefix length (RFC 7871 §7.2.1) in bits of the client's family: the largest over
   * the GSLB selections the answer used; 0 for client-independent and negative answers.
   */
  scope: number;
  /** Data centers whose endpoints the GSLB selections answered with (for per-DC metrics). */
  dcs: string[];
  /**
   * Name of the zone holding the question's name (the first zone of a CNAME chain), for the
   * per-zone query counter; undefined when no zone holds it (REFUSED).
   */
  zone?: string;
  /**
   * The first GSLB record whose selection ran for this answer (for the top-N per-record counter);
   * undefined when none ran. The record itself, not a list: nearly every GSLB answer selects one
   * record, and the query path allocates nothing to count it.
   */
  selected?: SelectedRecord;
  /** The GSLB records selected after the first (a CNAME chain through several, ANY over TCP), in order; undefined when at most one ran. */
  moreSelected?: SelectedRecord[];
  /**
   * Set only when a GSLB selection ran: the prefix length (bits of the client's family) of the
   * client block for which this whole answer is the same, for every client in it, until the next
   * snapshot or state view is published — the widest scope of the selections' reused decisions,
   * counted even for a selection with no data (whose ECS scope in the reply is 0); −1 when a
   * selection was computed for this query alone (rotation, random, client metrics: not reusable).
   * Absent: the answer does not depend on the client. The standalone listener's native fast
   * path replays answers by it (`src/doors/dns/README.md`, "Fast path").
   */
  reuseScope?: number;
  /**
   * Set (with {@link reuseClassId}) when every GSLB selection of the answer reused a decision whose
   * only client input was the location class, all on this one class table (a record's
   * `LocationClasses`, `src/pipeline/selection/answerClasses.ts`), and no client split narrowed it:
   * then every client of the same class and address family gets this answer, with the ECS scope
   * max(`ipv4BlocksScope`, the class block's prefix length) in place of this client's (0 stays 0
   * for a negative answer). Null once a selection or split ruled that out; absent when no GSLB
   * selection ran. The native fast path replays by it for client blocks never asked before
   * (`src/doors/dns/README.md`, "Fast path", class templates).
   */
  reuseClass?: ClassRangeSource | null;
  /** With {@link reuseClass}: the client's class id in that table. */
  reuseClassId?: number;
}

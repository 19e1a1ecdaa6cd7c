import type { RecordData } from '../dns/records.js';
import type { Qualifiers } from '../location/location.js';

/** Data centers and endpoints as the engine knows them once the configuration is compiled (docs/PRODUCT.md §2). */

/** A data center as the selection stages see it (compiled from the configuration). */
export interface CompiledDataCenter {
  /** Position in the snapshot's data center list. */
  readonly index: number;
  readonly name: string;
  readonly qualifiers: Qualifiers;
  /** Degrees; absent when not configured. */
  readonly lat?: number;
  readonly lon?: number;
  readonly site: string;
}

/**
 * An endpoint of a GSLB record: one configured endpoint, with the record data it contributes to
 * this record's type (an address for A/AAAA, `{preference, exchange}` for MX, …).
 */
export interface GslbEndpoint {
  /** Stable across reloads: `service/dc/address` or `service/dc/target[:port]`; keys health state. */
  readonly key: string;
  readonly dc: CompiledDataCenter;
  readonly data: RecordData;
  readonly weight: number;
  readonly priority: number;
  /** Degrees; the endpoint's own or its DC's. */
  readonly lat?: number;
  readonly lon?: number;
}

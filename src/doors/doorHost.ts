import type { FrontDoorHost, QueryEngine } from '../core/contracts/frontDoor.js';
import type { Engine } from '../pipeline/engine.js';

/**
 * The engine as the front doors of this folder see it: every door's {@link QueryEngine}, and
 * for doors whose DNS server does the answer logic itself (PowerDNS) the current snapshot
 * (zones, serials) and the RRsets of one owner name. It lives here, not in `src/core/`, because
 * snapshots and RRsets are the pipeline's types; a door that needs only answers takes a
 * {@link FrontDoorHost} and stays independent of the pipeline.
 */
export interface DoorEngine extends QueryEngine, Pick<Engine, 'snapshot' | 'nameRrsets' | 'nameRrsetsFollowing'> {}

/** What the process gives the front doors of this folder: a {@link FrontDoorHost} with the {@link DoorEngine}. */
export interface DoorHost extends FrontDoorHost {
  readonly engine: DoorEngine;
}

import type { Client } from '../model/query.js';

/**
 * Where a decision that read measurements of the path to a client's network says so, so that the
 * network gets measured: the agents' probe-request queue (docs/PRODUCT.md §5, §7;
 * `src/capabilities/agents/`) implements it. A stage that ranks by client metrics (and later the
 * proximity database) calls {@link ProbeDemand.note} for the client it decided for; the
 * implementation decides which address that stands for (the resolver's by default), dedupes it
 * and queues it off the query path. Snapshots without agents have no demand sink.
 */
export interface ProbeDemand {
  /**
   * Notes that a decision at `nowMs` (ms since the epoch) read path measurements of `client`'s
   * network. Runs on the query path: never throws, never waits, allocates only for a network it
   * has not seen recently, and writes nothing a query reads.
   */
  note(client: Client, nowMs: number): void;
}

import type { Logger } from '../log/logger.js';
import type { ResolveContext } from '../state/resolveContext.js';
import { resolve, type Answer, type ExplainedSelection, type Query } from '../zones/authoritative.js';
import type { Snapshot } from './snapshot.js';

/**
 * The long-lived engine: holds the current snapshot and the resolve context, and answers queries
 * for every front door. Publishing a snapshot is one reference swap, so a query always runs on a
 * whole snapshot, old or new.
 */
export class Engine {
  private current: Snapshot;

  constructor(
    snapshot: Snapshot,
    readonly ctx: ResolveContext,
    readonly log: Logger,
  ) {
    this.current = snapshot;
  }

  /** The snapshot queries run on now. */
  get snapshot(): Snapshot {
    return this.current;
  }

  /** Makes `next` the snapshot for every query that starts from now on. */
  publish(next: Snapshot): void {
    this.current = next;
  }

  /** Answers a query on the current snapshot; `explain` collects the decision traces. */
  resolve(q: Query, explain?: ExplainedSelection[]): Answer {
    return resolve(q, this.current, this.ctx, explain);
  }
}

import type { Logger } from '../core/telemetry/logger.js';
import type { QueryEngine } from '../core/contracts/frontDoor.js';
import { unaskedContext, type ResolveContext } from '../core/views/resolveContext.js';
import type { RecordType } from '../core/dns/records.js';
import type { Client } from '../core/model/query.js';
import { resolve, resolveFollowing, type ExplainedSelection } from './zones/authoritative.js';
import { type Answer, type Query } from '../core/model/query.js';
import { nameRrsets, nameRrsetsFollowing, type NameContents } from './zones/nameRrsets.js';
import type { ZoneData } from './zones/zoneIndex.js';
import type { Snapshot } from './snapshot.js';
import type { ClassRangeSource } from '../core/lpm/rangeTable.js';

/**
 * The long-lived engine: holds the current snapshot and the resolve context, and answers queries
 * for every front door. Publishing a snapshot is one reference swap, so a query always runs on a
 * whole snapshot, old or new.
 */
export class Engine {
  private current: Snapshot;
  private readonly listeners = new Set<() => void>();

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

  /** Makes `next` the snapshot for every query that starts from now on, then tells the publish listeners. */
  publish(next: Snapshot): void {
    this.current = next;
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` synchronously after each publish (the front-door contract's `QueryEngine.onPublish`); returns its removal. */
  onPublish(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Answers a query on the current snapshot, for the front doors: a promise only when a GSLB
   * selection delegates to a sub-tier's name servers (recursive delegation, `resolveFollowing`).
   */
  resolve(q: Query): Answer | Promise<Answer> {
    return resolveFollowing(q, this.current, this.ctx);
  }

  private unaskedView: QueryEngine | undefined;
  private classTablesOf: { readonly records: Snapshot['records']; readonly geo: unknown; readonly tables: readonly ClassRangeSource[] } | undefined;

  /**
   * {@inheritDoc QueryEngine.classTables}: the `LocationClasses` of the current snapshot's records
   * whose decisions are reused (`DecisionCache.reason` undefined) and whose tables belong to the
   * snapshot's location database, each once (records with equal reads share one). Computed once per
   * set of compiled records and location database: a publish that changed only a state view
   * (health, overrides, metrics) keeps both, hence the same array.
   */
  classTables(): readonly ClassRangeSource[] {
    const records = this.current.records;
    const geo = this.current.env.geo;
    if (this.classTablesOf?.records !== records || this.classTablesOf.geo !== geo) {
      const tables = new Set<ClassRangeSource>();
      for (const r of records) {
        const lc = r.locationClasses;
        if (lc !== undefined && r.decisions.reason === undefined && lc.geo === geo) tables.add(lc);
      }
      this.classTablesOf = { records, geo, tables: [...tables] };
    }
    return this.classTablesOf.tables;
  }

  /**
   * {@inheritDoc QueryEngine.unasked}: answers on the current snapshot in an
   * {@link unaskedContext} over this engine's context, through {@link resolve} (no sub-tier asked).
   */
  unasked(): QueryEngine {
    if (this.unaskedView === undefined) {
      const ctx = unaskedContext(this.ctx);
      this.unaskedView = { ctx, resolve: (q) => resolve(q, this.current, ctx) };
    }
    return this.unaskedView;
  }

  /**
   * Answers a query on the current snapshot without asking any sub-tier (a recursive delegation
   * gives the selection's own answer, the next zone's); `explain` collects the decision traces.
   */
  resolveLocal(q: Query, explain?: ExplainedSelection[]): Answer {
    return resolve(q, this.current, this.ctx, explain);
  }

  /**
   * The RRsets at one owner name on the current snapshot, GSLB records selected for `client`
   * (see `nameRrsets`), for front doors whose DNS server does the answer logic itself.
   * `ctx` defaults to the engine's context (pass a read-only rotation view to look without
   * advancing rotation); `type` and `zone` narrow the lookup.
   */
  nameRrsets(name: string, client: Client, ctx: ResolveContext = this.ctx, type?: RecordType, zone?: ZoneData): NameContents | undefined {
    return nameRrsets(this.current, name, client, ctx, type, zone);
  }

  /**
   * {@link Engine.nameRrsets} for a DNS server that waits for its backend (PowerDNS): a promise only
   * when a GSLB selection delegates to a sub-tier's name servers (recursive delegation,
   * `nameRrsetsFollowing`); every other result is a plain value.
   */
  nameRrsetsFollowing(
    name: string,
    client: Client,
    ctx: ResolveContext = this.ctx,
    type?: RecordType,
    zone?: ZoneData,
  ): NameContents | undefined | Promise<NameContents> {
    return nameRrsetsFollowing(this.current, name, client, ctx, type, zone);
  }
}

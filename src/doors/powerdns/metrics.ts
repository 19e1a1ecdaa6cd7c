import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { TYPE_CODES } from '../../core/dns/records.js';

/** Outcome label of a request: answered, answered "not offered" (`result: false`), failed, or rejected as invalid. */
export type RequestOutcome = 'ok' | 'not_offered' | 'error' | 'invalid';

/** Timed lookups held before they are observed (one per 16 lookups: a batch per ~4000 lookups). */
const TIMED_BATCH = 256;

const OUTCOMES: readonly RequestOutcome[] = ['ok', 'not_offered', 'error', 'invalid'];

/** The qtype names a lookup is labelled with; any other name counts as `other`, so the series stay bounded. */
const LOOKUP_TYPE_NAMES: ReadonlySet<string> = new Set(Object.keys(TYPE_CODES).filter((t) => t !== 'OPT'));

/** Why a connection was closed by the front door. */
export type ProtocolErrorReason = 'malformed_json' | 'not_a_request' | 'unknown_method' | 'oversized' | 'disconnect_mid_request';

/**
 * Prometheus metrics of the PowerDNS front door, registered on the engine's registry
 * (`EngineMetrics.registry`). Labels are bounded: method names come from the remote backend API
 * (anything else counts as `unknown`), instance names only while a connection of that instance is
 * open (and cut to 64 characters). Answers by data center are counted in `gslbd_dc_answers_total`.
 */
export class PowerDnsMetrics {
  /**
   * Requests by method and outcome, counted in a plain map and copied into the Prometheus counter
   * at scrape time (`collect`), so the lookup path does no label hashing. Keyed by method alone
   * (a string literal on the lookup path, whose hash V8 keeps), never by a concatenated key that
   * would be a new string to flatten and hash on every request.
   */
  private readonly requestCounts = new Map<string, Record<RequestOutcome, number>>();
  readonly requests: Counter<'method' | 'outcome'>;
  readonly lookupSeconds: Histogram;
  readonly connections: Gauge<'instance'>;
  readonly connectionsTotal: Counter<'result'>;
  readonly protocolErrors: Counter<'reason'>;
  readonly selectionReuses: Counter;
  /** Lookups answered with a paired selection (copied into {@link selectionReuses} at scrape time). */
  reuses = 0;
  /** Lookups seen, repeated lines included. */
  lookups = 0;
  /** Lookups with qtype `ANY` (nearly all of them: `consistent-backends=yes`), copied into {@link lookupTypes} at scrape time. */
  anyLookups = 0;
  /** Lookups of other qtypes by type name (`other` for names gslbd does not know), copied into {@link lookupTypes} at scrape time. */
  private readonly otherTypes = new Map<string, number>();
  readonly lookupTypes: Counter<'qtype'>;

  /** Counts one lookup by the qtype PowerDNS asked for (a type name as PowerDNS writes it). */
  countLookupType(qtype: string): void {
    if (qtype === 'ANY') {
      this.anyLookups++;
      return;
    }
    const label = LOOKUP_TYPE_NAMES.has(qtype) ? qtype : 'other';
    this.otherTypes.set(label, (this.otherTypes.get(label) ?? 0) + 1);
  }
  /** Timed lookups (s) not yet in {@link lookupSeconds}: observed in a batch at scrape time or when full. */
  private readonly timed = new Float64Array(TIMED_BATCH);
  private timedCount = 0;

  /**
   * Records one timed lookup (s). prom-client's `observe` stays off the lookup path: live under
   * dnsperf its calls showed in profiles out of proportion to their share of lookups (cold code and
   * its bucket object on the path), so values wait in a typed array and are observed together.
   */
  observeLookup(seconds: number): void {
    this.timed[this.timedCount++] = seconds;
    if (this.timedCount === TIMED_BATCH) this.flushTimed();
  }

  private flushTimed(): void {
    for (let i = 0; i < this.timedCount; i++) this.lookupSeconds.observe(this.timed[i]!);
    this.timedCount = 0;
  }

  /** Counts one request; `method` is a remote backend API method name (bounded). */
  countRequest(method: string, outcome: RequestOutcome): void {
    let c = this.requestCounts.get(method);
    if (c === undefined) {
      c = { ok: 0, not_offered: 0, error: 0, invalid: 0 };
      this.requestCounts.set(method, c);
    }
    c[outcome]++;
  }

  constructor(registry: Registry) {
    const registers = [registry];
    const counts = this.requestCounts;
    this.requests = new Counter({
      name: 'gslbd_powerdns_requests_total',
      help: 'PowerDNS remote backend requests, by method and outcome (ok, not_offered, error, invalid)',
      labelNames: ['method', 'outcome'] as const,
      registers,
      collect() {
        this.reset();
        for (const [method, c] of counts) {
          for (const outcome of OUTCOMES) if (c[outcome] > 0) this.inc({ method, outcome }, c[outcome]);
        }
      },
    });
    this.lookupTypes = new Counter({
      name: 'gslbd_powerdns_lookups_by_qtype_total',
      help:
        'PowerDNS lookups by the qtype PowerDNS asked for. With consistent-backends=yes (its default) PowerDNS asks ANY for nearly every ' +
        "query whatever the client's type: ANY here counts those lookups, not clients' ANY questions (PowerDNS's response-by-qtype has those)",
      labelNames: ['qtype'] as const,
      registers,
      collect: () => {
        const c = this.lookupTypes;
        c.reset();
        if (this.anyLookups > 0) c.inc({ qtype: 'ANY' }, this.anyLookups);
        for (const [qtype, n] of this.otherTypes) c.inc({ qtype }, n);
      },
    });
    this.lookupSeconds = new Histogram({
      name: 'gslbd_powerdns_lookup_duration_seconds',
      help: 'Time from a lookup request to its reply text, in the engine (every 16th lookup is timed)',
      buckets: [2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 1e-2],
      registers,
      collect: () => this.flushTimed(),
    });
    this.connections = new Gauge({
      name: 'gslbd_powerdns_connections',
      help: 'Open PowerDNS connections, by the instance= value of their connection string ("" when none)',
      labelNames: ['instance'] as const,
      registers,
    });
    this.connectionsTotal = new Counter({
      name: 'gslbd_powerdns_connections_total',
      help: 'PowerDNS connections accepted, or rejected because maxConnections were open',
      labelNames: ['result'] as const,
      registers,
    });
    this.protocolErrors = new Counter({
      name: 'gslbd_powerdns_protocol_errors_total',
      help: 'Connections closed for bad input: malformed JSON, not a request, unknown method, oversized line, disconnect mid-request',
      labelNames: ['reason'] as const,
      registers,
    });
    this.selectionReuses = new Counter({
      name: 'gslbd_powerdns_selection_reuses_total',
      help: "Lookups answered with the selection of PowerDNS's previous identical lookup of the same query",
      registers,
      // Called at scrape time, after construction: the arrow reads this set's plain-number count.
      collect: () => {
        this.selectionReuses.reset();
        this.selectionReuses.inc(this.reuses);
      },
    });
  }
}

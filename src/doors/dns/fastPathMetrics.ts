import { Counter, type Registry } from 'prom-client';
import type { FastPathStats } from './fastPathAddon.js';

/** Outcomes of `gslbd_dns_fastpath_datagrams_total`, as the native counters name them. */
const OUTCOMES = ['hits', 'misses', 'sampled', 'dropped', 'limited', 'slipped'] as const;
const LABEL: Record<(typeof OUTCOMES)[number], string> = {
  hits: 'hit',
  misses: 'miss',
  sampled: 'sampled',
  dropped: 'dropped',
  limited: 'rate_limited',
  slipped: 'slipped',
};

/** A fast-path server's counters as last added to the Prometheus counters. */
type Added = Record<(typeof OUTCOMES)[number] | 'installed', number>;

const byRegistry = new WeakMap<Registry, FastPathMetrics>();

/**
 * The native fast path's Prometheus counters (src/doors/dns/README.md, "Fast path"). The native
 * threads count in their own atomics, once per batch; nothing here runs per query: when
 * `/metrics` is scraped each counter adds what every open fast-path server counted since the
 * last scrape. A closed server's last counts are added when it closes.
 *
 * - `gslbd_dns_fastpath_datagrams_total{outcome}`: `hit` answered natively from a template,
 *   `miss` handed to JavaScript (no template, or a query outside the native subset), `sampled` a
 *   hit handed to JavaScript for the query log, `dropped` too long or JavaScript's queue full,
 *   `rate_limited` left unanswered by response-rate limiting, `slipped` answered with an empty
 *   TC=1 reply by it instead;
 * - `gslbd_dns_fastpath_templates_total`: replies kept as templates.
 */
export class FastPathMetrics {
  private readonly sources = new Map<() => FastPathStats, Added>();
  private readonly datagrams: Counter<'outcome'>;
  private readonly templates: Counter;

  /** The one instance of `registry` (several listeners of one engine share its counters). */
  static of(registry: Registry): FastPathMetrics {
    let m = byRegistry.get(registry);
    if (m === undefined) {
      m = new FastPathMetrics(registry);
      byRegistry.set(registry, m);
    }
    return m;
  }

  private constructor(registry: Registry) {
    const add = (): void => this.addAll();
    this.datagrams = new Counter({
      name: 'gslbd_dns_fastpath_datagrams_total',
      help: 'UDP datagrams the native fast path received, by outcome (hit: answered natively; miss: answered by JavaScript; sampled: a hit handed to JavaScript for the query log; dropped; rate_limited: unanswered by response-rate limiting; slipped: answered TC=1 by it)',
      labelNames: ['outcome'] as const,
      registers: [registry],
      collect: add,
    });
    this.templates = new Counter({
      name: 'gslbd_dns_fastpath_templates_total',
      help: 'Replies the native fast path kept as templates',
      registers: [registry],
      collect: add,
    });
  }

  /** Counts `stats` (read when scraped) from now on. */
  add(stats: () => FastPathStats): void {
    this.sources.set(stats, { hits: 0, misses: 0, sampled: 0, dropped: 0, limited: 0, slipped: 0, installed: 0 });
  }

  /** Adds `stats`' last counts and stops reading it (call before its server closes). */
  remove(stats: () => FastPathStats): void {
    const added = this.sources.get(stats);
    if (added === undefined) return;
    this.addFrom(stats(), added);
    this.sources.delete(stats);
  }

  private addAll(): void {
    for (const [stats, added] of this.sources) this.addFrom(stats(), added);
  }

  private addFrom(now: FastPathStats, added: Added): void {
    for (const k of OUTCOMES) {
      if (now[k] > added[k]) this.datagrams.inc({ outcome: LABEL[k] }, now[k] - added[k]);
      added[k] = now[k];
    }
    if (now.installed > added.installed) this.templates.inc(now.installed - added.installed);
    added.installed = now.installed;
  }
}

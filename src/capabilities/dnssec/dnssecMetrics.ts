import { Counter, Gauge, type Registry } from 'prom-client';
import { DeferredCounts, type CountCell } from '../../core/telemetry/engineMetrics.js';
import type { SignerCounts } from './answerSigner.js';

/** What the cache metrics read at scrape time: the signature cache in use, if any. */
export interface CacheSource {
  readonly hits: number;
  readonly misses: number;
  readonly size: number;
}

/**
 * The signer's Prometheus metrics. The query path counts in plain numbers ({@link SignerCounts}
 * over `DeferredCounts`, and the cache's own hit and miss counts), added when scraped, so signing
 * an answer calls no prom-client code. Labels: algorithm numbers, answer kinds, hit or miss.
 *
 * - `gslbd_dnssec_signatures_total{algorithm}`: fresh signatures made (cache misses × signing keys);
 * - `gslbd_dnssec_signature_cache_lookups_total{result}`: RRsets whose RRSIGs came from the cache (`hit`) or were made (`miss`);
 * - `gslbd_dnssec_signature_cache_entries`: RRsets the cache holds;
 * - `gslbd_dnssec_answers_total{kind}`: answers signed (`signed`), denied by compact answers (`denial`), DNSKEY/CDS/CDNSKEY answers (`keys`).
 */
export class DnssecMetrics implements SignerCounts {
  private readonly signatureCounts = new DeferredCounts<'algorithm'>();
  private readonly answerCounts = new DeferredCounts<'kind'>();
  private readonly signatureCells = new Map<number, CountCell>();
  private readonly answerCells = new Map<string, CountCell>();
  /** Cache counts already added to the counter, per cache (a reload may start a new one). */
  private added = { source: undefined as CacheSource | undefined, hits: 0, misses: 0 };

  constructor(registry: Registry, cache: () => CacheSource | undefined) {
    const signatureCounts = this.signatureCounts;
    const answerCounts = this.answerCounts;
    const added = this.added;
    new Counter({
      name: 'gslbd_dnssec_signatures_total',
      help: 'Fresh DNSSEC signatures made, by algorithm',
      labelNames: ['algorithm'] as const,
      registers: [registry],
      collect() {
        signatureCounts.addTo(this);
      },
    });
    new Counter({
      name: 'gslbd_dnssec_answers_total',
      help: 'Answers the DNSSEC signer changed, by kind (signed, denial, keys)',
      labelNames: ['kind'] as const,
      registers: [registry],
      collect() {
        answerCounts.addTo(this);
      },
    });
    new Counter({
      name: 'gslbd_dnssec_signature_cache_lookups_total',
      help: 'RRsets whose signatures came from the signature cache (hit) or were made (miss)',
      labelNames: ['result'] as const,
      registers: [registry],
      collect() {
        const c = cache();
        if (c === undefined) return;
        if (c !== added.source) Object.assign(added, { source: c, hits: 0, misses: 0 });
        this.inc({ result: 'hit' }, c.hits - added.hits);
        this.inc({ result: 'miss' }, c.misses - added.misses);
        added.hits = c.hits;
        added.misses = c.misses;
      },
    });
    new Gauge({
      name: 'gslbd_dnssec_signature_cache_entries',
      help: 'RRsets the signature cache holds signatures for',
      registers: [registry],
      collect() {
        this.set(cache()?.size ?? 0);
      },
    });
  }

  signature(algorithm: number): void {
    let cell = this.signatureCells.get(algorithm);
    if (cell === undefined) {
      cell = this.signatureCounts.cell({ algorithm: String(algorithm) });
      this.signatureCells.set(algorithm, cell);
    }
    cell.n++;
  }

  answer(kind: 'signed' | 'denial' | 'keys'): void {
    let cell = this.answerCells.get(kind);
    if (cell === undefined) {
      cell = this.answerCounts.cell({ kind });
      this.answerCells.set(kind, cell);
    }
    cell.n++;
  }
}

/**
 * Per-second rates from cumulative counters (HAProxy's session and byte totals, Prometheus
 * counters): the difference of two readings over the time between them. A counter that went
 * backwards was reset (HAProxy reloaded, an exporter restarted): that interval has no rate, and
 * the next one is measured from the new value.
 */
export class CounterRates {
  private readonly last = new Map<string, { value: number; atMs: number }>();

  /** The rate of counter `key` since its previous reading, or undefined (first reading, a reset, no time passed). */
  rate(key: string, value: number, atMs: number): number | undefined {
    const prev = this.last.get(key);
    this.last.set(key, { value, atMs });
    if (prev === undefined || atMs <= prev.atMs || value < prev.value) return undefined;
    return ((value - prev.value) * 1000) / (atMs - prev.atMs);
  }

  /** Forgets every counter not in `keep` (a backend or series that went away). */
  retain(keep: ReadonlySet<string>): void {
    for (const key of this.last.keys()) if (!keep.has(key)) this.last.delete(key);
  }
}

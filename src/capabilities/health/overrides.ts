import type { StateMap } from '../../core/contracts/stateStore.js';
import type { Logger } from '../../core/telemetry/logger.js';
import type { AdminOverride } from '../../core/views/healthView.js';

/** An administrative override request. `none` clears it. */
export type OverrideRequest = AdminOverride | 'none';

/**
 * The operators' overrides by endpoint key, kept in the overrides map of the state store
 * (`healthStore.ts`): they beat the monitors, persist in the state file at any age, and are
 * dropped, with a warning, when their endpoint leaves the configuration.
 */
export class Overrides {
  constructor(
    private readonly map: StateMap<AdminOverride>,
    private readonly log: Logger,
  ) {}

  get(key: string): AdminOverride | undefined {
    return this.map.get(key);
  }

  has(key: string): boolean {
    return this.map.get(key) !== undefined;
  }

  /** Every override in force, as the state file keeps them. */
  toJSON(): Record<string, AdminOverride> {
    return Object.fromEntries(this.map.entries());
  }

  /**
   * Sets or clears an endpoint's override (the caller checked the key) and logs it.
   * @returns false when nothing changed in the store (`none` for an endpoint without override).
   */
  request(key: string, override: OverrideRequest): boolean {
    this.log.info({ endpoint: key, override }, 'health override');
    if (override === 'none') return this.map.delete(key);
    this.map.set(key, override);
    return true;
  }

  /** Drops, with a warning naming both, the overrides of endpoints not in `endpoints` (keys). */
  retain(endpoints: ReadonlyMap<string, unknown>): void {
    for (const [key, override] of [...this.map.entries()]) {
      if (endpoints.has(key)) continue;
      this.map.delete(key);
      this.log.warn({ endpoint: key, override }, 'administrative override dropped: the endpoint is no longer in the configuration');
    }
  }

  /** Sets the overrides a state file kept, for the endpoints in `endpoints` (keys). */
  restore(saved: Readonly<Record<string, AdminOverride>>, endpoints: ReadonlyMap<string, unknown>): void {
    for (const [key, o] of Object.entries(saved)) if (endpoints.has(key)) this.map.set(key, o);
  }
}

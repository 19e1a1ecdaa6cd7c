/** What one source contributes to a report: host fields and/or service samples (push API shapes without `dc`). */
export interface SourceReading {
  readonly host?: Readonly<Record<string, number | string>>;
  readonly services?: readonly Readonly<Record<string, number | string>>[];
}

interface Slot {
  readonly reading: SourceReading;
  readonly version: number;
  readonly atMs: number;
  /** After this long without a new reading, the slot is not reported (its values go stale on the engines). */
  readonly freshMs: number;
}

/** The fresh readings of a report, merged, and the versions they were built from. */
export interface ReportParts {
  readonly host?: Record<string, number | string>;
  readonly services: Record<string, number | string>[];
  /** Slot name → version included, to mark them delivered once the engine accepted them. */
  readonly versions: ReadonlyMap<string, number>;
}

/**
 * The latest reading of every source, for the reporters: each engine is sent the readings it has
 * not accepted yet, and only while they are fresh (a source that stopped reading is left out, so
 * its metrics go stale on the engine instead of being re-sent and re-stamped as new).
 */
export class ReadingSlots {
  private readonly slots = new Map<string, Slot>();
  private version = 0;

  /** Stores a source's newest reading, fresh for `freshMs`. */
  put(source: string, reading: SourceReading, atMs: number, freshMs: number): void {
    this.slots.set(source, { reading, version: ++this.version, atMs, freshMs });
  }

  /** Forgets a source's reading (it failed: nothing of it is reported until it reads again). */
  clear(source: string): void {
    this.slots.delete(source);
  }

  /**
   * The readings newer than `delivered` (slot → version) and fresh at `nowMs`, merged: host fields
   * in slot order (a later source's field wins), service samples merged per service.
   */
  collect(delivered: ReadonlyMap<string, number>, nowMs: number): ReportParts {
    let host: Record<string, number | string> | undefined;
    const services = new Map<string, Record<string, number | string>>();
    const versions = new Map<string, number>();
    for (const [name, slot] of this.slots) {
      if (slot.version <= (delivered.get(name) ?? 0) || nowMs - slot.atMs > slot.freshMs) continue;
      versions.set(name, slot.version);
      if (slot.reading.host) host = { ...host, ...slot.reading.host };
      for (const s of slot.reading.services ?? []) {
        const key = String(s.service);
        services.set(key, { ...services.get(key), ...s });
      }
    }
    return { ...(host ? { host } : {}), services: [...services.values()], versions };
  }
}

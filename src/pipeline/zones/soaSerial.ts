import { createHash } from 'node:crypto';

/** The serial a zone is served with, and the content it was computed for. */
export interface ZoneSerial {
  readonly serial: number;
  /** SHA-256 of the zone's configuration: its own section, its GSLB records and the services and data centers they answer from. */
  readonly contentHash: string;
}

/** Hash of anything JSON-serialisable that makes up a zone's content. */
export function contentHash(content: unknown): string {
  return createHash('sha256').update(JSON.stringify(content)).digest('hex');
}

/**
 * The serial rule across reloads (documented in src/pipeline/zones/README.md). A configured number is
 * served as written. `auto`: the first load takes the Unix time in seconds; a reload keeps the
 * serial when the zone's content is unchanged and otherwise takes max(previous + 1, now), so the
 * serial only grows (RFC 1982 arithmetic is not needed before 2106).
 */
export function nextSerial(configured: number | 'auto', hash: string, previous: ZoneSerial | undefined, nowMs: number): number {
  if (configured !== 'auto') return configured;
  const now = Math.floor(nowMs / 1000);
  if (!previous) return now;
  if (previous.contentHash === hash) return previous.serial;
  return Math.max(previous.serial + 1, now) >>> 0;
}

import { dirname, resolve } from 'node:path';
import type { Logger } from '../core/telemetry/logger.js';
import type { Config } from './configSchema.js';
import { watchSettledFile, type FileChange } from './settledFileWatch.js';

/**
 * The files whose edit is an edit of the configuration: the configuration file and the zone file
 * of each zone (`zones[].zoneFile`, relative to the configuration file's folder: where
 * `src/pipeline/config/zoneFileInclude.ts` reads it). A zone file cannot include others
 * (`$INCLUDE` is refused, `src/core/dns/masterFile.ts`), so there is nothing further to watch.
 * @returns absolute paths (the configuration file as given), without duplicates.
 */
export function configurationFiles(config: Pick<Config, 'zones'>, file: string): string[] {
  const base = dirname(file);
  return [...new Set([file, ...config.zones.flatMap((z) => (z.zoneFile !== undefined ? [resolve(base, z.zoneFile)] : []))])];
}

/**
 * The file watch of a running configuration: one {@link watchSettledFile} per file of
 * {@link configurationFiles}, so an edit of a zone file reloads as an edit of the configuration
 * file does, under the same rules (a replaced file at once, an in-place write once it held still
 * over two polls; the reload keeps the running configuration when the result is invalid).
 * The set follows the running configuration: {@link ConfigFilesWatch.watch} after each reload
 * that applied, so a zone file added or removed by a reload is watched or dropped with it.
 */
export class ConfigFilesWatch {
  private readonly watches = new Map<string, { close(): void } | undefined>();

  /** @param onChange called once per finished change of any watched file. */
  constructor(
    private readonly onChange: (file: string, change: FileChange) => void,
    private readonly log: Logger,
  ) {}

  /** Watches exactly `files`: new ones from now, dropped ones no more; files still listed keep their watch (and its state). */
  watch(files: readonly string[]): void {
    const wanted = new Set(files);
    for (const [f, w] of this.watches) {
      if (wanted.has(f)) continue;
      w?.close();
      this.watches.delete(f);
    }
    for (const f of wanted) {
      if (this.watches.has(f)) continue;
      this.watches.set(
        f,
        watchSettledFile(f, (change) => this.onChange(f, change), this.log),
      );
    }
  }

  /** The files watched now (for tests and logs). */
  files(): string[] {
    return [...this.watches.keys()];
  }

  /** Ends every watch. */
  close(): void {
    for (const w of this.watches.values()) w?.close();
    this.watches.clear();
  }
}

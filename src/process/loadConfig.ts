import { parseConfigWith, readConfigText, type LoadedConfig } from '../core/config/load.js';
import { includeZoneFiles, type ZoneFileRead } from '../pipeline/config/zoneFileInclude.js';
import { configSchema, type Config } from './configSchema.js';

/**
 * Reads, parses (YAML 1.2, so JSON works too) and validates the engine's configuration file
 * against the composed schema (`configSchema.ts`), with the zone files its zones name.
 * @throws ConfigError listing every problem: unreadable file, YAML syntax (with line:column),
 *   schema violations and broken cross references, each with its path.
 */
export function loadConfigFile(file: string): LoadedConfig<Config> {
  return { file, config: parseConfigText(readConfigText(file), file) };
}

/**
 * Parses and validates configuration text, with the zone files its zones name
 * (`src/pipeline/config/zoneFileInclude.ts`, relative to `file`'s folder; `onZoneFile` sees each
 * one read); `file` is otherwise only used in messages.
 * @throws ConfigError as {@link loadConfigFile}.
 */
export function parseConfigText(text: string, file = '<config>', onZoneFile?: ZoneFileRead): Config {
  return parseConfigWith(configSchema, text, file, (data) => includeZoneFiles(data, file, onZoneFile));
}

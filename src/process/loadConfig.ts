import { loadConfigFileWith, parseConfigWith, type LoadedConfig } from '../core/config/load.js';
import { configSchema, type Config } from './configSchema.js';

/**
 * Reads, parses (YAML 1.2, so JSON works too) and validates the engine's configuration file
 * against the composed schema (`configSchema.ts`).
 * @throws ConfigError listing every problem: unreadable file, YAML syntax (with line:column),
 *   schema violations and broken cross references, each with its path.
 */
export function loadConfigFile(file: string): LoadedConfig<Config> {
  return loadConfigFileWith(configSchema, file);
}

/**
 * Parses and validates configuration text; `file` is only used in messages.
 * @throws ConfigError as {@link loadConfigFile}.
 */
export function parseConfigText(text: string, file = '<config>'): Config {
  return parseConfigWith(configSchema, text, file);
}

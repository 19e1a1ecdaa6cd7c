import { createHash } from 'node:crypto';
import { dirname, resolve as resolvePath } from 'node:path';
import type { AdminListenerConfig } from '../admin/listenerSchema.js';
import { readConfigText } from '../core/config/load.js';
import { FILE_SIZE_LIMITS, readRegularFile } from '../core/config/regularFile.js';
import { zoneContentHashes } from '../pipeline/snapshot.js';
import type { Config } from './configSchema.js';
import { checkFileReferences } from './fileReferences.js';
import { configurationHash } from './sharedState/clusterMembers.js';
import { parseConfigText } from './loadConfig.js';

/**
 * A configuration read, parsed, validated and checked (every file it names), ready to be compiled
 * into a snapshot: what the reload pipeline (`reloadPipeline.ts`) computes off the event loop.
 * Everything here is plain data, so it crosses threads by structured clone.
 */
export interface CandidateConfig {
  readonly file: string;
  readonly config: Config;
  /**
   * SHA-256 over the configuration text, the zone files and the admin token file: two reads with equal
   * fingerprints would build the same snapshot, so a reload may be skipped.
   */
  readonly fingerprint: string;
  /** Each zone's content hash (the `auto` SOA serial input, `src/pipeline/zones/soaSerial.ts`). */
  readonly contentHashes: ReadonlyMap<string, string>;
  /**
   * `configurationHash` of the configuration (what nodes sharing a store compare, written with every
   * member beat): computed here, off the event loop in a reload, because over 20,000 records it is
   * 50-80 ms of JSON and SHA-256, and the beat asked for it every 5 s (issue 17).
   */
  readonly sharedHash: string;
  /** The admin token (`listeners.admin.token` or the contents of `tokenFile`); undefined disables mutating routes. */
  readonly adminToken: string | undefined;
}

/**
 * Reads (a regular file under its size cap), parses and validates a configuration file, checks
 * every file it names ({@link checkFileReferences}), reads the admin token and hashes the zones,
 * on the calling thread (start-up, `check-config`, the reload pipeline's worker). `text`, when
 * given, is used instead of the file's contents (a candidate that is not on disk yet; relative
 * paths stay relative to `file`).
 * @throws ConfigError listing every problem.
 */
export function readCandidateConfig(file: string, text?: string): CandidateConfig {
  const body = text ?? readConfigText(file);
  const hash = createHash('sha256').update(body);
  // A zone file's text is part of the fingerprint: an edit of it alone is a change to reload.
  const config = parseConfigText(body, file, (path, zoneText) => hash.update(`\0zoneFile\0${path}\0`).update(zoneText));
  checkFileReferences(config, file);
  const token = adminToken(config.listeners.admin, file, hash);
  return {
    file,
    config,
    fingerprint: hash.digest('hex'),
    contentHashes: zoneContentHashes(config),
    sharedHash: configurationHash(config),
    adminToken: token,
  };
}

/**
 * The admin token of `listeners.admin`: `token`, or the contents of `tokenFile` (relative to the
 * configuration file) without surrounding whitespace, also fed to `hash`.
 */
function adminToken(admin: AdminListenerConfig | undefined, configFile: string, hash: ReturnType<typeof createHash>): string | undefined {
  if (admin?.tokenFile === undefined) return admin?.token;
  const text = readRegularFile(resolvePath(dirname(configFile), admin.tokenFile), FILE_SIZE_LIMITS.token).toString('utf8');
  hash.update('\0tokenFile\0').update(text);
  return text.trim();
}

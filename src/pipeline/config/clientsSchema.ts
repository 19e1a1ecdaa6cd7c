import { z } from 'zod';
import { subnetSchema } from '../../core/config/fieldSchemas.js';

/**
 * `clients` of a record: the client subnets it answers, for a name that holds a CNAME and other
 * records (an address for one subnet, an alias for everyone else). A record without `clients` at
 * such a name answers every client the other side's records do not. The load check
 * (`crossReferences.ts`) allows `clients` only at such a name and rejects any client that two
 * sides would both answer, so CNAME exclusivity (RFC 1034 §3.6.2, RFC 2181 §10.1) holds per
 * answer; the query path is `zones/clientSplit.ts`. IPv4-mapped IPv6 prefixes are IPv4 prefixes.
 */
export const clientsSchema = z.array(subnetSchema).min(1);

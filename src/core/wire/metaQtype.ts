import { RCODE } from '../dns/rcode.js';

/**
 * The error code for a question whose QTYPE is not an ordinary data type (RFC 6895 §3.1,
 * meta-TYPEs), or undefined for every other type (ANY included: it is answered, RFC 8482). The
 * codes are BIND 9's (ns/query.c; surveyed for BIND, NSD, PowerDNS and Knot in
 * github.com/sischkg/meta_deprecated_qtypes), which is what operators see from most servers:
 *
 * - AXFR (252), IXFR (251): REFUSED. Zone transfers are not offered (README: a secondary would
 *   serve one client's GSLB answers to everyone); RFC 5936 §4.2 / RFC 1995 let a server refuse them.
 * - MAILB (253), MAILA (254): NOTIMP (obsolete, RFC 1035 §3.2.3, RFC 973; BIND answers NOTIMP).
 * - TKEY (249): NOTIMP (RFC 2930 key exchange is not implemented here).
 * - TSIG (250), OPT (41): FORMERR (pseudo-records that only travel in the additional section,
 *   RFC 8945 §4.2, RFC 6891 §6.1.1; a question cannot ask for them; BIND answers FORMERR).
 */
export function metaQtypeRcode(qtype: number): number | undefined {
  switch (qtype) {
    case 251:
    case 252:
      return RCODE.REFUSED;
    case 249:
    case 253:
    case 254:
      return RCODE.NOTIMP;
    case 41:
    case 250:
      return RCODE.FORMERR;
    default:
      return undefined;
  }
}

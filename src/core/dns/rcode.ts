/**
 * The response codes the engine produces (RFC 1035 §4.1.1, RFC 6891 §9 for BADVERS), with their
 * names: one table for answers, wire codecs and metric labels.
 */
export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5, BADVERS: 16 } as const;

/** Name of each {@link RCODE} value (metric labels, logs). */
export const RCODE_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(RCODE).map(([name, code]) => [code, name]));

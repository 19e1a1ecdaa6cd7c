// Types of dns-packet's record-type table (the package's `types.js`; @types/dns-packet does not declare it).
declare module 'dns-packet/types.js' {
  /** The mnemonic of a type number, `UNKNOWN_<n>` when the table has none. */
  export function toString(type: number): string;
  /** The number of an upper-case mnemonic, 0 when the table has none. */
  export function toType(name: string): number;
}

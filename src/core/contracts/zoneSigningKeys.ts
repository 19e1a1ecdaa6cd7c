/**
 * The signing keys of the zones gslbd has keys for, as a DNS server in front of a front door
 * needs them to sign the door's answers itself (PowerDNS live signing from the keys its remote
 * backend supplies, `src/doors/powerdns/README.md`, "DNSSEC"). The DNSSEC capability provides it
 * (`src/capabilities/dnssec/`); the composition root hands it to the doors as
 * `FrontDoorHost.zoneKeys`.
 */
export interface ZoneSigningKeys {
  /**
   * The keys of `zone` (canonical apex, no trailing dot) at `now` (seconds since the epoch), in
   * the order they are configured; undefined when the zone is not signed.
   */
  keysOf(zone: string, now: number): readonly ZoneSigningKey[] | undefined;
}

/** One key of a signed zone, in the shape a key store of a DNS server holds it. */
export interface ZoneSigningKey {
  /** 1-based position in the zone's configured key list: stable while the configuration is. */
  readonly id: number;
  /** DNSKEY flags: 257 for a key-signing key, 256 for a zone-signing key (RFC 4034 §2.1.1). */
  readonly flags: number;
  /** True while the key signs (its `Activate`…`Inactive` window, BIND's timing metadata). */
  readonly active: boolean;
  /** True while the key is in the DNSKEY RRset (its `Publish`…`Delete` window). */
  readonly published: boolean;
  /**
   * The private key in BIND's `.private` format, v1.2 (`Private-key-format`, `Algorithm`,
   * `PrivateKey` lines, newline-terminated), which PowerDNS reads as a key's content.
   */
  readonly privateKeyText: string;
}

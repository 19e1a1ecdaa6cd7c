import { z } from 'zod';
import { domainNameSchema, ipSchema, latitudeSchema, longitudeSchema, portSchema } from '../../core/config/fieldSchemas.js';
import { parseCidr } from '../../core/net/ipAddress.js';
import type { CommonPolicyShape, PolicyConfig } from '../../pipeline/config/recordSchema.js';

/** A proximity zone id: dotted numbers, one number per tier (`0`, `0.1`, `1`: docs/PRODUCT.md §5). */
export const proximityZoneIdSchema = z.string().regex(/^\d+(\.\d+)*$/, { error: 'a proximity zone id is dotted numbers ("0", "0.1")' });

/** A name server of a sub-tier (docs/PRODUCT.md §5): its name and the address (and port) it answers on. */
export const subTierNameServerSchema = z.strictObject({
  name: domainNameSchema.describe('Name of the sub-tier name server.'),
  address: ipSchema.describe('Address the sub-tier name server answers on.'),
  port: portSchema.default(53).describe('Port the sub-tier name server answers on; default 53.'),
});

/**
 * One proximity zone of the tree: its id (its parent is the id without the last number), a name for
 * people, and — for a zone served by other name servers (a sub-tier's engines, seed 000's PDNS-0.1)
 * — `delegate` with those name servers. A delegated zone has no data centers here; records answer
 * for it by their `delegation` (`alias`: a CNAME into a name delegated to those servers).
 */
export const proximityZoneSchema = z.strictObject({
  id: proximityZoneIdSchema.describe('Id of the proximity zone: dotted numbers, one per tier (0, 0.1); its parent is the id without the last number.'),
  name: z.string().min(1).describe('Name of the proximity zone, for people.'),
  /** Where the zone stands (degrees), for the fallback order by static proximity; its data centers' coordinates count too (a delegated zone has none here). */
  lat: latitudeSchema.optional().describe('Latitude of the proximity zone in degrees, for the fallback order by static proximity.'),
  lon: longitudeSchema.optional().describe('Longitude of the proximity zone in degrees, for the fallback order by static proximity.'),
  delegate: z
    .strictObject({
      nameServers: z.array(subTierNameServerSchema).min(1).describe('Name servers of the sub-tier serving this proximity zone.'),
      /** The sub-tier's keepalive (`subTierHealth.ts`): a DNS query to each name server this often; the zone is skipped while none answers within `timeoutMs`. */
      check: z
        .strictObject({
          intervalSeconds: z
            .number()
            .int()
            .min(1)
            .max(3600)
            .default(10)
            .describe('Seconds between keepalive DNS queries to each sub-tier name server; default 10.'),
          timeoutMs: z.number().int().min(50).max(10_000).default(1000).describe('A keepalive answer later than this many ms counts as none; default 1000.'),
        })
        .prefault({})
        .describe('Keepalive of the sub-tier: the proximity zone is skipped while none of its name servers answers.'),
    })
    .optional()
    .describe('For a proximity zone served by other name servers (a sub-tier): those name servers; such a zone has no data centers here.'),
});

const cidrSchema = z.string().refine(
  (s) => {
    try {
      parseCidr(s);
      return true;
    } catch {
      return false;
    }
  },
  { error: 'must be a CIDR prefix ("8.8.8.0/24")' },
);

/**
 * The `networkProximity` section (README.md; docs/PRODUCT.md §5, seed 000): the proximity zone tree,
 * the proximity database (PDB) and the engine's ordered zone index cache.
 */
export const networkProximitySchema = z.strictObject({
  /**
   * The proximity zones of this engine's level and below. Ids are global across tiers: a sub-tier's
   * engine lists only its subtree (`0.1`, `0.1.1`, …), so a zone's parent need not be listed here.
   */
  zones: z.array(proximityZoneSchema).default([]).describe("The proximity zones of this engine's level and below (ids global across tiers); default none."),
  /**
   * The PDB: `enabled` (default) or `disabled` — then no index comes from it and records of the
   * `network-proximity` policy answer round-robin among their healthy data centers (the seed's step 5c).
   */
  pdb: z
    .enum(['enabled', 'disabled'])
    .default('enabled')
    .describe('The proximity database (PDB): enabled, or disabled (network-proximity records answer round-robin); default enabled.'),
  /**
   * The order given for a client network the PDB has no measurements of (answer now, probe later):
   * these zones first, then the others in configuration order.
   */
  defaultOrder: z
    .array(proximityZoneIdSchema)
    .default([])
    .describe('Proximity zones first in the order of a client network without PDB measurements, then the others; default none.'),
  /** The PDB's key for a client network: the resolver's address (or the ECS address, see `ecs`) masked to these lengths. */
  ipv4Prefix: z.number().int().min(8).max(32).default(24).describe('Prefix bits of the PDB key for an IPv4 resolver (or ECS) address; default 24.'),
  ipv6Prefix: z.number().int().min(16).max(128).default(56).describe('Prefix bits of the PDB key for an IPv6 resolver (or ECS) address; default 56.'),
  /**
   * Key the PDB by the ECS network when a query carries one (masked to the lengths above and to its
   * source prefix), instead of by the resolver. Probes then go to the ECS network: set the agents'
   * `probes.ecs` too.
   */
  ecs: z
    .boolean()
    .default(false)
    .describe('Key the PDB by the ECS network when a query carries one instead of by the resolver (set agents.probes.ecs too); default false.'),
  /**
   * Resolver prefixes whose RTT says nothing about their clients (public anycast resolvers): the PDB
   * key is the ECS network when the query has one, else the network gets the fallback order.
   */
  anycastResolvers: z
    .array(cidrSchema)
    .default([])
    .describe('Resolver prefixes (CIDR) whose RTT says nothing about their clients: keyed by ECS, else the fallback order; default none.'),
  /** Zones whose RTTs differ by at most this many ms from the best of their band tie; ties go to configuration order. */
  toleranceMs: z.number().min(0).max(10_000).default(5).describe('Proximity zones within this many ms of the best RTT of their band tie; default 5.'),
  /** The same band as a share of the band's best RTT (percent); the wider of the two applies. */
  tolerancePercent: z.number().min(0).max(100).default(0).describe('The tie band as a percentage of the best RTT; the wider of the two applies; default 0.'),
  /** Probe results per zone and network the PDB keeps; a zone's RTT from one group is the median of them. */
  samples: z
    .number()
    .int()
    .min(1)
    .max(15)
    .default(3)
    .describe('Probe results per proximity zone and network the PDB keeps; the RTT is their median; default 3.'),
  /** Samples older than this (engine receive time) no longer count. */
  sampleMaxAgeSeconds: z.number().int().min(1).max(86_400).default(900).describe('Seconds after which a probe sample no longer counts; default 900.'),
  /** Client networks the PDB keeps at most (least recently updated dropped first). */
  maxNetworks: z
    .number()
    .int()
    .min(1)
    .max(10_000_000)
    .default(100_000)
    .describe('Client networks the PDB keeps at most (least recently updated dropped first); default 100000.'),
  /** How long the engine caches an ordered zone index per client network. */
  indexTtlSeconds: z.number().int().min(1).max(86_400).default(60).describe('Seconds the engine caches an ordered zone index per client network; default 60.'),
  /** Client networks the index cache keeps at most (least recently used dropped first). */
  indexCacheSize: z
    .number()
    .int()
    .min(1)
    .max(10_000_000)
    .default(100_000)
    .describe('Client networks the ordered zone index cache keeps at most (least recently used dropped first); default 100000.'),
});

export type NetworkProximityConfig = z.output<typeof networkProximitySchema>;

/**
 * `policy: {type: network-proximity}` (docs/PRODUCT.md §5): data centers ranked by their proximity
 * zone's place in the client network's ordered zone index; inside a zone and across zones the
 * record's `pickDcCount` and `balanceAlgorithm` apply as everywhere.
 */
export function networkProximityPolicySchema(common: CommonPolicyShape) {
  return z.strictObject({
    type: z
      .literal('network-proximity')
      .describe("Network proximity: data centers ranked by their proximity zone's place in the client network's ordered zone index."),
    ...common,
    /**
     * How the record answers when the best candidate is a delegated zone (docs/PRODUCT.md §5).
     * `alias`: a CNAME to `aliases[zone]`, a name inside a zone delegated (by static NS records) to
     * that zone's name servers — never an NS referral at the GSLB name itself, which resolvers
     * would not keep per client subnet. A delegated zone without an alias is no candidate of the record.
     */
    delegation: z
      .discriminatedUnion('mode', [
        z.strictObject({
          mode: z.literal('alias').describe("alias: answer a CNAME into a name delegated to the proximity zone's name servers."),
          aliases: z
            .record(proximityZoneIdSchema, domainNameSchema)
            .describe('Per delegated proximity zone id, the name inside a zone delegated to its name servers.'),
        }),
        /**
         * `recursive` (seed 000 step 6): the engine asks the delegated zone's name servers itself
         * (forwarding the client network as ECS) and answers with their authoritative records;
         * when none answers within `budgetMs` (each attempt at most `attemptMs`), the next zone of
         * the index answers. Every delegated zone is a candidate. Front doors that answer
         * asynchronously carry it (the standalone listener, the compact protocol); the PowerDNS
         * door answers the next zone.
         */
        z.strictObject({
          mode: z.literal('recursive').describe("recursive: the engine asks the delegated zone's name servers itself, forwarding the client network as ECS."),
          budgetMs: z
            .number()
            .int()
            .min(10)
            .max(5000)
            .default(400)
            .describe('Time in ms the delegated name servers have to answer before the next zone answers; default 400.'),
          attemptMs: z.number().int().min(10).max(5000).default(150).describe('Time in ms of each attempt at a delegated name server; default 150.'),
        }),
      ])
      .optional()
      .describe('How the GSLB record answers when the best candidate is a delegated proximity zone: alias or recursive.'),
  });
}

export type NetworkProximityPolicyConfig = z.output<ReturnType<typeof networkProximityPolicySchema>>;

/** True when a record's policy is network proximity. */
export function isNetworkProximity(p: PolicyConfig): p is PolicyConfig & NetworkProximityPolicyConfig {
  return p.type === 'network-proximity';
}

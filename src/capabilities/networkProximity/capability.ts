import { PROBE_RESULTS_MAP, type StoredProbeResult } from '../../core/contracts/probeResultsMap.js';
import { parseCidr } from '../../core/net/ipAddress.js';
import type { Capability, CapabilityHost, CapabilityRuntime, EnvPart } from '../../pipeline/capability.js';
import type { GslbRecordConfig } from '../../pipeline/config/recordSchema.js';
import { registerProximityMetrics } from './proximityMetrics.js';
import { networkProximityStage } from './networkProximityStage.js';
import {
  isNetworkProximity,
  networkProximityPolicySchema,
  networkProximitySchema,
  proximityZoneIdSchema,
  type NetworkProximityConfig,
} from './networkProximitySchema.js';
import { ProximityDatabase, type PdbSettings } from './proximityDatabase.js';
import { ProximityIndex, type IndexCounts } from './proximityIndex.js';
import { SubTierHealth, type SubTierTarget } from './subTierHealth.js';
import { SubTierResolver } from './subTierResolver.js';
import { ZoneIndexCache } from './zoneIndexCache.js';
import { ZoneTree } from './zoneTree.js';

/** What the network-proximity capability reads of the configuration. */
export interface NetworkProximitySection {
  readonly networkProximity: NetworkProximityConfig;
  readonly datacenters: readonly {
    readonly name: string;
    readonly proximityZone?: string | undefined;
    readonly lat?: number | undefined;
    readonly lon?: number | undefined;
  }[];
  readonly records: readonly GslbRecordConfig[];
}

/** How often the PDB drops networks with no fresh sample (ms). */
const SWEEP_MS = 60_000;

/** Data center name → proximity zone, per configuration (the stages of every record share it). */
const zonesByConfig = new WeakMap<NetworkProximitySection['datacenters'], ReadonlyMap<string, string>>();

function zoneOfDc(config: NetworkProximitySection): ReadonlyMap<string, string> {
  let m = zonesByConfig.get(config.datacenters);
  if (m === undefined) {
    m = new Map(config.datacenters.flatMap((d) => (d.proximityZone !== undefined ? [[d.name, d.proximityZone] as const] : [])));
    zonesByConfig.set(config.datacenters, m);
  }
  return m;
}

/**
 * Tiered network proximity (docs/PRODUCT.md §5, seed 000; README.md): the `networkProximity`
 * section (proximity zones, the PDB, the ordered zone index cache), each data center's
 * `proximityZone`, and the `network-proximity` selection policy. The PDB is fed from the agents'
 * probe results in the state store and kept in this process; the query path reads the index through
 * `SelectionEnv.proximity`.
 */
export const networkProximityCapability = {
  name: 'networkProximity',
  schema: {
    root: {
      networkProximity: networkProximitySchema
        .prefault({})
        .describe('Network proximity: the proximity zone tree, the proximity database (PDB) and the ordered zone index cache.'),
    },
    datacenter: {
      /** The proximity zone this data center belongs to (docs/PRODUCT.md §5). */
      proximityZone: proximityZoneIdSchema.optional().describe('Id of the proximity zone this data center belongs to (dotted numbers such as 0.1).'),
    },
    policies: (common) => [networkProximityPolicySchema(common)],
  },
  check(config, ctx) {
    const np = config.networkProximity;
    const ids = new Map<string, number>();
    np.zones.forEach((z, i) => {
      const same = ids.get(z.id);
      if (same !== undefined)
        ctx.addIssue({ code: 'custom', path: ['networkProximity', 'zones', i, 'id'], message: `zone "${z.id}" is already zones[${same}]` });
      else ids.set(z.id, i);
    });
    np.defaultOrder.forEach((z, i) => {
      if (!ids.has(z)) ctx.addIssue({ code: 'custom', path: ['networkProximity', 'defaultOrder', i], message: `unknown proximity zone "${z}"` });
    });
    const delegated = new Set(np.zones.filter((z) => z.delegate !== undefined).map((z) => z.id));
    const tree = new ZoneTree(np.zones.map((z) => z.id));
    config.datacenters.forEach((d, i) => {
      if (d.proximityZone === undefined) return;
      if (!ids.has(d.proximityZone))
        ctx.addIssue({ code: 'custom', path: ['datacenters', i, 'proximityZone'], message: `unknown proximity zone "${d.proximityZone}"` });
      const servedBy = tree.selfAndAncestors(d.proximityZone).find((z) => delegated.has(z));
      if (servedBy !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['datacenters', i, 'proximityZone'],
          message: `zone "${servedBy}" is delegated to other name servers: its data centers are configured there`,
        });
    });
    config.records.forEach((r, i) => {
      const policy = r.policy;
      if (!isNetworkProximity(policy)) return;
      if (np.zones.length === 0)
        ctx.addIssue({ code: 'custom', path: ['records', i, 'policy', 'type'], message: 'a network-proximity record needs networkProximity.zones' });
      const d = policy.delegation;
      if (d?.mode === 'recursive' && delegated.size === 0)
        ctx.addIssue({
          code: 'custom',
          path: ['records', i, 'policy', 'delegation', 'mode'],
          message: 'recursive delegation needs a delegated proximity zone (networkProximity.zones[].delegate)',
        });
      for (const zone of Object.keys(d?.mode === 'alias' ? d.aliases : {})) {
        if (!delegated.has(zone))
          ctx.addIssue({
            code: 'custom',
            path: ['records', i, 'policy', 'delegation', 'aliases', zone],
            message: `zone "${zone}" is not a delegated proximity zone (networkProximity.zones[].delegate)`,
          });
      }
    });
  },
  stages({ record, config }) {
    const policy = record.policy;
    if (!isNetworkProximity(policy)) return [];
    const d = policy.delegation;
    if (d?.mode === 'recursive') {
      const zones = new Set(config.networkProximity.zones.filter((z) => z.delegate !== undefined).map((z) => z.id));
      return [networkProximityStage(zoneOfDc(config), new Map(), { zones, budgetMs: d.budgetMs, attemptMs: d.attemptMs })];
    }
    return [networkProximityStage(zoneOfDc(config), new Map(Object.entries(d?.mode === 'alias' ? d.aliases : {})))];
  },
  start: startNetworkProximity,
} satisfies Capability<NetworkProximitySection>;

function startNetworkProximity(host: CapabilityHost): CapabilityRuntime<NetworkProximitySection> {
  const pdb = new ProximityDatabase();
  const cache = new ZoneIndexCache(60_000, 100_000);
  const counts: IndexCounts = { cache: 0, pdb_measured: 0, pdb_fallback: 0, round_robin: 0 };
  const subTiers = new SubTierHealth();
  const resolver = new SubTierResolver();
  let subTiersRunning = false;
  let prepared: { config: NetworkProximitySection; pdb: PdbSettings } | undefined;
  let running: PdbSettings | undefined;
  const results = host.store.map<StoredProbeResult>(PROBE_RESULTS_MAP);
  registerProximityMetrics(host.metrics.registry, pdb, cache, counts, resolver, subTiers);
  let sweeper: NodeJS.Timeout | undefined;
  let delegated: SubTierTarget[] = [];
  results.watch((_key, value) => {
    if (value !== undefined) pdb.ingest(value);
  });
  return {
    prepare(config): EnvPart {
      const np = config.networkProximity;
      const tree = new ZoneTree(
        np.zones.map((z) => z.id),
        np.defaultOrder,
        [
          ...np.zones.flatMap((z) => (z.lat !== undefined && z.lon !== undefined ? [{ zone: z.id, lat: z.lat, lon: z.lon }] : [])),
          ...config.datacenters.flatMap((d) =>
            d.proximityZone !== undefined && d.lat !== undefined && d.lon !== undefined ? [{ zone: d.proximityZone, lat: d.lat, lon: d.lon }] : [],
          ),
        ],
      );
      const groupZones = new Map<string, string>([
        ...np.zones.map((z) => [`zone:${z.id}`, z.id] as const),
        ...config.datacenters.flatMap((d) => (d.proximityZone !== undefined ? [[`dc:${d.name}`, d.proximityZone] as const] : [])),
      ]);
      const settings: PdbSettings = {
        tree,
        groupZones,
        tolerance: { ms: np.toleranceMs, percent: np.tolerancePercent },
        samples: np.samples,
        sampleMaxAgeMs: np.sampleMaxAgeSeconds * 1000,
        maxNetworks: np.maxNetworks,
        ipv4Prefix: np.ipv4Prefix,
        ipv6Prefix: np.ipv6Prefix,
      };
      const next =
        np.zones.length === 0
          ? undefined
          : new ProximityIndex(
              {
                tree,
                pdbAvailable: np.pdb === 'enabled',
                ecs: np.ecs,
                ipv4Prefix: np.ipv4Prefix,
                ipv6Prefix: np.ipv6Prefix,
                anycastResolvers: np.anycastResolvers.map((c) => parseCidr(c)),
                nameServers: new Map(np.zones.flatMap((z) => (z.delegate !== undefined ? [[z.id, z.delegate.nameServers] as const] : []))),
              },
              pdb,
              cache,
              counts,
              subTiers,
              resolver,
              () => host.now(),
            );
      prepared = { config, pdb: settings };
      return { proximity: next };
    },
    commit(config) {
      if (prepared?.config !== config) return;
      const np = config.networkProximity;
      const same = running !== undefined && samePdbKeys(running, prepared.pdb);
      running = prepared.pdb;
      pdb.configure(running);
      // An index cached under the old configuration may name zones or keys that are gone.
      cache.clear();
      resolver.clear();
      cache.resize(np.indexTtlSeconds * 1000, np.indexCacheSize);
      delegated = subTierTargets(np);
      if (subTiersRunning) subTiers.start(delegated);
      if (!same) {
        // The zones or the key lengths changed: the entries are rebuilt from the probe results kept.
        pdb.clear();
        for (const [, r] of results.entries()) pdb.ingest(r);
      }
    },
    run() {
      sweeper = setInterval(() => pdb.sweep(host.now()), SWEEP_MS);
      sweeper.unref();
      subTiersRunning = true;
      subTiers.start(delegated);
    },
    stop() {
      clearInterval(sweeper);
      subTiersRunning = false;
      subTiers.stop();
      return Promise.resolve();
    },
    describe() {
      return { proximityZones: running?.tree.ids.length ?? 0 };
    },
  };
}

/** The delegated zones' keepalive targets. */
function subTierTargets(np: NetworkProximityConfig): SubTierTarget[] {
  return np.zones.flatMap((z) =>
    z.delegate === undefined
      ? []
      : [{ zone: z.id, nameServers: z.delegate.nameServers, intervalMs: z.delegate.check.intervalSeconds * 1000, timeoutMs: z.delegate.check.timeoutMs }],
  );
}

/** True when two PDB configurations key and group samples alike (entries stay meaningful). */
function samePdbKeys(a: PdbSettings, b: PdbSettings): boolean {
  return (
    a.ipv4Prefix === b.ipv4Prefix &&
    a.ipv6Prefix === b.ipv6Prefix &&
    a.tree.ids.join() === b.tree.ids.join() &&
    a.tree.fallbackOrder.join() === b.tree.fallbackOrder.join() &&
    [...a.groupZones].join() === [...b.groupZones].join() &&
    a.tolerance.ms === b.tolerance.ms &&
    a.tolerance.percent === b.tolerance.percent &&
    a.samples === b.samples
  );
}

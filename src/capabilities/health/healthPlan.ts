import { createHash } from 'node:crypto';
import { endpointKey } from '../../pipeline/compileRecord.js';
import type { CheckTarget } from './checks/check.js';
import type { MonitorBase } from './checks/checkKind.js';
import { CHECK_KINDS, defaultPort, type CheckKindList } from './checks/registry.js';
import type { HealthConfigInput } from './healthConfig.js';

/** One check to run: a monitor against a target. Endpoints sharing monitor and target share it. */
export interface PlannedCheck {
  /**
   * `monitor@address:port[/host]`: names the check in the state file, metrics and /health. The
   * address is in canonical spelling (the configuration schema canonicalises every address,
   * `canonicalIpText`), so two spellings of one address are one check and a canonical
   * spelling keeps its id across releases.
   */
  readonly id: string;
  readonly monitor: MonitorBase;
  readonly target: CheckTarget;
  /** A hash of the monitor's definition (the target is in the id); state is kept only while id and fingerprint are equal. */
  readonly fingerprint: string;
}

/** A monitored or unmonitored enabled endpoint of a service. */
export interface PlannedEndpoint {
  /** The endpoint key (`service/dc/address`), as GSLB records see it. */
  readonly key: string;
  readonly service: string;
  readonly dc: string;
  /** Ids of its checks; empty when unmonitored (always up). */
  readonly checks: readonly string[];
}

/** A data center with check points. */
export interface PlannedDc {
  readonly name: string;
  readonly rule: 'all' | 'any' | 'quorum';
  readonly wan: readonly string[];
  readonly lan: readonly string[];
}

/** What to monitor for one configuration. */
export interface HealthPlan {
  readonly checks: ReadonlyMap<string, PlannedCheck>;
  readonly endpoints: readonly PlannedEndpoint[];
  readonly dcs: readonly PlannedDc[];
}

/**
 * Derives the checks of a validated configuration: for every enabled endpoint, each of its
 * monitors against its check target (`check.address` ?? its address, `check.port` ?? the
 * monitor's port, `check.host`), and for every data center its WAN and LAN check points.
 * Identical (monitor, target) pairs become one check. Default ports come from the monitors'
 * kinds in `kinds`.
 */
export function buildHealthPlan(config: HealthConfigInput, kinds: CheckKindList = CHECK_KINDS): HealthPlan {
  const monitors = new Map(
    config.health.monitors.map((m) => [m.name, { monitor: m, definition: createHash('sha256').update(JSON.stringify(m)).digest('base64url').slice(0, 22) }]),
  );
  const checks = new Map<string, PlannedCheck>();
  const plan = (monitorName: string, address: string, port: number | undefined, host: string | undefined): string => {
    const { monitor, definition } = monitors.get(monitorName)!;
    const target: CheckTarget = { address, port: port ?? defaultPort(monitor, kinds)!, host };
    const id = `${monitor.name}@${address.includes(':') ? `[${address}]` : address}:${target.port}${host !== undefined ? `/${host}` : ''}`;
    if (!checks.has(id)) checks.set(id, { id, monitor, target, fingerprint: definition });
    return id;
  };

  const endpoints: PlannedEndpoint[] = [];
  for (const svc of config.services) {
    for (const ep of svc.endpoints) {
      if (!ep.enabled) continue;
      const address = ep.check?.address ?? ep.address;
      const ids = address === undefined ? [] : ep.monitors.map((m) => plan(m, address, ep.check?.port, ep.check?.host));
      endpoints.push({ key: endpointKey(svc.name, ep), service: svc.name, dc: ep.dc, checks: ids });
    }
  }

  const dcs: PlannedDc[] = [];
  for (const dc of config.datacenters) {
    const cp = dc.checkPoints;
    if (!cp) continue;
    dcs.push({
      name: dc.name,
      rule: cp.rule,
      wan: cp.wan.map((p) => plan(p.monitor, p.address, p.port, p.host)),
      lan: cp.lan.map((p) => plan(p.monitor, p.address, p.port, p.host)),
    });
  }
  return { checks, endpoints, dcs };
}

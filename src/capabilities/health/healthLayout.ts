import type { HealthPlan } from './healthPlan.js';
import type { ViewIndex } from './monitoredHealthView.js';

/** A configuration's checks, endpoints and data centers with the indexes that relate them. */
export interface HealthLayout {
  readonly plan: HealthPlan;
  readonly index: ViewIndex;
  /** By endpoint position: its service slot. */
  readonly endpointService: readonly number[];
  /** By service slot: its endpoint positions. */
  readonly serviceEndpoints: readonly number[][];
  /** Check id → endpoint positions using it. */
  readonly checkEndpoints: ReadonlyMap<string, readonly number[]>;
  /** Check id → positions in `plan.dcs` using it as a check point. */
  readonly checkDcs: ReadonlyMap<string, readonly number[]>;
}

/** The layout of a configuration without checks, endpoints or data centers (before the first configure). */
export const EMPTY_LAYOUT: HealthLayout = layoutOf({ checks: new Map(), endpoints: [], dcs: [] });

/** Positions and cross-references of a plan, computed once per configuration. */
export function layoutOf(plan: HealthPlan): HealthLayout {
  const endpoints = new Map<string, number>();
  const services = new Map<string, Map<string, number>>();
  const endpointService: number[] = [];
  const serviceEndpoints: number[][] = [];
  const checkEndpoints = new Map<string, number[]>();
  const checkDcs = new Map<string, number[]>();
  plan.endpoints.forEach((e, i) => {
    endpoints.set(e.key, i);
    let perDc = services.get(e.service);
    if (!perDc) services.set(e.service, (perDc = new Map()));
    let slot = perDc.get(e.dc);
    if (slot === undefined) {
      slot = serviceEndpoints.length;
      perDc.set(e.dc, slot);
      serviceEndpoints.push([]);
    }
    serviceEndpoints[slot]!.push(i);
    endpointService.push(slot);
    for (const id of e.checks) {
      const list = checkEndpoints.get(id);
      if (list) list.push(i);
      else checkEndpoints.set(id, [i]);
    }
  });
  plan.dcs.forEach((d, di) => {
    for (const id of [...d.wan, ...d.lan]) {
      const list = checkDcs.get(id);
      if (!list) checkDcs.set(id, [di]);
      else if (!list.includes(di)) list.push(di);
    }
  });
  return {
    plan,
    index: { endpoints, services, monitored: plan.endpoints.map((e) => e.checks.length > 0) },
    endpointService,
    serviceEndpoints,
    checkEndpoints,
    checkDcs,
  };
}

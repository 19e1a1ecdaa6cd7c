import type { ChangeSet } from '../pipeline/capability.js';
import { endpointKey } from '../pipeline/compileRecord.js';
import type { Config } from './configSchema.js';

/** What a reload changed: GSLB records (`name/type`), data centers and endpoints (`service/dc/address`). */
export type ReloadSummary = { readonly records: ChangeSet; readonly datacenters: ChangeSet; readonly endpoints: ChangeSet };

/**
 * What changed from `before` to `after`, by the keys an operator names things with (the keys of
 * `/status`, `/health` and the metrics). A thing is changed when its configuration text differs.
 * Logged with every reload (`configuration reloaded`) and answered by `POST /reload`.
 */
export function reloadSummary(before: Config, after: Config): ReloadSummary {
  return {
    records: diff(
      keyed(before.records, (r) => `${r.name}/${r.type}`),
      keyed(after.records, (r) => `${r.name}/${r.type}`),
    ),
    datacenters: diff(
      keyed(before.datacenters, (d) => d.name),
      keyed(after.datacenters, (d) => d.name),
    ),
    endpoints: diff(endpointsOf(before), endpointsOf(after)),
  };
}

/** True when nothing was added, removed or changed. */
export function isEmptySummary(s: ReloadSummary): boolean {
  return [s.records, s.datacenters, s.endpoints].every((c) => c.added.length + c.removed.length + c.changed.length === 0);
}

function endpointsOf(config: Config): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of config.services) for (const e of s.endpoints) out.set(endpointKey(s.name, e), JSON.stringify(e));
  return out;
}

function keyed<T>(items: readonly T[], key: (t: T) => string): Map<string, string> {
  return new Map(items.map((t) => [key(t), JSON.stringify(t)]));
}

function diff(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): ChangeSet {
  const added: string[] = [];
  const changed: string[] = [];
  for (const [k, v] of after) {
    const old = before.get(k);
    if (old === undefined) added.push(k);
    else if (old !== v) changed.push(k);
  }
  const removed = [...before.keys()].filter((k) => !after.has(k));
  return { added, removed, changed };
}

import type { ChangeSet } from '../pipeline/capability.js';
import { endpointKey } from '../pipeline/compileRecord.js';
import { runSteps, type Steps } from '../pipeline/selection/steps.js';
import type { Config } from './configSchema.js';

/**
 * What a reload changed: zones (by name; changed when anything of the zone differs: SOA, NS, a
 * static record, a zone file's records), GSLB records (`name/type`), data centers and endpoints
 * (`service/dc/address`).
 */
export type ReloadSummary = { readonly zones: ChangeSet; readonly records: ChangeSet; readonly datacenters: ChangeSet; readonly endpoints: ChangeSet };

/**
 * What changed from `before` to `after`, by the keys an operator names things with (the keys of
 * `/status`, `/health` and the metrics). A thing is changed when its configuration text differs.
 * Logged with every reload (`configuration reloaded`) and answered by `POST /reload`.
 */
export function reloadSummary(before: Config, after: Config): ReloadSummary {
  return runSteps(reloadSummarySteps(before, after));
}

/** Things keyed or compared between two yields of {@link reloadSummarySteps}. */
const SUMMARY_STEP = 100;

/**
 * {@link reloadSummary} as steps (`src/pipeline/selection/steps.ts`) of {@link SUMMARY_STEP}
 * things, for a reload to run in slices after its swap: over 20,000 records the summary is a JSON
 * text per record of both configurations, which held the event loop 3.5 s in one turn on a loaded
 * machine (issue 17); steps of 500 records still took 30-60 ms each at a load average of 19, so a
 * step is 100.
 */
export function* reloadSummarySteps(before: Config, after: Config): Steps<ReloadSummary> {
  const zones = yield* diff(yield* zonesOf(before), yield* zonesOf(after));
  const recordKey = (r: Config['records'][number]): string => `${r.name}/${r.type}`;
  const records = yield* diff(yield* keyed(before.records, recordKey), yield* keyed(after.records, recordKey));
  const datacenters = yield* diff(yield* keyed(before.datacenters, (d) => d.name), yield* keyed(after.datacenters, (d) => d.name));
  const endpoints = yield* diff(yield* endpointsOf(before), yield* endpointsOf(after));
  return { zones, records, datacenters, endpoints };
}

/** True when nothing was added, removed or changed. */
export function isEmptySummary(s: ReloadSummary): boolean {
  return [s.zones, s.records, s.datacenters, s.endpoints].every((c) => c.added.length + c.removed.length + c.changed.length === 0);
}

/** Names of one list a log line carries; the rest are counted (`POST /reload` answers them all). */
export const LOGGED_NAMES = 20;

/**
 * A change set as a log line carries it: each list cut to its first {@link LOGGED_NAMES} names,
 * and `omitted` counting what was cut, per list, when anything was. Every list of every set is
 * cut: a log line must stay short whatever changed — 20,000 changed records made a 389 KB line,
 * which journald splits (its `LineMax` is 48 KiB) and which took the event loop 5 ms to
 * serialise.
 */
export type LoggedChangeSet = ChangeSet & { readonly omitted?: { readonly added: number; readonly removed: number; readonly changed: number } };

/** {@link ReloadSummary} for the `configuration reloaded` log line ({@link LoggedChangeSet}). */
export function loggedSummary(s: ReloadSummary): Record<keyof ReloadSummary, LoggedChangeSet> {
  const cut = (c: ChangeSet): LoggedChangeSet => {
    const long = c.added.length > LOGGED_NAMES || c.removed.length > LOGGED_NAMES || c.changed.length > LOGGED_NAMES;
    if (!long) return c;
    const omitted = (l: readonly string[]): number => Math.max(0, l.length - LOGGED_NAMES);
    return {
      added: c.added.slice(0, LOGGED_NAMES),
      removed: c.removed.slice(0, LOGGED_NAMES),
      changed: c.changed.slice(0, LOGGED_NAMES),
      omitted: { added: omitted(c.added), removed: omitted(c.removed), changed: omitted(c.changed) },
    };
  };
  return { zones: cut(s.zones), records: cut(s.records), datacenters: cut(s.datacenters), endpoints: cut(s.endpoints) };
}

/** Each zone's text by name: its settings, then its static records one by one (a zone may hold thousands). */
function* zonesOf(config: Config): Steps<Map<string, string>> {
  const out = new Map<string, string>();
  let n = 0;
  for (const { records, ...settings } of config.zones) {
    const parts = [JSON.stringify(settings)];
    for (const r of records) {
      parts.push(JSON.stringify(r));
      if (++n % SUMMARY_STEP === 0) yield;
    }
    out.set(settings.name, parts.join('\n'));
  }
  return out;
}

function* endpointsOf(config: Config): Steps<Map<string, string>> {
  const out = new Map<string, string>();
  let n = 0;
  for (const s of config.services) {
    for (const e of s.endpoints) {
      out.set(endpointKey(s.name, e), JSON.stringify(e));
      if (++n % SUMMARY_STEP === 0) yield;
    }
  }
  return out;
}

function* keyed<T>(items: readonly T[], key: (t: T) => string): Steps<Map<string, string>> {
  const out = new Map<string, string>();
  let n = 0;
  for (const t of items) {
    out.set(key(t), JSON.stringify(t));
    if (++n % SUMMARY_STEP === 0) yield;
  }
  return out;
}

function* diff(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): Steps<ChangeSet> {
  const added: string[] = [];
  const changed: string[] = [];
  let n = 0;
  for (const [k, v] of after) {
    const old = before.get(k);
    if (old === undefined) added.push(k);
    else if (old !== v) changed.push(k);
    if (++n % SUMMARY_STEP === 0) yield;
  }
  const removed = [...before.keys()].filter((k) => !after.has(k));
  return { added, removed, changed };
}

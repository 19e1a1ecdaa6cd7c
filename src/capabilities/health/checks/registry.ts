import { z } from 'zod';
import type { CheckRun } from './check.js';
import { kindType, type CheckFiles, type CheckKind, type MonitorBase } from './checkKind.js';
import { dnsCheckKind } from './dnsCheck.js';
import { grpcCheckKind } from './grpcCheck.js';
import { httpCheckKind, httpsCheckKind } from './httpCheck.js';
import { tcpCheckKind } from './tcpCheck.js';

/** A list of check kinds: at least one, each `type` once. */
export type CheckKindList = readonly [CheckKind, ...CheckKind[]];

/**
 * The check kinds of the engine, one line each. Their order is the order of the monitor `type`
 * union in the configuration schema (and in `gslbd schema`). Everything else about monitors —
 * the union, the check dispatch, default ports, reference checks — derives from a list like this
 * one; tests pass their own list to the functions that take one.
 */
export const CHECK_KINDS = [tcpCheckKind, httpCheckKind, httpsCheckKind, dnsCheckKind, grpcCheckKind] as const satisfies CheckKindList;

/** The monitor configuration of the engine's check kinds (a union discriminated by `type`). */
export type MonitorConfig = z.output<(typeof CHECK_KINDS)[number]['schema']>;

/** The schema of one monitor of any kind of `kinds`, discriminated by `type`, members in list order. */
export type MonitorUnionSchema<K extends CheckKindList> = z.ZodDiscriminatedUnion<{ -readonly [I in keyof K]: K[I]['schema'] }, 'type'>;

/** The monitor schema of `kinds`: a union discriminated by `type`, its members in list order. */
export function monitorSchemaOf<const K extends CheckKindList>(kinds: K): MonitorUnionSchema<K> {
  return z.discriminatedUnion('type', kinds.map((k) => k.schema) as unknown as { -readonly [I in keyof K]: K[I]['schema'] });
}

/** The kind in `kinds` whose monitors have `type`; undefined when none has. */
export function findKind(type: string, kinds: CheckKindList = CHECK_KINDS): CheckKind | undefined {
  return kinds.find((kind) => kindType(kind) === type);
}

/**
 * The kind of `monitor` in `kinds`.
 * @throws RangeError when no kind has the monitor's `type` (a monitor not validated by `monitorSchemaOf(kinds)`).
 */
export function kindOf(monitor: MonitorBase, kinds: CheckKindList = CHECK_KINDS): CheckKind {
  const kind = findKind(monitor.type, kinds);
  if (!kind) throw new RangeError(`no check kind "${monitor.type}"`);
  return kind;
}

/** The port a monitor checks when the target does not name one: its own, else its kind's (undefined: none). */
export function defaultPort(monitor: MonitorBase, kinds: CheckKindList = CHECK_KINDS): number | undefined {
  return monitor.port ?? kindOf(monitor, kinds).defaultPort;
}

/**
 * The check function of a monitor, from its kind in `kinds` (what it sends and how is the kind's:
 * see its file). `files`: the bytes of the files its kind reads (`files` of {@link CheckKind}), by
 * field.
 * @throws RangeError as {@link kindOf}.
 */
export function checkFor(monitor: MonitorBase, files: CheckFiles = {}, kinds: CheckKindList = CHECK_KINDS): CheckRun {
  // The monitor was validated by its kind's schema (the union dispatches on `type`).
  return kindOf(monitor, kinds).check(monitor as never, files);
}

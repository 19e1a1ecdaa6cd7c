import { z } from 'zod';
import { portSchema } from '../../../core/config/fieldSchemas.js';
import type { CheckRun } from './check.js';

/**
 * The contract of a check kind (a monitor `type`, such as tcp or http): its configuration
 * schema, its default port, the files it reads and its check function, in one file per kind,
 * listed once in `registry.ts` (src/capabilities/health/README.md, "Adding a check kind").
 * Imports no check kind.
 */

/** A monitor's name: what endpoints and check points refer to it by. */
export const monitorNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'use letters, digits, ".", "_" and "-"');

/**
 * Fields every monitor has, whatever its kind: spread into each kind's schema after its `type`
 * (`z.strictObject({ type: z.literal('tcp'), ...monitorCommon })`). Times in milliseconds.
 */
export const monitorCommon = {
  name: monitorNameSchema.describe('Name of the monitor, which endpoints and check points refer to it by.'),
  /** Time between two checks of one target (ms). */
  intervalMs: z.number().int().min(10).max(3_600_000).default(5000).describe('Time in ms between two checks of one target; default 5000.'),
  /** A check not finished after this long fails (ms); at most the interval. */
  timeoutMs: z.number().int().min(1).max(600_000).default(2000).describe('A check not finished after this many ms fails; at most intervalMs; default 2000.'),
  /** Consecutive successes that bring a down target up. */
  rise: z.number().int().min(1).max(100).default(2).describe('Consecutive successes that bring a down target up; default 2.'),
  /** Consecutive failures that bring an up target down. */
  fall: z.number().int().min(1).max(100).default(3).describe('Consecutive failures that bring an up target down; default 3.'),
  /** Each interval is stretched or shrunk by up to this fraction at random, so checks do not align. */
  jitter: z.number().min(0).max(0.5).default(0.1).describe('Fraction (0–0.5) by which each interval is stretched or shrunk at random; default 0.1.'),
  /** Port checked when the endpoint's `check.port` does not say (else the kind's default: http 80, https 443, dns 53; some kinds, tcp among them, have none). */
  port: portSchema
    .optional()
    .describe("Port checked when the endpoint's check.port does not say; default the kind's (http 80, https 443, dns 53; tcp and grpc none)."),
};

/**
 * What the health capability reads of any monitor (the output of {@link monitorCommon} and the
 * kind's `type`); only the monitor's kind reads its other fields.
 */
export interface MonitorBase {
  readonly type: string;
  readonly name: string;
  /** ms */
  readonly intervalMs: number;
  /** ms */
  readonly timeoutMs: number;
  readonly rise: number;
  readonly fall: number;
  /** Fraction of the interval, 0–0.5. */
  readonly jitter: number;
  readonly port?: number | undefined;
}

/**
 * The schema of one kind's monitors: a strict zod object whose `type` is a string literal (the
 * discriminator of the monitor union) and which spreads {@link monitorCommon}.
 */
export type MonitorSchema = z.ZodType<MonitorBase> & z.core.$ZodTypeDiscriminable & { readonly shape: { readonly type: z.ZodLiteral<string> } };

/**
 * The bytes of the files a monitor names, by field (`caFile` → its PEM), read relative to the
 * configuration file at every configure; a field the monitor leaves unset is absent.
 */
export type CheckFiles = Readonly<Record<string, Buffer | undefined>>;

/** One check kind. `S`: its monitor schema. */
export interface CheckKind<S extends MonitorSchema = MonitorSchema> {
  /** The schema of its monitors; its `type` literal names the kind. */
  readonly schema: S;
  /** The port checked when neither the target nor the monitor names one; undefined: a port must be set. */
  readonly defaultPort: number | undefined;
  /**
   * Fields of its monitors that name files (relative to the configuration file) the check needs:
   * read at every configure (an unreadable file refuses the configuration, naming the field) and
   * passed to {@link CheckKind.check} by field name.
   */
  readonly files?: readonly string[];
  /**
   * The check function of a monitor of this kind (validated by `schema`): see {@link CheckRun}.
   * Called once per monitor and configuration; must not throw for a valid monitor.
   */
  check(monitor: z.output<S>, files: CheckFiles): CheckRun;
}

/** Declares a check kind, inferring its monitor type from `kind.schema` (no runtime effect). */
export function checkKind<S extends MonitorSchema>(kind: CheckKind<S>): CheckKind<S> {
  return kind;
}

/** The `type` value of a kind's monitors. */
export function kindType(kind: CheckKind): string {
  return kind.schema.shape.type.value;
}

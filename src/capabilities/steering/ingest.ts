import { z } from 'zod';
import { formatPath } from '../../core/config/load.js';
import { parseCidr } from '../../core/net/ipAddress.js';
import { clientNetworkKey, type MetricSource } from '../../core/views/metricView.js';
import { METRIC_CATALOG, metricId, type MetricSpec } from './catalog.js';
import type { MetricStore, MetricWrite } from './metricStore.js';
import { mosFromPath } from './mos.js';

/** Largest number of samples one push may carry. */
export const MAX_SAMPLES_PER_BATCH = 10_000;

/** One problem with a pushed batch, by path (`samples[2].cpu`). */
export interface IngestProblem {
  readonly path: string;
  readonly message: string;
}

/**
 * Outcome of one push: accepted (every sample applied), or rejected as a whole with HTTP status
 * 400 (malformed: wrong shape, NaN, negative, out of range, unknown key) or 422 (well formed but
 * naming a data center or service the configuration does not have).
 */
export type IngestOutcome =
  { readonly ok: true; readonly accepted: number } | { readonly ok: false; readonly status: 400 | 422; readonly problems: readonly IngestProblem[] };

function metricField(spec: MetricSpec) {
  const message = `must be a ${spec.integer ? 'whole ' : ''}number from ${spec.min} to ${spec.max === Number.MAX_VALUE ? 'any' : spec.max} (${spec.unit})`;
  return z
    .number({ error: message })
    .refine((v) => v >= spec.min && v <= spec.max && (!spec.integer || Number.isInteger(v)), { error: message })
    .optional();
}

const statusField = z.enum(['up', 'down'], { error: 'must be "up" or "down"' }).optional();
const nameField = z.string({ error: 'must be a name' }).min(1, { error: 'must be a name' });

function metricFields(source: MetricSource) {
  const fields: Record<string, z.ZodType> = {};
  for (const spec of METRIC_CATALOG[source]) fields[spec.name] = spec.name === 'status' ? statusField : metricField(spec);
  return fields;
}

const hasMetric =
  (source: MetricSource, extra: readonly string[] = []) =>
  (s: Record<string, unknown>) =>
    METRIC_CATALOG[source].some((m) => s[m.name] !== undefined) || extra.some((k) => s[k] !== undefined);

const noMetricMessage = (source: MetricSource) => `a sample carries at least one metric (${METRIC_CATALOG[source].map((m) => m.name).join(', ')})`;

/** Host sample: `{ dc, cpu?, mem?, bw?, status?, packetLoss? }`. */
const hostSampleSchema = z.strictObject({ dc: nameField, ...metricFields('host') }).refine(hasMetric('host'), { error: noMetricMessage('host') });

/** Service sample: `{ service, dc, cpu?, mem?, bw?, request?, connection?, session_new?, status?, healthyBackends? }`. */
const serviceSampleSchema = z
  .strictObject({ service: nameField, dc: nameField, ...metricFields('service') })
  .refine(hasMetric('service'), { error: noMetricMessage('service') });

const pathField = (name: string) =>
  z
    .number({ error: `must be a number ≥ 0 (${name})` })
    .min(0, { error: `must be a number ≥ 0 (${name})` })
    .optional();

/**
 * Client sample: `{ network, dc, hops?, mos?, packetLoss?, ttl?, latencyMs?, jitterMs? }`.
 * `network` is an address or prefix inside the client network. MOS comes either as `mos` or
 * from `latencyMs` + `jitterMs` + `packetLoss` (the E-model, mos.ts), not both.
 */
const clientSampleSchema = z
  .strictObject({ network: nameField, dc: nameField, ...metricFields('client'), latencyMs: pathField('ms'), jitterMs: pathField('ms') })
  .refine(hasMetric('client', ['latencyMs', 'jitterMs']), { error: `${noMetricMessage('client')}, or latencyMs + jitterMs + packetLoss` })
  .superRefine((sample, ctx) => {
    const s = sample as typeof sample & { mos?: number; packetLoss?: number };
    const raw = s.latencyMs !== undefined || s.jitterMs !== undefined;
    if (raw && s.mos !== undefined) ctx.addIssue({ code: 'custom', path: ['mos'], message: 'give "mos" or "latencyMs"/"jitterMs", not both' });
    if (raw && (s.latencyMs === undefined || s.jitterMs === undefined || s.packetLoss === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [s.latencyMs === undefined ? 'latencyMs' : s.jitterMs === undefined ? 'jitterMs' : 'packetLoss'],
        message: 'MOS from a path needs latencyMs, jitterMs and packetLoss together',
      });
    }
  });

const batchOf = <T extends z.ZodType>(sample: T) =>
  z.strictObject(
    {
      samples: z
        .array(sample, { error: 'must be a list of samples' })
        .min(1, { error: 'must hold at least one sample' })
        .max(MAX_SAMPLES_PER_BATCH, { error: `must hold at most ${MAX_SAMPLES_PER_BATCH} samples` }),
    },
    { error: 'the body must be a JSON object {"samples": [...]}' },
  );

/** Request body schemas of the push routes, by source (also used by `gslbd schema`-style docs). */
export const pushBodySchemas = {
  host: batchOf(hostSampleSchema),
  service: batchOf(serviceSampleSchema),
  client: batchOf(clientSampleSchema),
} as const;

/**
 * Where a validated batch goes: the metric store itself, or the state store the metric store
 * watches. `origin` names who reported it (an agent's name; absent for a push with the admin token).
 */
export type BatchSink = (source: MetricSource, writes: readonly MetricWrite[], nowMs: number, origin?: string) => void;

/** A batch that passed validation, not yet applied: its writes, or every problem with it (400 malformed, 422 unknown reference). */
export type ValidatedBatch =
  | { readonly ok: true; readonly writes: readonly MetricWrite[] }
  | { readonly ok: false; readonly status: 400 | 422; readonly problems: readonly IngestProblem[] };

/**
 * Validates a pushed batch (the parsed JSON body) and applies it to the store at `nowMs`, all
 * or nothing. NaN cannot be written in JSON and `1e999` parses to Infinity, which is rejected
 * like every non-finite, negative or out-of-range value.
 * `apply` receives the batch once it is valid (default: the metric store's `apply`), with `origin`
 * (who reported it, shown by /explain).
 */
export function ingestBatch(
  store: MetricStore,
  source: MetricSource,
  body: unknown,
  nowMs: number,
  apply: BatchSink = (src, writes, at, origin) => store.apply(src, writes, at, origin),
  origin?: string,
): IngestOutcome {
  const valid = validateBatch(store, source, body);
  if (!valid.ok) return valid;
  apply(source, valid.writes, nowMs, origin);
  return { ok: true, accepted: valid.writes.length };
}

/**
 * The push API's validation alone (what {@link ingestBatch} applies): the batch's writes when
 * every sample is valid and names a known data center and service, else every problem with its
 * path. Changes nothing.
 */
export function validateBatch(store: MetricStore, source: MetricSource, body: unknown): ValidatedBatch {
  const parsed = pushBodySchemas[source].safeParse(body);
  if (!parsed.success) {
    return { ok: false, status: 400, problems: parsed.error.issues.map((i) => ({ path: formatPath(i.path) || '(body)', message: describe(i) })) };
  }
  const problems: IngestProblem[] = [];
  const writes: MetricWrite[] = [];
  parsed.data.samples.forEach((raw, i) => {
    const sample = raw as Record<string, unknown> & { dc: string };
    const at = (key: string): string => formatPath(['samples', i, key]);
    if (!store.hasDataCenter(sample.dc)) problems.push({ path: at('dc'), message: `unknown data center "${sample.dc}"` });
    let subject: string | number = '';
    if (source === 'service') {
      subject = sample.service as string;
      if (!store.hasService(sample.service as string)) problems.push({ path: at('service'), message: `unknown service "${subject}"` });
    } else if (source === 'client') {
      const network = clientSubject(store, sample.network as string);
      if (typeof network === 'object') {
        problems.push({ path: at('network'), message: network.error });
        return;
      }
      subject = network;
    }
    writes.push({ subject, dc: sample.dc, values: values(source, sample) });
  });
  if (problems.length > 0) {
    const malformed = problems.some((p) => p.path.endsWith('.network'));
    return { ok: false, status: malformed ? 400 : 422, problems };
  }
  return { ok: true, writes };
}

/** The client network key of an address or prefix, or why it cannot be one. */
function clientSubject(store: MetricStore, text: string): string | number | { error: string } {
  let prefix;
  try {
    prefix = parseCidr(text);
  } catch (e) {
    return { error: (e as Error).message };
  }
  const want = prefix.address.family === 4 ? store.clientNetworkPrefix.ipv4 : store.clientNetworkPrefix.ipv6;
  if (prefix.prefix < want) {
    return { error: `"${text}" is wider than a client network (/${want}); push one sample per /${want}` };
  }
  return clientNetworkKey(prefix.address, store.clientNetworkPrefix);
}

function values(source: MetricSource, sample: Record<string, unknown>): (number | undefined)[] {
  const out = METRIC_CATALOG[source].map((m) => {
    const v = sample[m.name];
    if (v === undefined) return undefined;
    return m.name === 'status' ? (v === 'up' ? 1 : 0) : (v as number);
  });
  if (source === 'client' && sample.latencyMs !== undefined) {
    out[metricId('client', 'mos')] = mosFromPath(sample.latencyMs as number, sample.jitterMs as number, sample.packetLoss as number);
  }
  return out;
}

function describe(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  return issue.message;
}

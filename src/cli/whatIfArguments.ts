import type { z } from 'zod';
import type { whatIfSchema } from '../admin/whatIfSchema.js';

/** The request body `--what-if` arguments make (validated by the engine, `src/admin/whatIfSchema.ts`). */
export type WhatIfRequest = z.input<typeof whatIfSchema>;

/** How each `--what-if` argument is written (shown by `--help`). */
export const WHAT_IF_FORMS = [
  'down=DC | down=SERVICE/DC/ADDRESS   a data center or an endpoint down (as a force-down override)',
  'up=DC | up=SERVICE/DC/ADDRESS       a data center or an endpoint up (as a force-up override)',
  'metric=host/DC/NAME=VALUE           a host metric of a data center (cpu, mem, bw, status, packetLoss)',
  'metric=service/SERVICE/DC/NAME=VALUE  a service metric of a service in a data center',
  'metric=client/ADDRESS/DC/NAME=VALUE   a client metric of the client network ADDRESS is in',
  "config=FILE                         a candidate configuration (relative to the running one's directory)",
] as const;

/**
 * Turns `--what-if` arguments into a hypothesis for `POST /explain/what-if` and
 * `POST /what-if/replay`; names are checked by the engine. A `status` metric takes `up` or `down`.
 * @throws Error naming the argument that is not one of {@link WHAT_IF_FORMS}.
 */
export function parseWhatIf(changes: readonly string[]): WhatIfRequest {
  const down = { dcs: [] as string[], endpoints: [] as string[] };
  const up = { dcs: [] as string[], endpoints: [] as string[] };
  const metrics: NonNullable<WhatIfRequest['metrics']> = [];
  let config: string | undefined;
  for (const change of changes) {
    const eq = change.indexOf('=');
    const kind = eq < 0 ? change : change.slice(0, eq);
    const value = eq < 0 ? '' : change.slice(eq + 1);
    if (value === '') throw new Error(`--what-if ${change}: expected KIND=VALUE`);
    switch (kind) {
      case 'down':
      case 'up': {
        const target = kind === 'down' ? down : up;
        (value.includes('/') ? target.endpoints : target.dcs).push(value);
        break;
      }
      case 'metric':
        metrics.push(parseMetric(change, value));
        break;
      case 'config':
        config = value;
        break;
      default:
        throw new Error(`--what-if ${change}: unknown kind "${kind}" (down, up, metric, config)`);
    }
  }
  return { down, up, metrics, ...(config !== undefined ? { config } : {}) };
}

function parseMetric(change: string, spec: string): NonNullable<WhatIfRequest['metrics']>[number] {
  const eq = spec.lastIndexOf('=');
  const bad = (): Error => new Error(`--what-if ${change}: expected metric=host/DC/NAME=VALUE, service/SERVICE/DC/NAME=VALUE or client/ADDRESS/DC/NAME=VALUE`);
  if (eq < 0) throw bad();
  const raw = spec.slice(eq + 1);
  const value = raw === 'up' ? 1 : raw === 'down' ? 0 : Number(raw);
  if (raw === '' || !Number.isFinite(value)) throw bad();
  const parts = spec.slice(0, eq).split('/');
  switch (parts[0] ?? '') {
    case 'host':
      if (parts.length !== 3) throw bad();
      return { source: 'host', dc: parts[1]!, metric: parts[2]!, value };
    case 'service':
      if (parts.length !== 4) throw bad();
      return { source: 'service', service: parts[1]!, dc: parts[2]!, metric: parts[3]!, value };
    case 'client':
      if (parts.length !== 4) throw bad();
      return { source: 'client', client: parts[1]!, dc: parts[2]!, metric: parts[3]!, value };
    default:
      throw bad();
  }
}

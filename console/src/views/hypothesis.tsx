import { useState } from 'preact/hooks';

/** A hypothesis as `POST /explain/what-if` and `/what-if/replay` take it (`src/admin/whatIfSchema.ts`). */
export interface Hypothesis {
  down: { dcs: string[]; endpoints: string[] };
  config?: string;
}

/** Whether a hypothesis says anything. */
export function isEmpty(h: Hypothesis): boolean {
  return h.down.dcs.length + h.down.endpoints.length === 0 && h.config === undefined;
}

/**
 * The hypothesis fields of a form: data centers down (one box each), endpoints down
 * (`service/dc/address`, comma-separated) and a candidate configuration file (relative to the
 * running configuration's directory). `prefix` keeps the ids of two forms apart.
 */
export function useHypothesis(prefix: string, dataCenters: readonly string[]) {
  const [dcs, setDcs] = useState<string[]>([]);
  const [endpoints, setEndpoints] = useState('');
  const [config, setConfig] = useState('');
  const hypothesis: Hypothesis = {
    down: {
      dcs,
      endpoints: endpoints
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    },
    ...(config.trim() !== '' ? { config: config.trim() } : {}),
  };
  const fields = (
    <fieldset>
      <legend>What if</legend>
      {dataCenters.map((dc) => (
        <label key={dc}>
          <input
            type="checkbox"
            name={`${prefix}-down`}
            value={dc}
            checked={dcs.includes(dc)}
            onChange={(e) => setDcs((e.target as HTMLInputElement).checked ? [...dcs, dc] : dcs.filter((d) => d !== dc))}
          />
          {dc} down
        </label>
      ))}
      <label for={`${prefix}-endpoints`}>endpoints down</label>
      <input
        id={`${prefix}-endpoints`}
        value={endpoints}
        placeholder="web/east/192.0.2.1, …"
        onInput={(e) => setEndpoints((e.target as HTMLInputElement).value)}
      />
      <label for={`${prefix}-config`}>candidate config file</label>
      <input id={`${prefix}-config`} value={config} placeholder="candidate.yaml" onInput={(e) => setConfig((e.target as HTMLInputElement).value)} />
    </fieldset>
  );
  return { hypothesis, fields };
}

import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));

/**
 * The engine configurations under `examples/`: YAML and JSON files, paths relative to
 * `examples/` (`quickstart.yaml`, `powerdns/gslbd.yaml`), sorted. `examples/agent/` is left out:
 * it holds `gslbd agent` and Prometheus configurations (test/e2e/agentExamples.test.ts tests those);
 * so is `examples/monitoring/`: a Grafana dashboard and Prometheus rules (test/examples/monitoring.test.ts).
 */
export function engineExampleFiles(): string[] {
  return (readdirSync(EXAMPLES, { recursive: true }) as string[])
    .filter((f) => /\.(ya?ml|json)$/.test(f) && !f.startsWith('agent/') && !f.startsWith('monitoring/'))
    .sort();
}

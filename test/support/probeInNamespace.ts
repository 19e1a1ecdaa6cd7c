import { once } from 'node:events';
import type { ProbeResultReport } from '../../src/core/contracts/agentApi.js';
import type { TestNetwork } from './routedPath.js';

/**
 * Probes `target` with the agent's prober from `path`'s agent namespace (`probeProcess.ts`, compiled,
 * in `dist/`) with the `probes` configuration `config` (raw, before defaults).
 * @throws Error (with the prober's stderr) when it exits non-zero.
 */
export async function probeInNamespace(path: TestNetwork, config: Record<string, unknown>, target: string): Promise<ProbeResultReport[]> {
  const child = path.run(path.agentNs, 'dist/test/support/probeProcess.js', [JSON.stringify(config), target]);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`the prober exited ${code}: ${err}`);
  return JSON.parse(out) as ProbeResultReport[];
}

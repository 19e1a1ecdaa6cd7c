import { once } from 'node:events';
import type { ProbeResultReport } from '../../src/core/contracts/agentApi.js';
import type { TestNetwork } from './routedPath.js';

/** How {@link probeInNamespace} runs the prober. */
export interface ProbeRunOptions {
  /** Blocks the prober's event loop this long out of every `stallMs + 5` ms while it probes (`probeProcess.ts`). */
  readonly stallMs?: number;
  /** A command the prober runs under inside the namespace, e.g. `setpriv` to drop root (see `TestNetwork.run`). */
  readonly wrapper?: readonly string[];
}

/**
 * Probes `target` with the agent's prober from `path`'s agent namespace (`probeProcess.ts`, compiled,
 * in `dist/`) with the `probes` configuration `config` (raw, before defaults).
 * @throws Error (with the prober's stderr) when it exits non-zero.
 */
export async function probeInNamespace(
  path: TestNetwork,
  config: Record<string, unknown>,
  target: string,
  options: ProbeRunOptions = {},
): Promise<ProbeResultReport[]> {
  const child = path.run(path.agentNs, 'dist/test/support/probeProcess.js', [JSON.stringify(config), target, String(options.stallMs ?? 0)], options.wrapper);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`the prober exited ${code}: ${err}`);
  return JSON.parse(out) as ProbeResultReport[];
}

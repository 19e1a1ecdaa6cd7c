import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import type { ExecutionContext } from 'ava';
import { CLI } from './engineProcess.js';

/** The `gslbd up` log line's listeners (`host:port`; `redirect` a URL) and the process's pid. */
export interface UpLine {
  readonly pid: number;
  readonly dns: string[];
  readonly admin: string;
  readonly redirect?: string;
}

/** An engine started by {@link startReplaceableEngine}. */
export interface ReplaceableEngine {
  /** The first process's `gslbd up` line. */
  readonly up: UpLine;
  /** Everything the engine and its replacements wrote to stdout and stderr so far. */
  log(): string;
  /** Pids of the processes that logged `gslbd up`, in order (the first, then each replacement). */
  ups(): number[];
}

/**
 * `program serve configFile` as a process group of its own, for the replace tests: a replacement
 * is the engine's child, so the test's teardown kills the whole group (SIGKILL) and then removes
 * `dir`. Resolves once the first process logged `gslbd up`.
 *
 * @param children - the test's live children (its exit handler kills them); the engine joins it
 * @throws Error with the log when the engine does not come up within 60 s
 */
export async function startReplaceableEngine(
  t: ExecutionContext,
  options: { configFile: string; dir: string; program?: string; children?: Set<ChildProcess> },
): Promise<ReplaceableEngine> {
  const { configFile, dir, program = CLI, children } = options;
  const child = spawn(process.execPath, [program, 'serve', configFile], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children?.add(child);
  t.teardown(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
    children?.delete(child);
    rmSync(dir, { recursive: true, force: true });
  });
  let log = '';
  child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  const upLines = (): UpLine[] => [...log.matchAll(/^\{.*"msg":"gslbd up".*$/gm)].map((m) => JSON.parse(m[0]) as UpLine);
  for (let i = 0; i < 2400 && upLines().length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  const up = upLines()[0];
  if (!up) throw new Error(`the engine did not come up:\n${log}`);
  return { up, log: () => log, ups: () => upLines().map((u) => u.pid) };
}

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, REPO_ROOT, type LogLine } from './engineProcess.js';
import { waitFor } from './waitFor.js';

/** A running `gslbd agent` process. */
export interface AgentProcess {
  readonly dir: string;
  readonly configFile: string;
  /** Its `/metrics` port, when the configuration has `metrics: { port: 0 }`. */
  readonly metricsPort: number | undefined;
  logs(): readonly LogLine[];
  stderr(): string;
  /** Resolves with the first log line matching, waiting up to `timeoutMs`. @throws Error on timeout or exit. */
  waitForLog(match: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** The agent's Prometheus exposition (needs `metricsPort`). */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

const agents = new Set<AgentProcess>();
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/** Stops every agent this worker started (`test.after.always(stopAllAgents)`). */
export async function stopAllAgents(): Promise<void> {
  await Promise.all([...agents].map((a) => a.stop()));
}

/**
 * Writes `configText` (and `files`) into a temporary directory and runs `gslbd agent` on it —
 * inside a network namespace when `netns` is given (`ip netns exec`) — until `gslbd agent up`.
 * @throws Error when it exits or stays silent for `startTimeoutMs` (default 30 s).
 */
export async function startAgentProcess(
  configText: string,
  options: { readonly files?: Readonly<Record<string, string>>; readonly netns?: string; readonly startTimeoutMs?: number } = {},
): Promise<AgentProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-agent-'));
  for (const [name, text] of Object.entries(options.files ?? {})) writeFileSync(join(dir, name), text);
  const configFile = join(dir, 'agent.yaml');
  writeFileSync(configFile, configText);
  const argv = [process.execPath, CLI, 'agent', configFile];
  const child = options.netns ? spawn('ip', ['netns', 'exec', options.netns, ...argv], { cwd: REPO_ROOT }) : spawn(argv[0]!, argv.slice(1), { cwd: REPO_ROOT });
  children.add(child);
  const logs: LogLine[] = [];
  let stderr = '';
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (line.trim() === '') continue;
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        logs.push({ msg: line, level: 0 });
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.once('exit', () => children.delete(child));
  const waitForLog = async (match: (l: LogLine) => boolean, timeoutMs = 10_000): Promise<LogLine> => {
    let found: LogLine | undefined;
    await waitFor(
      'an agent log line',
      () => {
        found = logs.find(match);
        if (!found && child.exitCode !== null) throw new Error(`gslbd agent exited ${child.exitCode}: ${stderr}`);
        return found !== undefined;
      },
      timeoutMs,
      { detail: () => `stderr: ${stderr}\nlast logs: ${JSON.stringify(logs.slice(-5))}` },
    );
    return found!;
  };
  let handle: AgentProcess | undefined;
  const stop = async (): Promise<void> => {
    if (handle) agents.delete(handle);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  let up: LogLine;
  try {
    up = await waitForLog((l) => l.msg === 'gslbd agent up', options.startTimeoutMs ?? 30_000);
  } catch (e) {
    await stop();
    throw e;
  }
  const metricsPort = typeof up.metricsPort === 'number' ? up.metricsPort : undefined;
  handle = {
    dir,
    configFile,
    metricsPort,
    logs: () => logs,
    stderr: () => stderr,
    waitForLog,
    async metrics() {
      if (metricsPort === undefined) throw new Error('the agent has no metrics port');
      return (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    },
    stop,
  };
  agents.add(handle);
  return handle;
}

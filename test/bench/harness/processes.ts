import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

/** A child process started by the benchmark. */
export interface BenchProcess {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** File receiving the child's stdout and stderr. */
  readonly logFile: string;
  /** Resolves with the exit code (or the signal name) when the process ends. */
  readonly exited: Promise<number | string>;
  /** Last `lines` lines of the child's output, for error messages. */
  tail(lines?: number): string;
}

/** How to start a child. */
export interface SpawnOptions {
  /** Pin the process (and every thread it starts) to this CPU with `taskset -c`. */
  readonly cpu?: number;
  /** File for stdout and stderr (appended). */
  readonly logFile: string;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Starts benchmark processes (servers, load generators) and makes sure none outlives the
 * benchmark: `stopAll` on a group's end or failure, `killAllNow` from the runner's `exit` and
 * signal handlers. Children stay in the runner's process group, so a terminal's Ctrl-C reaches
 * them at once even while the runner is busy in synchronous work (loading location data); a
 * runner killed with SIGKILL cannot clean up, and its children must then be stopped by hand.
 */
export class ProcessSupervisor {
  private readonly running = new Set<BenchProcess>();

  /**
   * Starts `command args`, pinned with `taskset -c cpu` when `cpu` is given (taskset execs the
   * command, so the pid is the command's own).
   * @throws Error when the process cannot be started (missing binary).
   */
  start(name: string, command: string, args: readonly string[], options: SpawnOptions): BenchProcess {
    const argv = options.cpu === undefined ? [command, ...args] : ['taskset', '-c', String(options.cpu), command, ...args];
    const fd = openSync(options.logFile, 'a');
    let child: ChildProcess;
    try {
      child = spawn(argv[0]!, argv.slice(1), { cwd: options.cwd, env: options.env, stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    const exited = new Promise<number | string>((resolve) => {
      child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
      child.once('error', (e) => resolve(`spawn error: ${e.message}`));
    });
    if (child.pid === undefined) throw new Error(`cannot start ${name} (${argv.join(' ')})`);
    const proc: BenchProcess = {
      name,
      pid: child.pid,
      child,
      logFile: options.logFile,
      exited,
      tail: (lines = 20) => tailOf(options.logFile, lines),
    };
    this.running.add(proc);
    void exited.then(() => this.running.delete(proc));
    return proc;
  }

  /**
   * Runs a command to completion (for load generators), killing it when `signal` aborts.
   * @returns exit code and the output file's text.
   */
  async runToEnd(
    name: string,
    command: string,
    args: readonly string[],
    options: SpawnOptions,
    signal: AbortSignal,
  ): Promise<{ code: number | string; output: string }> {
    const proc = this.start(name, command, args, options);
    const onAbort = (): void => void this.stop(proc);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const code = await proc.exited;
      return { code, output: readFileSync(options.logFile, 'utf8') };
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * SIGTERM, then SIGKILL after `graceMs` (long enough for a server to write a
   * CPU profile); resolves when the process has exited.
   */
  async stop(proc: BenchProcess, graceMs = 10_000): Promise<void> {
    if (!this.running.has(proc)) return;
    signal(proc.pid, 'SIGTERM');
    const timer = setTimeout(() => signal(proc.pid, 'SIGKILL'), graceMs);
    await proc.exited;
    clearTimeout(timer);
  }

  /** Stops every process this supervisor started and that still runs. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.running].map((p) => this.stop(p)));
  }

  /** SIGKILLs every running process at once (synchronous: safe in `exit` handlers). */
  killAllNow(): void {
    for (const p of this.running) signal(p.pid, 'SIGKILL');
    this.running.clear();
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

function tailOf(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

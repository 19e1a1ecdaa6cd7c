import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Starts the real engine process (`node dist/src/cli/main.js serve CONFIG`) for end-to-end tests,
 * with its configuration in a fresh temporary directory. `npm test` compiles with `tsc` first, so
 * `dist/` matches the sources.
 *
 * Listeners configured with `port: 0` get free ports from the system; the helper reads the bound
 * ports from the `gslbd up` log line, so tests never race for a port number.
 */

/** Repository root (two levels above this file, in `test/support/` or `dist/test/support/`). */
export const REPO_ROOT = resolve(
  fileURLToPath(new URL('.', import.meta.url)),
  existsSync(fileURLToPath(new URL('../../package.json', import.meta.url))) ? '../..' : '../../..',
);

/** The compiled CLI the tests run. */
export const CLI = join(REPO_ROOT, 'dist/src/cli/main.js');

/** The bundled CLI (bundle/build.mjs, run by `npm run build`): what the package's `gslbd` command runs. */
export const BUNDLED_CLI = join(REPO_ROOT, 'dist/bundle/cli/gslbd.js');

/** One JSON log line of the engine (pino): `msg`, `level` (30 info, 40 warn, 50 error) and fields. */
export interface LogLine {
  readonly msg: string;
  readonly level: number;
  readonly [field: string]: unknown;
}

/** A DNS listener as bound by the engine. */
export interface BoundListener {
  readonly address: string;
  readonly port: number;
}

/** A running engine process. */
export interface EngineProcess {
  /** Temporary directory holding the configuration and extra files; removed by {@link stop}. */
  readonly dir: string;
  readonly configFile: string;
  readonly pid: number;
  /** Every DNS listener, in configuration order. */
  readonly dns: readonly BoundListener[];
  /** The first DNS listener (most tests need one). */
  readonly server: BoundListener;
  /** `http://127.0.0.1:PORT` of the admin listener, when configured. */
  readonly adminUrl: string | undefined;
  /** Log lines so far (JSON lines of stdout; other output is kept as `{ msg: line, level: 0 }`). */
  logs(): readonly LogLine[];
  /** Standard error so far. */
  stderr(): string;
  /**
   * Resolves with the first log line (already seen or still to come) that matches, counting
   * from `fromIndex` (default 0).
   * @throws Error after `timeoutMs` or when the process exits first.
   */
  waitForLog(match: (l: LogLine) => boolean, timeoutMs?: number, fromIndex?: number): Promise<LogLine>;
  /** Replaces the configuration file atomically (write beside it, then rename). */
  writeConfig(text: string): void;
  /** Sends a signal (e.g. `SIGHUP` to reload). */
  signal(sig: NodeJS.Signals): void;
  /** Stops reading the engine's stdout (its log): the pipe fills and the engine's writes to it find it full, as with a stalled log reader. */
  pauseLogs(): void;
  /** Reads the engine's stdout again. */
  resumeLogs(): void;
  /** Stops the engine (SIGTERM, then SIGKILL after 5 s) and removes the directory; returns the exit code. */
  stop(): Promise<number | null>;
}

/** Options for {@link startEngine}. */
export interface StartEngineOptions {
  /** Extra files written into the directory before start (e.g. location data), by name. */
  readonly files?: Readonly<Record<string, string | Buffer>>;
  /** How long to wait for `gslbd up` (ms); default 60 s (generous: the machine is shared). */
  readonly startTimeoutMs?: number;
  /** Configuration file name inside the directory; default `gslbd.yaml`. */
  readonly configName?: string;
  /** Extra environment variables of the engine process (e.g. `NOTIFY_SOCKET`). */
  readonly env?: Readonly<Record<string, string>>;
  /** Sends `signal` when a log line matching `when` appears while the engine is still starting. */
  readonly signalDuringStart?: { readonly signal: NodeJS.Signals; readonly when: (l: LogLine) => boolean };
  /** Limits of the engine process (`prlimit` options, e.g. `['--nofile=256:256']`); prlimit runs the engine in its own process. */
  readonly prlimit?: readonly string[];
  /** A network namespace (made by the test) the engine runs in: `ip netns exec NS` execs the engine, so it keeps the pid. */
  readonly netns?: string;
  /** The CLI script to run: default {@link CLI}; {@link BUNDLED_CLI} for the bundle. */
  readonly cli?: string;
}

const running = new Set<ChildProcess>();
const started = new Set<EngineProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Stops every engine this test worker started and has not stopped yet. Use it as
 * `test.after.always(stopAllEngines)`: it also covers engines of a `before` hook that failed
 * half-way (a `Promise.all` of starts that rejected), which would otherwise keep the worker alive.
 */
export async function stopAllEngines(): Promise<void> {
  await Promise.all([...started].map((e) => e.stop()));
}

/**
 * Writes `configText` to a temporary directory, starts the engine on it and waits for the
 * `gslbd up` log line.
 * @throws Error when `dist/` is not built, or the process exits or stays silent before it is up
 *   (the message includes its standard error and last log lines).
 */
export async function startEngine(configText: string, options: StartEngineOptions = {}): Promise<EngineProcess> {
  const cli = options.cli ?? CLI;
  if (!existsSync(cli)) throw new Error(`${cli} is missing: build first (npm test runs the build before ava)`);
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-e2e-'));
  for (const [name, content] of Object.entries(options.files ?? {})) writeFileSync(join(dir, name), content);
  const configFile = join(dir, options.configName ?? 'gslbd.yaml');
  writeFileSync(configFile, configText);

  const command = [process.execPath, cli, 'serve', configFile];
  // prlimit execs the command: the child keeps its pid, so signals reach the engine.
  if (options.prlimit) command.unshift('prlimit', ...options.prlimit, '--');
  if (options.netns) command.unshift('ip', 'netns', 'exec', options.netns);
  const child = spawn(command[0]!, command.slice(1), {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
  });
  running.add(child);
  const logs: LogLine[] = [];
  let stderr = '';
  let exited: number | null | undefined;
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const w of [...waiters]) w();
  };
  let partial = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    partial += chunk;
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (line.trim() === '') continue;
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        logs.push({ msg: line, level: 0 });
      }
    }
    wake();
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exitedPromise = new Promise<number | null>((resolveExit) => {
    child.on('exit', (code) => {
      exited = code;
      running.delete(child);
      wake();
      resolveExit(code);
    });
  });

  const waitForLog = (match: (l: LogLine) => boolean, timeoutMs = 10000, fromIndex = 0): Promise<LogLine> =>
    new Promise((resolveLine, reject) => {
      let next = fromIndex;
      const check = (): void => {
        for (; next < logs.length; next++) {
          if (match(logs[next]!)) {
            done();
            resolveLine(logs[next]!);
            return;
          }
        }
        if (exited !== undefined) {
          done();
          reject(new Error(`gslbd exited (code ${exited}) before the expected log line\nstderr: ${stderr}\nlast logs: ${tail(logs)}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no matching gslbd log line within ${timeoutMs} ms\nstderr: ${stderr}\nlast logs: ${tail(logs)}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  let handle: EngineProcess | undefined;
  const stop = async (): Promise<number | null> => {
    if (handle) started.delete(handle);
    if (exited === undefined) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exitedPromise;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
    return exited ?? null;
  };

  const early = options.signalDuringStart;
  if (early) {
    waitForLog(early.when, options.startTimeoutMs ?? 60000).then(
      () => child.kill(early.signal),
      () => undefined,
    );
  }
  let up: LogLine;
  try {
    up = await waitForLog((l) => l.msg === 'gslbd up', options.startTimeoutMs ?? 60000);
  } catch (e) {
    await stop();
    throw e;
  }
  const dns = ((up.dns as string[] | undefined) ?? []).map(parseHostPort);
  const admin = typeof up.admin === 'string' ? parseHostPort(up.admin) : undefined;
  handle = {
    dir,
    configFile,
    pid: child.pid!,
    dns,
    get server() {
      if (dns.length === 0) throw new Error('the engine has no DNS listener');
      return dns[0]!;
    },
    adminUrl: admin ? `http://${admin.address.includes(':') ? `[${admin.address}]` : admin.address}:${admin.port}` : undefined,
    logs: () => logs,
    stderr: () => stderr,
    waitForLog,
    writeConfig(text) {
      const tmp = `${configFile}.tmp-${process.pid}`;
      writeFileSync(tmp, text);
      renameSync(tmp, configFile);
    },
    signal(sig) {
      child.kill(sig);
    },
    pauseLogs: () => child.stdout!.pause(),
    resumeLogs: () => child.stdout!.resume(),
    stop,
  };
  started.add(handle);
  return handle;
}

/** Parses `127.0.0.1:5353` or `[::1]:5353`. */
function parseHostPort(text: string): BoundListener {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(text);
  if (!m) throw new Error(`cannot parse listener address "${text}"`);
  return { address: m[1]!, port: Number(m[2]) };
}

function tail(logs: readonly LogLine[]): string {
  return logs
    .slice(-5)
    .map((l) => JSON.stringify(l))
    .join('\n');
}

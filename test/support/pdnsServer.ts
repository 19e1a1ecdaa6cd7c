import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './freePort.js';

/**
 * Runs a real `pdns_server` (Debian pdns-server + pdns-backend-remote, installed by
 * `test/setup.sh`) in the foreground for end-to-end tests, on a free loopback port, with a
 * generated configuration directory: the settings of `examples/powerdns/pdns.conf` with the
 * socket, address, port and run directory of the test. A missing pdns_server is an error, never a
 * skipped test.
 */

/** Path of the example configuration the tests start from. */
export const EXAMPLE_PDNS_CONF = fileURLToPath(
  new URL(
    existsSync(fileURLToPath(new URL('../../examples', import.meta.url))) ? '../../examples/powerdns/pdns.conf' : '../../../examples/powerdns/pdns.conf',
    import.meta.url,
  ),
);

export interface PdnsOptions {
  /** The engine's Unix socket. */
  readonly socketPath: string;
  /** `instance=` in the connection string. */
  readonly instance?: string;
  /** Settings that replace or extend the example's (`cache-ttl: 20`, …). */
  readonly settings?: Readonly<Record<string, string | number>>;
  /** Resolve only when pdns_server has exited (for start-up failure tests) instead of when it serves. */
  readonly expectExit?: boolean;
}

export interface PdnsServer {
  readonly address: string;
  readonly port: number;
  readonly pid: number;
  /** Its configuration directory (`pdnsutil --config-dir` reads the same backend settings). */
  readonly configDir: string;
  /** Everything pdns_server wrote so far. */
  output(): string;
  /** Exit code once exited, undefined while running. */
  exitCode(): number | null | undefined;
  /** SIGTERM, then SIGKILL after 5 s; removes the configuration directory. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** The example's settings (key → value), comments and blank lines dropped. */
export function exampleSettings(): Map<string, string> {
  const settings = new Map<string, string>();
  for (const raw of readFileSync(EXAMPLE_PDNS_CONF, 'utf8').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq < 0) throw new Error(`${EXAMPLE_PDNS_CONF}: not key=value: ${line}`);
    settings.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  return settings;
}

/**
 * Starts pdns_server and resolves once it has launched its distributor threads (or, with
 * `expectExit`, once it has exited).
 * @throws Error when pdns_server is not installed, exits early, or is not ready within 15 s.
 */
export async function startPdns(options: PdnsOptions): Promise<PdnsServer> {
  if (!existsSync('/usr/sbin/pdns_server')) throw new Error('pdns_server is not installed: run `bash test/setup.sh` (Debian pdns-server, pdns-backend-remote)');
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    try {
      return await launch(options, port);
    } catch (e) {
      lastError = e as Error;
      if (!/Unable to bind|Address already in use/.test(lastError.message)) throw lastError;
    }
  }
  throw lastError!;
}

async function launch(options: PdnsOptions, port: number): Promise<PdnsServer> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-pdns-'));
  const runDir = join(dir, 'run');
  mkdirSync(runDir);
  const settings = exampleSettings();
  const overrides: Record<string, string | number> = {
    'remote-connection-string': `unix:path=${options.socketPath},timeout=2000${options.instance ? `,instance=${options.instance}` : ''}`,
    'local-address': '127.0.0.1',
    'local-port': port,
    'socket-dir': runDir,
    daemon: 'no',
    guardian: 'no',
    'disable-syslog': 'yes',
    'security-poll-suffix': '',
    loglevel: 6,
    ...options.settings,
  };
  for (const [k, v] of Object.entries(overrides)) settings.set(k, String(v));
  writeFileSync(join(dir, 'pdns.conf'), [...settings].map(([k, v]) => `${k}=${v}`).join('\n') + '\n');

  const child = spawn('/usr/sbin/pdns_server', [`--config-dir=${dir}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  let exit: number | null | undefined;
  const changed = new Set<() => void>();
  const onOutput = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
    for (const f of [...changed]) f();
  };
  child.stdout!.on('data', onOutput);
  child.stderr!.on('data', onOutput);
  const exited = new Promise<void>((resolve) =>
    child.on('exit', (code) => {
      exit = code;
      running.delete(child);
      for (const f of [...changed]) f();
      resolve();
    }),
  );
  const server: PdnsServer = {
    address: '127.0.0.1',
    port,
    pid: child.pid!,
    configDir: dir,
    output: () => output,
    exitCode: () => exit,
    async stop() {
      if (exit === undefined) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(killer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`pdns_server not ready within 15 s:\n${output}`)), 15000);
    const check = (): void => {
      if (options.expectExit ? exit !== undefined : output.includes('ready to distribute questions')) finish();
      else if (exit !== undefined) finish(new Error(`pdns_server exited with ${exit}:\n${output}`));
    };
    const finish = (e?: Error): void => {
      clearTimeout(timer);
      changed.delete(check);
      if (e) {
        void server.stop().then(() => reject(e));
      } else {
        resolve();
      }
    };
    changed.add(check);
    check();
  });
  return server;
}

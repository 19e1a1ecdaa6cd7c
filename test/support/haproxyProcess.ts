import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { haproxyCommand } from '../../src/agent/sources/haproxyStats.js';
import { waitFor } from './waitFor.js';

/**
 * A real `haproxy` (Debian's, installed by test/setup.sh) in the foreground on loopback, with an
 * admin-level stats socket in a temporary directory and HTTP backends whose servers are checked
 * every 100 ms (fall 1, rise 1), so a stopped server is DOWN within a few checks. A missing
 * `haproxy` fails the test (`bash test/setup.sh` installs it).
 */
export interface HaproxyProcess {
  readonly dir: string;
  readonly socket: string;
  /** The frontend's port (HTTP, routed to the first backend). */
  readonly port: number;
  /** Sends one runtime API command over the stats socket and returns the reply. */
  command(command: string): Promise<string>;
  /** Servers of `backend` with their status, from `show stat` (`s1` → `UP`). */
  serverStatus(backend: string): Promise<Map<string, string>>;
  /** A graceful reload: a new process takes the socket and the ports over (`-sf`), the old one finishes; counters restart. */
  reload(): Promise<void>;
  /** Stops HAProxy (the socket goes away). */
  stop(): Promise<void>;
  /** Starts it again after {@link stop}, with the same configuration. */
  start(): Promise<void>;
}

/** A backend of HAProxy: its name and the ports of its servers (`s1`, `s2`, …). */
export interface HaproxyBackend {
  readonly name: string;
  readonly serverPorts: readonly number[];
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/**
 * Starts HAProxy with `backends`, waits until its stats socket answers.
 * @throws Error when `haproxy` is not installed or does not start within 10 s.
 */
export async function startHaproxy(backends: readonly HaproxyBackend[], frontendPort: number): Promise<HaproxyProcess> {
  if (spawnSync('haproxy', ['-v']).status !== 0) throw new Error('haproxy is missing: run bash test/setup.sh');
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-haproxy-'));
  const socket = join(dir, 'admin.sock');
  const cfg = join(dir, 'haproxy.cfg');
  writeFileSync(
    cfg,
    [
      'global',
      `  stats socket ${socket} mode 600 level admin`,
      'defaults',
      '  mode http',
      '  timeout connect 1s',
      '  timeout client 5s',
      '  timeout server 5s',
      // Without it a check times out after `inter` (100 ms): a loaded machine would mark live servers down.
      '  timeout check 2s',
      'frontend fe',
      `  bind 127.0.0.1:${frontendPort}`,
      `  default_backend ${backends[0]!.name}`,
      ...backends.flatMap((b) => [
        `backend ${b.name}`,
        '  option httpchk GET /',
        '  default-server inter 100ms fall 1 rise 1',
        ...b.serverPorts.map((p, i) => `  server s${i + 1} 127.0.0.1:${p} check`),
      ]),
      '',
    ].join('\n'),
  );
  let child: ChildProcess | undefined;
  const launch = async (previous?: ChildProcess): Promise<void> => {
    const args = ['-f', cfg, '-db', ...(previous?.pid ? ['-sf', String(previous.pid)] : [])];
    const next = spawn('haproxy', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    next.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    children.add(next);
    next.on('exit', () => children.delete(next));
    child = next;
    const pid = next.pid;
    // Ready when the socket answers from the new process (after a reload, the old one may answer first).
    await waitFor(
      'haproxy to answer on its stats socket',
      async () => {
        if (next.exitCode !== null) throw new Error(`haproxy exited ${next.exitCode}: ${stderr}`);
        if (!existsSync(socket)) return false;
        const info = await haproxyCommand(socket, 'show info', 1000).catch(() => '');
        return new RegExp(`^Pid: ${pid}$`, 'm').test(info);
      },
      10_000,
      { everyMs: 50 },
    );
  };
  await launch();
  const stop = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await exited;
  };
  return {
    dir,
    socket,
    port: frontendPort,
    command: (command) => haproxyCommand(socket, command, 3000),
    async serverStatus(backend) {
      const text = await haproxyCommand(socket, 'show stat', 3000);
      const out = new Map<string, string>();
      for (const line of text.split('\n').slice(1)) {
        const f = line.split(',');
        if (f[0] === backend && f[1] !== 'BACKEND' && f[1] !== 'FRONTEND' && f[1]) out.set(f[1], f[17]!);
      }
      return out;
    },
    async reload() {
      await launch(child);
    },
    stop: async () => {
      await stop();
    },
    async start() {
      await launch();
    },
  };
}

/** Stops HAProxy and removes its directory. */
export async function removeHaproxy(h: HaproxyProcess): Promise<void> {
  await h.stop();
  rmSync(h.dir, { recursive: true, force: true });
}

/** A real HTTP server on 127.0.0.1 (a backend server behind HAProxy) that answers 200; `close` stops it and its connections. */
export interface HttpBackend {
  readonly port: number;
  close(): Promise<void>;
  /** Listens again on the same port. */
  open(): Promise<void>;
}

/** Starts an HTTP server answering `200 ok` on a free loopback port. */
export async function startHttpBackend(): Promise<HttpBackend> {
  let server: Server | undefined;
  let port = 0;
  const open = async (): Promise<void> => {
    const s = createServer((_req, res) => res.end('ok\n'));
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    port = (s.address() as { port: number }).port;
    server = s;
  };
  await open();
  return {
    get port() {
      return port;
    },
    async close() {
      const s = server;
      server = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    },
    open,
  };
}

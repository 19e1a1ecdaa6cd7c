import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'node:net';
import { freePort } from './freePort.js';
import { waitFor } from './waitFor.js';

/** A real `redis-server` (or `redis-sentinel`) this test started on loopback, without persistence. */
export interface RedisPeer {
  readonly port: number;
  readonly url: string;
  /** SIGSTOP: the process stays, its socket stops answering (a partition, as seen from a client). */
  pause(): void;
  /** SIGCONT after {@link pause}. */
  resume(): void;
  /** SIGKILL: gone, with its data (persistence is off). */
  kill(): Promise<void>;
  /** Starts the same server again on the same port (empty: nothing was persisted). */
  restart(): Promise<void>;
  /** Runs `redis-cli` against it and returns stdout (trimmed). */
  cli(...args: string[]): string;
}

/** Fails (never skips) when the binary is missing, naming the set-up script that installs it. */
function requireBinary(name: string): void {
  if (spawnSync(name, ['--version']).error)
    throw new Error(`${name} is missing: run bash test/setup.sh (apt package ${name === 'redis-sentinel' ? 'redis-sentinel' : 'redis-server'})`);
}

/**
 * Starts `redis-server` on a free port of 127.0.0.1 with persistence off and `extra` directives
 * (e.g. `['replicaof', '127.0.0.1', '6379']`), and waits until it answers PING.
 * @throws Error when redis-server is missing or does not answer within 10 s.
 */
export async function startRedis(extra: readonly string[][] = []): Promise<RedisPeer> {
  requireBinary('redis-server');
  return startPeer('redis-server', extra);
}

/**
 * Starts `redis-sentinel` on a free port watching `master` (`name`, quorum 1, `downAfterMs` down
 * detection, 1 s failover timeout).
 */
export async function startSentinel(name: string, master: RedisPeer, downAfterMs: number): Promise<RedisPeer> {
  requireBinary('redis-sentinel');
  return startPeer('redis-sentinel', [
    ['sentinel', 'monitor', name, '127.0.0.1', String(master.port), '1'],
    ['sentinel', 'down-after-milliseconds', name, String(downAfterMs)],
    ['sentinel', 'failover-timeout', name, '1000'],
    ['sentinel', 'parallel-syncs', name, '1'],
  ]);
}

async function startPeer(binary: string, extra: readonly string[][]): Promise<RedisPeer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-redis-'));
  const conf = join(dir, 'redis.conf');
  const lines = [
    ['port', String(port)],
    ['bind', '127.0.0.1'],
    ['dir', dir],
    ['save', '""'],
    ['appendonly', 'no'],
    ['daemonize', 'no'],
    ['logfile', '""'],
    ...extra,
  ];
  // Sentinel rewrites its configuration file (it must be writable and not shared).
  writeFileSync(
    conf,
    lines
      .filter(([k]) => binary === 'redis-server' || (k !== 'save' && k !== 'appendonly'))
      .map((l) => l.join(' '))
      .join('\n') + '\n',
  );
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    child = spawn(binary, [conf], { stdio: 'ignore' });
    await waitFor(`${binary} on port ${port}`, () => ping(port), 10_000, { everyMs: 50 });
  };
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGCONT');
    c.kill(signal);
    await exited;
  };
  await launch();
  const peer: RedisPeer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    kill: () => stop('SIGKILL'),
    restart: async () => {
      await stop('SIGKILL');
      await launch();
    },
    cli: (...args) => spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' }).stdout.trim(),
  };
  const cleanup = async (): Promise<void> => {
    await stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  cleanups.set(peer, cleanup);
  return peer;
}

const cleanups = new Map<RedisPeer, () => Promise<void>>();

/** Kills every server and sentinel this worker started (use in `test.after.always`). */
export async function stopAllRedis(): Promise<void> {
  await Promise.all([...cleanups.values()].map((c) => c()));
  cleanups.clear();
}

/** Whether something on 127.0.0.1:`port` answers PING (PONG, or NOAUTH from a server that requires a user) within 500 ms. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(500, () => done(false));
    s.on('error', () => done(false));
    // A server whose default user is off (ACL tests) answers NOAUTH: it is up.
    s.on('data', (d) => done(d.toString().startsWith('+PONG') || d.toString().startsWith('-NOAUTH')));
    s.on('connect', () => s.write('PING\r\n'));
  });
}

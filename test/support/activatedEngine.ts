import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { udpQuery, type ServerAddress } from './dnsClient.js';

/**
 * An engine under systemd socket activation, restarted at once whenever it dies (as
 * `Restart=always` with `RestartSec=0` does): the real `systemd-socket-activate` binds the
 * listening socket (`listen`: a Unix socket path or `ADDRESS:PORT`) and passes it (LISTEN_FDS) to a
 * loop that starts `gslbd serve CONFIG`; each engine is told the passed socket is its own
 * (LISTEN_PID = its pid: `exec` keeps the subshell's pid). For the PowerDNS outage tests.
 */

const CLI = fileURLToPath(
  new URL(existsSync(fileURLToPath(new URL('../../dist', import.meta.url))) ? '../../dist/src/cli/main.js' : '../../src/cli/main.js', import.meta.url),
);

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

export interface ActivatedEngine {
  /** Engines that logged `gslbd up`, in order, with the time (performance.now()) it was seen. */
  readonly ups: readonly { readonly pid: number; readonly atMs: number }[];
  /** Everything the holder, the loop and the engines wrote. */
  log(): string;
  /** Kills the holder, the loop and the engine (their own process group). */
  stop(): Promise<void>;
}

/**
 * Starts the holder and the first engine, and resolves once that engine is up (the first
 * connection to the socket launches it).
 * @throws Error when the socket is not bound within 10 s or no engine is up within 60 s.
 */
export async function startActivatedEngine(listen: string, configFile: string): Promise<ActivatedEngine> {
  const loop = `while :; do (LISTEN_PID=$BASHPID exec "${process.execPath}" "${CLI}" serve "${configFile}"); done`;
  const holder = spawn('systemd-socket-activate', ['-l', listen, 'bash', '-c', loop], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.add(holder);
  let log = '';
  const ups: { pid: number; atMs: number }[] = [];
  const onLog = (chunk: Buffer): void => {
    log += chunk.toString();
    // Lines may arrive split across chunks: scan the whole log, record each engine once.
    for (const m of log.matchAll(/^\{.*"pid":(\d+).*"msg":"gslbd up".*$/gm)) {
      if (!ups.some((u) => u.pid === Number(m[1]))) ups.push({ pid: Number(m[1]), atMs: performance.now() });
    }
  };
  holder.stdout!.on('data', onLog);
  holder.stderr!.on('data', onLog);
  const exited = new Promise<void>((r) => holder.once('exit', () => r()));
  const engine: ActivatedEngine = {
    ups,
    log: () => log,
    async stop() {
      try {
        process.kill(-holder.pid!, 'SIGKILL');
      } catch {
        // gone
      }
      await exited;
      children.delete(holder);
    },
  };
  // The socket appears at bind(), before listen(): wait for systemd-socket-activate's own line.
  for (let i = 0; i < 400 && !log.includes('Listening on'); i++) await new Promise((r) => setTimeout(r, 25));
  if (!log.includes('Listening on')) {
    await engine.stop();
    throw new Error(`systemd-socket-activate did not listen on ${listen}:\n${log}`);
  }
  const colon = listen.lastIndexOf(':');
  const probe: Socket = listen.startsWith('/') ? connect(listen) : connect(Number(listen.slice(colon + 1)), listen.slice(0, colon));
  probe.on('error', () => undefined);
  for (let i = 0; i < 2400 && ups.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  probe.destroy();
  if (ups.length === 0) {
    await engine.stop();
    throw new Error(`no engine came up:\n${log}`);
  }
  return engine;
}

/** One query of {@link QueryLoop}: when it was sent (ms since the loop started), its rcode name and answers. */
export interface LoopAnswer {
  readonly sentMs: number;
  readonly rcode: string;
  readonly answers: readonly string[];
}

export interface QueryLoop {
  /** performance.now() when the loop started. */
  readonly startedMs: number;
  readonly answers: readonly LoopAnswer[];
  /** Stops sending and resolves once every query in flight has its answer. */
  stop(): Promise<void>;
}

/** Keeps `inFlight` UDP queries for `www.example.test A` in flight against `server` until stopped; each waits `timeoutMs` for its answer. */
export function queryLoop(server: ServerAddress, inFlight: number, timeoutMs = 5000): QueryLoop {
  const answers: LoopAnswer[] = [];
  const startedMs = performance.now();
  let stopped = false;
  const client = async (): Promise<void> => {
    while (!stopped) {
      const sentMs = performance.now() - startedMs;
      try {
        const r = await udpQuery(server, { name: 'www.example.test', type: 'A' }, timeoutMs);
        answers.push({ sentMs, rcode: ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN'][r.rcode] ?? String(r.rcode), answers: r.answers });
      } catch {
        answers.push({ sentMs, rcode: 'TIMEOUT', answers: [] });
      }
    }
  };
  const clients = Array.from({ length: inFlight }, () => client());
  return {
    startedMs,
    answers,
    async stop() {
      stopped = true;
      await Promise.all(clients);
    },
  };
}

/** Answers counted by rcode name. */
export function rcodeCounts(list: readonly LoopAnswer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of list) counts[a.rcode] = (counts[a.rcode] ?? 0) + 1;
  return counts;
}

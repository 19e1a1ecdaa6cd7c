import { spawn, type ChildProcess } from 'node:child_process';
import type { Server, Socket } from 'node:net';
import type { FrontDoor, HandedConnection, ListeningSocket } from '../core/contracts/frontDoor.js';
import type { Logger } from '../core/telemetry/logger.js';

/**
 * The process hand-over of `gslbd ctl replace` (gdnsd 3's `gdnsdctl replace` model): the running
 * engine starts its replacement (the same command line, so the build now on disk: an upgrade), the
 * replacement loads while the old process keeps answering, takes the listening sockets over, and
 * the old process stops reading its open connections, passes each once the answers to what it read
 * are out (with the bytes of a request read only in part), and exits.
 *
 * The sockets cross through Node's `child_process` IPC channel (`subprocess.send(message,
 * handle)`: SCM_RIGHTS underneath), which carries `net.Server`, `net.Socket` and `dgram.Socket`
 * handles; `net` itself exposes no SCM_RIGHTS, and a native helper would add a build step and
 * still have to wrap raw descriptors into Node handles. The replacement is therefore a child of
 * the old process; under systemd the old process names it the main PID (`MAINPID=`) before it exits.
 *
 * Messages (`{ gslbd: KIND, … }`, in order; Node queues every message behind a handle not yet
 * acknowledged, so the order holds): child `listeners` → parent `listener` × N (door, key, handle),
 * `listeners-sent` → child `up` → parent `connection` × N (door, state, received bytes, socket), `handed` → child
 * `handed-ack`, and the parent exits.
 */

/** Environment variable naming the pid of the process a replacement replaces (set by the old process). */
export const REPLACES_ENV = 'GSLBD_REPLACES';

/** The admin listener's pseudo-door name in `listener` messages. */
export const ADMIN_DOOR = 'admin';

/** A message of the hand-over protocol. */
type HandoverMessage =
  | { readonly gslbd: 'listeners' | 'listeners-sent' | 'up' | 'handed' | 'handed-ack' }
  | { readonly gslbd: 'listener'; readonly door: string; readonly key: string }
  | {
      readonly gslbd: 'connection';
      readonly door: string;
      readonly state: HandedConnection['state'];
      /** {@link HandedConnection.received}, base64 (the IPC channel carries JSON). */
      readonly received?: string;
    };

function isHandoverMessage(m: unknown): m is HandoverMessage {
  return typeof m === 'object' && m !== null && typeof (m as { gslbd?: unknown }).gslbd === 'string';
}

/** What the old process hands over, and how it retires. */
export interface Handing {
  readonly doors: ReadonlyMap<string, FrontDoor>;
  /** The admin listener's socket and its key, when one is configured. */
  readonly admin?: { readonly key: string; readonly server: Server; release(): void };
  readonly log: Logger;
  /** Time the replacement has to load and take the sockets over (ms). */
  readonly upTimeoutMs: number;
  /** Called once every connection is handed over: stop background work and exit. */
  retire(replacementPid: number): void;
}

/**
 * Starts the replacement and hands over to it. Resolves with the replacement's pid once it serves
 * (listens on the sockets taken over), before this process drains; rejects, with this process still
 * serving everything, when the replacement exits first (an invalid configuration, a load error, a
 * broken build) or is not up within `upTimeoutMs` (it is then killed).
 */
export function startReplacement(h: Handing): Promise<number> {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    cwd: process.cwd(),
    env: { ...process.env, [REPLACES_ENV]: String(process.pid) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    let up = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the new process was not up within ${h.upTimeoutMs} ms; killed, this process keeps serving`));
    }, h.upTimeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (!up) reject(new Error(`the new process exited (${signal ?? `code ${code}`}) before it was up; this process keeps serving`));
    });
    child.on('message', (m: unknown) => {
      if (!isHandoverMessage(m)) return;
      switch (m.gslbd) {
        case 'listeners':
          sendListeners(child, h);
          return;
        case 'up':
          up = true;
          clearTimeout(timer);
          resolve(child.pid!);
          // After this turn, so the `replace` request is answered before the admin listener lets go.
          setImmediate(() => void handOverConnections(child, h));
          return;
        case 'handed-ack':
          child.disconnect();
          h.retire(child.pid!);
          return;
        case 'listener':
        case 'listeners-sent':
        case 'connection':
        case 'handed':
          return;
      }
    });
  });
}

function sendListeners(child: ChildProcess, h: Handing): void {
  for (const [door, d] of h.doors) for (const [key, socket] of d.listening?.() ?? []) child.send({ gslbd: 'listener', door, key }, socket);
  if (h.admin) child.send({ gslbd: 'listener', door: ADMIN_DOOR, key: h.admin.key }, h.admin.server);
  child.send({ gslbd: 'listeners-sent' });
}

async function handOverConnections(child: ChildProcess, h: Handing): Promise<void> {
  h.admin?.release();
  let passed = 0;
  let closed = 0;
  await Promise.all(
    [...h.doors].map(async ([door, d]) => {
      if (d.handOver) {
        closed +=
          (await d.handOver((c) => {
            passed++;
            const message: HandoverMessage = c.received
              ? { gslbd: 'connection', door, state: c.state, received: c.received.toString('base64') }
              : { gslbd: 'connection', door, state: c.state };
            child.send(message, c.socket);
          })) ?? 0;
      } else await d.stop();
    }),
  );
  if (closed > 0) h.log.warn({ closed, pid: child.pid }, 'hand-over: connections whose answers were not out in time were closed');
  h.log.info({ connections: passed, pid: child.pid }, 'hand-over: every connection passed to the new process');
  child.send({ gslbd: 'handed' });
}

/** The replacement's side: the sockets taken over, and connections passed later. */
export interface TakeOver {
  /** The old process's pid. */
  readonly replaces: number;
  /** The listening sockets, by door name (`admin` for the admin listener), then by key. */
  listeners(): Promise<ReadonlyMap<string, ReadonlyMap<string, ListeningSocket>>>;
  /**
   * Tells the old process this one serves, and gives every connection it passes to its door's
   * `adopt` (a connection for a door this process has not, or that cannot adopt, is closed).
   * Resolves when the old process handed over everything.
   */
  up(doors: ReadonlyMap<string, FrontDoor>, log: Logger): Promise<void>;
}

/** The {@link TakeOver} when this process was started by `gslbd ctl replace` (with an IPC channel), else undefined. */
export function takeOverFromParent(env: NodeJS.ProcessEnv = process.env): TakeOver | undefined {
  const replaces = Number(env[REPLACES_ENV]);
  const send = process.send?.bind(process);
  if (!Number.isInteger(replaces) || replaces <= 0 || !send) return undefined;
  // A socket taken over reads at once (Node binds it on arrival): what arrives before its door
  // listens is held here and given to the door when this process says `up`, not dropped.
  const held: { release(): void }[] = [];
  const hold = (socket: ListeningSocket): void => {
    const event = 'send' in socket ? 'message' : 'connection';
    const waiting: unknown[][] = [];
    const keep = (...args: unknown[]): void => void waiting.push(args);
    socket.on(event, keep);
    held.push({
      release: () => {
        socket.off(event, keep);
        for (const args of waiting) socket.emit(event, ...args);
      },
    });
  };
  // A later replace of this process starts from a clean environment.
  delete env[REPLACES_ENV];
  return {
    replaces,
    listeners: () =>
      new Promise((resolve) => {
        const byDoor = new Map<string, Map<string, ListeningSocket>>();
        const onMessage = (m: unknown, handle: unknown): void => {
          if (!isHandoverMessage(m)) return;
          if (m.gslbd === 'listener' && handle) {
            const keyed = byDoor.get(m.door) ?? new Map<string, ListeningSocket>();
            byDoor.set(m.door, keyed.set(m.key, handle as ListeningSocket));
            hold(handle as ListeningSocket);
          } else if (m.gslbd === 'listeners-sent') {
            process.off('message', onMessage);
            resolve(byDoor);
          }
        };
        process.on('message', onMessage);
        send({ gslbd: 'listeners' });
      }),
    up: (doors, log) =>
      new Promise((resolve) => {
        const onMessage = (m: unknown, handle: unknown): void => {
          if (!isHandoverMessage(m)) return;
          if (m.gslbd === 'connection' && handle) {
            const socket = handle as Socket;
            const door = doors.get(m.door);
            if (!door?.adopt) {
              socket.destroy();
              return;
            }
            // Ahead of anything the socket reads: the door adopts it before the next I/O poll, and
            // unshift puts the bytes at the front of the readable buffer its `data` listener drains first.
            const received = m.received ? Buffer.from(m.received, 'base64') : undefined;
            if (received) socket.unshift(received);
            door.adopt(received ? { socket, state: m.state, received } : { socket, state: m.state });
          } else if (m.gslbd === 'handed') {
            process.off('message', onMessage);
            send({ gslbd: 'handed-ack' });
            process.disconnect?.();
            log.info({ replaced: replaces }, 'hand-over complete: the old process exits');
            resolve();
          }
        };
        process.on('message', onMessage);
        for (const h of held) h.release();
        send({ gslbd: 'up' });
      }),
  };
}

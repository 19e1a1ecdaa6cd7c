import { createRequire } from 'node:module';
import { join } from 'node:path';
import { packageRoot } from '../core/lpm/nativeAddon.js';
import type { Logger } from '../core/telemetry/logger.js';

/** native/notify.cc: one datagram to an AF_UNIX socket (Node's dgram speaks UDP only). */
interface NotifyAddon {
  notify(socketPath: string, message: string): void;
}

/** The addon once loaded; null when it could not be (and that was logged). */
let addon: NotifyAddon | null | undefined;

function loadAddon(log: Logger, socket: string): NotifyAddon | null {
  if (addon === undefined) {
    const path = join(packageRoot(), 'build', 'Release', 'gslbd_notify.node');
    try {
      addon = createRequire(import.meta.url)(path) as NotifyAddon;
    } catch (e) {
      addon = null;
      log.error({ NOTIFY_SOCKET: socket, path, err: e }, 'cannot notify the service manager: the native addon is missing (npm run build:native)');
    }
  }
  return addon;
}

/**
 * Tells the service manager about the engine's state, as sd_notify(3) does: `READY=1` once every
 * listener is open and the configuration is loaded (systemd `Type=notify`: units ordered after
 * gslbd start only then), `RELOADING=1` / `READY=1` around reloads, `STOPPING=1` when it stops,
 * `STATUS=` lines for `systemctl status`. Does nothing when `$NOTIFY_SOCKET` is unset (not
 * started by systemd with Type=notify).
 *
 * Sent from the engine's own process through native/notify.cc (built with the location addon by
 * `npm install`), so the default `NotifyAccess=main` accepts it. When the addon is missing the
 * engine logs an error once: a Type=notify unit would then time out at start.
 */
export function notifyServiceManager(message: string, log: Logger, env: NodeJS.ProcessEnv = process.env): void {
  const socket = env.NOTIFY_SOCKET;
  if (!socket) return;
  const native = loadAddon(log, socket);
  if (!native) return;
  try {
    native.notify(socket, message);
  } catch (e) {
    log.error({ err: e, NOTIFY_SOCKET: socket }, 'cannot notify the service manager');
  }
}

/**
 * CLOCK_MONOTONIC now in microseconds, for `MONOTONIC_USEC=` beside `RELOADING=1` (sd_notify(3):
 * systemd 253's `Type=notify-reload` matches the reload cycle by it). Node's high-resolution time
 * is CLOCK_MONOTONIC on Linux (libuv's uv_hrtime).
 */
export function monotonicUsec(): bigint {
  return process.hrtime.bigint() / 1000n;
}

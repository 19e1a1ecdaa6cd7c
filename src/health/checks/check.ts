import type { MonitorConfig } from '../../config/healthSchema.js';
import { dnsCheck } from './dnsCheck.js';
import { httpCheck } from './httpCheck.js';
import { tcpCheck } from './tcpCheck.js';

/** Where a check connects: an address and port, and the host name for HTTP Host and TLS SNI. */
export interface CheckTarget {
  readonly address: string;
  readonly port: number;
  readonly host: string | undefined;
}

/** The result of one check. Latency in ms from start to the deciding event. */
export interface CheckOutcome {
  readonly ok: boolean;
  readonly latencyMs: number;
  /** Why it failed (a socket error code, `timeout`, `status 503`, …); '' on success. */
  readonly error: string;
}

/** One check run against a target; never rejects, and settles within the monitor's timeout (plus a little). */
export type CheckRun = (target: CheckTarget) => Promise<CheckOutcome>;

/** Extra inputs a monitor needs that are not in its configuration value. */
export interface CheckResources {
  /** PEM of the CAs an https monitor trusts (its `caFile`), when set. */
  readonly ca?: Buffer;
}

/**
 * The check function of a monitor: TCP connect, HTTP(S) request or DNS query over Node's own
 * `net`, `http`/`https` and `dgram` (no external processes).
 */
export function checkFor(monitor: MonitorConfig, resources: CheckResources = {}): CheckRun {
  switch (monitor.type) {
    case 'tcp':
      return tcpCheck(monitor.timeoutMs);
    case 'http':
    case 'https':
      return httpCheck(monitor, resources.ca);
    case 'dns':
      return dnsCheck(monitor);
  }
}

/** The port a monitor checks when the target does not name one (tcp has no default). */
export function defaultPort(monitor: MonitorConfig): number | undefined {
  if (monitor.port !== undefined) return monitor.port;
  switch (monitor.type) {
    case 'http':
      return 80;
    case 'https':
      return 443;
    case 'dns':
      return 53;
    default:
      return undefined;
  }
}

/** Milliseconds since `startNs` (from `process.hrtime.bigint()`). */
export function elapsedMs(startNs: bigint): number {
  return Number(process.hrtime.bigint() - startNs) / 1e6;
}

/**
 * A check's one outcome: the first call releases the check's resources (`release`: its timer and
 * socket), then resolves with the latency since `startNs`; later calls (a late timeout, an error
 * after the answer) do nothing.
 */
export function outcomeOnce(startNs: bigint, resolve: (outcome: CheckOutcome) => void, release: () => void): (ok: boolean, error: string) => void {
  let settled = false;
  return (ok, error) => {
    if (settled) return;
    settled = true;
    release();
    resolve({ ok, latencyMs: elapsedMs(startNs), error });
  };
}

/**
 * Arms a check's timeout. The failure is decided one event-loop turn after the timer fires
 * (`setImmediate` runs after the poll phase), so when a busy process fires the timer late, an
 * answer that had already arrived still counts: a stalled engine must not mark healthy targets
 * down. Callers ignore a late call after they have finished.
 */
export function armTimeout(ms: number, onTimeout: () => void): NodeJS.Timeout {
  return setTimeout(() => setImmediate(onTimeout), ms);
}

import { isIPv6, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { isSniName, type HttpMonitorConfig } from '../../config/healthSchema.js';
import { armTimeout, elapsedMs, type CheckOutcome, type CheckRun, type CheckTarget } from './check.js';
import { checkSockets, type ConnectionEvents } from './checkSockets.js';
import { HttpResponseReader } from './httpResponse.js';

/** How much of a body is read for `bodyContains` / `bodyMatches` (bytes). */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * HTTP/HTTPS check over a new connection per check, as a real client arrives: one HTTP/1.1
 * request (`method`, `path`, `Connection: close`) with the Host header `check.host` ?? the
 * monitor's `host` ?? the address (with `:port` when not the scheme's default). HTTPS (Node's
 * `tls`) sends SNI (`sni`, else the Host name when it is not an IP literal, RFC 6066 §3) and
 * verifies the chain and the name unless `tlsVerify` is false. Succeeds when the status is in
 * `expectStatus` and the first {@link MAX_BODY_BYTES} of the body contain `bodyContains` and match
 * `bodyMatches`; everything must finish within `timeoutMs`.
 *
 * The request is written on Node's own `net`/`tls` sockets and the response read by
 * {@link HttpResponseReader} rather than through `http.request`: a check needs the status line
 * and at most 64 KiB of body, and the general client costs about twice the CPU per check (10,000
 * endpoints at 2,000 checks/s: docs/BENCHMARKS.md). A check without body expectations closes the
 * connection as soon as the response head is read. Plain HTTP connects through
 * {@link checkSockets} (a new TCP connection on a reused JavaScript socket, read into a shared
 * buffer); HTTPS opens a new `TLSSocket` per check.
 */
export function httpCheck(m: HttpMonitorConfig, ca: Buffer | undefined): CheckRun {
  const https = m.type === 'https';
  const statusOk = statusMatcher(m.expectStatus);
  const pattern = m.bodyMatches !== undefined ? new RegExp(m.bodyMatches) : undefined;
  const needBody = m.bodyContains !== undefined || pattern !== undefined;
  const defaultPort = https ? 443 : 80;

  // The request bytes and SNI of a target never change: built once per target.
  const prepared = new WeakMap<CheckTarget, { request: Buffer; servername: string | undefined }>();
  const prepare = (target: CheckTarget): { request: Buffer; servername: string | undefined } => {
    const configuredHost = target.host ?? m.host;
    const hostName = configuredHost ?? (isIPv6(target.address) ? `[${target.address}]` : target.address);
    const hostHeader = target.port === defaultPort || /:\d+$/.test(hostName) ? hostName : `${hostName}:${target.port}`;
    const request = Buffer.from(`${m.method} ${m.path} HTTP/1.1\r\nHost: ${hostHeader}\r\nUser-Agent: gslbd-health-check\r\nAccept: */*\r\nConnection: close\r\n\r\n`, 'latin1');
    const sni = m.type === 'https' ? (m.sni ?? (configuredHost !== undefined ? configuredHost.replace(/:\d+$/, '') : undefined)) : undefined;
    const p = { request, servername: sni !== undefined && isSniName(sni) ? sni : undefined };
    prepared.set(target, p);
    return p;
  };

  return (target: CheckTarget) => {
    const started = process.hrtime.bigint();
    const { request, servername } = prepared.get(target) ?? prepare(target);
    return new Promise<CheckOutcome>((resolve) => {
      const reader = new HttpResponseReader(MAX_BODY_BYTES, m.method === 'HEAD');
      let settled = false;
      let socket: Socket;
      const finish = (ok: boolean, error: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        resolve({ ok, latencyMs: elapsedMs(started), error });
      };
      const judge = (): void => {
        if (reader.error) return finish(false, reader.error);
        if (!reader.headComplete) return;
        if (!statusOk(reader.status)) return finish(false, `status ${reader.status}`);
        if (!needBody) return finish(true, '');
        if (!reader.bodyComplete) return;
        const body = reader.bodyText();
        if (m.bodyContains !== undefined && !body.includes(m.bodyContains)) finish(false, 'body does not contain the expected text');
        else if (pattern && !pattern.test(body)) finish(false, 'body does not match the expected pattern');
        else finish(true, '');
      };
      const events: ConnectionEvents = {
        connected: () => socket.write(request),
        data: (chunk) => {
          if (settled) return;
          reader.push(chunk);
          judge();
        },
        ended: () => {
          if (settled) return;
          reader.end();
          judge();
          finish(false, 'connection closed before a complete response');
        },
        failed: (code) => finish(false, code),
      };
      const timer = armTimeout(m.timeoutMs, () => finish(false, 'timeout'));
      if (https) {
        socket = tlsConnect({
          host: target.address,
          port: target.port,
          servername,
          rejectUnauthorized: m.tlsVerify,
          ...(ca ? { ca } : {}),
        });
        socket.once('secureConnect', events.connected);
        socket.on('data', events.data);
        socket.once('end', events.ended);
        // `on`, not `once`: a socket may report a second error while being torn down.
        socket.on('error', (e: NodeJS.ErrnoException) => events.failed(e.code ?? e.message));
      } else {
        socket = checkSockets.connect(target.address, target.port, events).socket;
      }
    });
  };
}

/** A predicate over status codes from numbers and classes (`2xx`). */
function statusMatcher(patterns: readonly (number | string)[]): (status: number) => boolean {
  const exact = new Set<number>();
  const classes = new Set<number>();
  for (const p of patterns) {
    if (typeof p === 'number') exact.add(p);
    else classes.add(Number(p[0]));
  }
  return (status) => exact.has(status) || classes.has(Math.floor(status / 100));
}

import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIPv6 } from 'node:net';
import { isSniName, type HttpMonitorConfig } from '../../config/healthSchema.js';
import { armTimeout, elapsedMs, type CheckOutcome, type CheckRun, type CheckTarget } from './check.js';

/** How much of a body is read for `bodyContains` / `bodyMatches` (bytes). */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * HTTP/HTTPS check over a new connection per check (`agent: false`, `Connection: close`), as a
 * real client arrives: `method` and `path` with the Host header `check.host` ?? the monitor's
 * `host` ?? the address (with `:port` when not the scheme's default). HTTPS sends SNI (`sni`, else
 * the Host name when it is not an IP literal, RFC 6066 §3) and verifies the certificate chain and
 * name unless `tlsVerify` is false. Succeeds when the status is in `expectStatus` and the first
 * {@link MAX_BODY_BYTES} of the body contain `bodyContains` and match `bodyMatches`; everything
 * must finish within `timeoutMs`.
 */
export function httpCheck(m: HttpMonitorConfig, ca: Buffer | undefined): CheckRun {
  const https = m.type === 'https';
  const statusOk = statusMatcher(m.expectStatus);
  const pattern = m.bodyMatches !== undefined ? new RegExp(m.bodyMatches) : undefined;
  const needBody = m.bodyContains !== undefined || pattern !== undefined;
  const defaultPort = https ? 443 : 80;
  const doRequest = https ? httpsRequest : httpRequest;

  return (target: CheckTarget) => {
    const started = process.hrtime.bigint();
    const configuredHost = target.host ?? m.host;
    const hostName = configuredHost ?? (isIPv6(target.address) ? `[${target.address}]` : target.address);
    const hostHeader = target.port === defaultPort || /:\d+$/.test(hostName) ? hostName : `${hostName}:${target.port}`;
    const sniHost = https ? (m.type === 'https' && m.sni) || (configuredHost !== undefined ? configuredHost.replace(/:\d+$/, '') : undefined) : undefined;
    return new Promise<CheckOutcome>((resolve) => {
      let settled = false;
      const finish = (ok: boolean, error: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        resolve({ ok, latencyMs: elapsedMs(started), error });
      };
      const req = doRequest({
        host: target.address,
        port: target.port,
        method: m.method,
        path: m.path,
        agent: false,
        setHost: false,
        headers: { host: hostHeader, 'user-agent': 'gslbd-health-check', connection: 'close', accept: '*/*' },
        ...(https
          ? {
              servername: sniHost !== undefined && isSniName(sniHost) ? sniHost : '',
              rejectUnauthorized: m.type === 'https' ? m.tlsVerify : true,
              ...(ca ? { ca } : {}),
            }
          : {}),
      });
      const timer = armTimeout(m.timeoutMs, () => finish(false, 'timeout'));
      req.on('error', (e: NodeJS.ErrnoException) => finish(false, e.code ?? e.message));
      req.on('response', (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        if (!statusOk(status)) {
          res.resume();
          finish(false, `status ${status}`);
          return;
        }
        if (!needBody) {
          res.resume();
          res.on('end', () => finish(true, ''));
          res.on('error', () => finish(true, ''));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        const judge = (): void => {
          const body = Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8');
          if (m.bodyContains !== undefined && !body.includes(m.bodyContains)) finish(false, 'body does not contain the expected text');
          else if (pattern && !pattern.test(body)) finish(false, 'body does not match the expected pattern');
          else finish(true, '');
        };
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= MAX_BODY_BYTES) judge();
        });
        res.on('end', judge);
        res.on('error', (e: NodeJS.ErrnoException) => finish(false, e.code ?? e.message));
      });
      req.end();
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

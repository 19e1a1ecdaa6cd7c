import { isIP, isIPv6, type Socket } from 'node:net';
import { connect as tlsConnect, TLSSocket } from 'node:tls';
import { z } from 'zod';
import { domainNameSchema } from '../../../core/config/fieldSchemas.js';
import { elapsedMs, type CheckDone, type CheckRun, type CheckTarget } from './check.js';
import { checkDeadlines, type TimedCheck } from './checkDeadlines.js';
import { checkKind, monitorCommon } from './checkKind.js';
import { checkSockets, resetCheckConnection, type ConnectionEvents } from './checkSockets.js';
import { HttpResponseReader } from './httpResponse.js';

/**
 * An expected final status: 200–599 or a class `2xx`…`5xx`. 1xx responses are interim (RFC 9110
 * §15.2): the reader skips them and judges the final response, so a 1xx could never match.
 */
const statusPatternSchema = z.union([
  z.number().int().min(200, 'a 1xx response is interim (RFC 9110 §15.2), never the final status').max(599),
  z.string().regex(/^[2-5]xx$/, 'a status class is written like "2xx" (1xx responses are interim, never final)'),
]);

const regexSchema = z
  .string()
  .min(1)
  .refine(
    (s) => {
      try {
        new RegExp(s);
        return true;
      } catch {
        return false;
      }
    },
    { message: 'not a valid regular expression' },
  );

/** The fields of http and https monitors beyond {@link monitorCommon}. */
const httpFields = {
  method: z.enum(['GET', 'HEAD', 'POST', 'OPTIONS']).default('GET').describe('HTTP method of the check request; default GET.'),
  path: z.string().startsWith('/', 'a path starts with "/"').default('/').describe('Request path, starting with /; default /.'),
  /** Host header; defaults to the endpoint's `check.host`, else the checked address. */
  host: z.string().min(1).optional().describe("Host header when the endpoint's check.host does not set one; default the checked address."),
  /** Accepted status codes (default 200 only, as gdnsd's http_status). */
  expectStatus: z.array(statusPatternSchema).min(1).default([200]).describe('Accepted final statuses: 200–599 or a class such as "2xx"; default [200].'),
  /** The body (first 64 KiB) must contain this text. */
  bodyContains: z.string().min(1).optional().describe('Text the response body (first 64 KiB) must contain.'),
  /** The body (first 64 KiB) must match this regular expression (JavaScript syntax). */
  bodyMatches: regexSchema.optional().describe('Regular expression (JavaScript syntax) the response body (first 64 KiB) must match.'),
};

/**
 * A HEAD response has no body (RFC 9110 §9.3.2), so `bodyContains` or `bodyMatches` with HEAD
 * would fail every check: the monitor would hold its targets down for ever. Refused at load.
 */
function headHasNoBody(m: { method: string; bodyContains?: string; bodyMatches?: string }, ctx: z.RefinementCtx): void {
  if (m.method !== 'HEAD') return;
  for (const key of ['bodyContains', 'bodyMatches'] as const) {
    if (m[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `a HEAD response has no body to check: use method GET, or drop ${key}` });
  }
}

/** HTTP over a new connection per check. */
export const httpMonitorSchema = z
  .strictObject({ type: z.literal('http').describe('HTTP monitor: one request over a new connection per check.'), ...monitorCommon, ...httpFields })
  .superRefine(headHasNoBody);

/** HTTPS over a new connection per check: SNI and certificate verification as configured. */
export const httpsMonitorSchema = z
  .strictObject({
    type: z.literal('https').describe('HTTPS monitor: one request over a new TLS connection per check.'),
    ...monitorCommon,
    ...httpFields,
    /** TLS server name (SNI); defaults to the Host header when that is a name. */
    sni: domainNameSchema.optional().describe('TLS server name (SNI); default the Host header when that is a name.'),
    /** Verify the server certificate and its name (default true). */
    tlsVerify: z.boolean().default(true).describe('Verify the server certificate and its name; default true.'),
    /** PEM file of trusted CAs instead of Node's bundled roots (relative to the configuration file). */
    caFile: z.string().min(1).optional().describe("PEM file of trusted CAs instead of Node's bundled roots, relative to the configuration file."),
  })
  .superRefine(headHasNoBody);

export type HttpMonitorConfig = z.output<typeof httpMonitorSchema> | z.output<typeof httpsMonitorSchema>;

/** The schemes' default ports (RFC 9110 §4.2.1, §4.2.2): checked by default, and left out of the Host header. */
const HTTP_PORT = 80;
const HTTPS_PORT = 443;

/** The `http` check kind: port 80 by default. */
export const httpCheckKind = checkKind({
  schema: httpMonitorSchema,
  defaultPort: HTTP_PORT,
  check: (m) => httpCheck(m, undefined),
});

/** The `https` check kind: port 443 by default; its `caFile` is read at configure. */
export const httpsCheckKind = checkKind({
  schema: httpsMonitorSchema,
  defaultPort: HTTPS_PORT,
  files: ['caFile'],
  check: (m, files) => httpCheck(m, files.caFile),
});

/** True when `host` may be sent as TLS SNI (RFC 6066 §3: a host name, never an IP literal). */
export function isSniName(host: string): boolean {
  return isIP(host) === 0;
}

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
 * endpoints at 2,000 checks/s: docs/BENCHMARKS-HISTORY.md, health). A check without body expectations closes the
 * connection as soon as the response head is read. Plain HTTP connects through
 * {@link checkSockets} (a new TCP connection on a reused JavaScript socket, read into a shared
 * buffer) and ends it with an RST once the verdict is known ({@link resetCheckConnection}: no
 * TIME_WAIT, as HAProxy ends its checks); HTTPS opens a new `TLSSocket` per check and closes it
 * normally (Node resets only plain TCP handles).
 */
export function httpCheck(m: HttpMonitorConfig, ca: Buffer | undefined): CheckRun {
  const https = m.type === 'https';
  const statusOk = statusMatcher(m.expectStatus);
  const pattern = m.bodyMatches !== undefined ? new RegExp(m.bodyMatches) : undefined;
  const needBody = m.bodyContains !== undefined || pattern !== undefined;
  const defaultPort = https ? HTTPS_PORT : HTTP_PORT;

  const verdict: ResponseVerdict = { statusOk, needBody, bodyContains: m.bodyContains, pattern, head: m.method === 'HEAD' };
  // The request bytes and SNI of a target never change: built at its first check (not all at
  // start-up, where 10,000 of them at once grow the heap), then kept with the target's check.
  const prepare = (target: CheckTarget): PreparedRequest => {
    const configuredHost = target.host ?? m.host;
    const hostName = configuredHost ?? (isIPv6(target.address) ? `[${target.address}]` : target.address);
    const hostHeader = target.port === defaultPort || /:\d+$/.test(hostName) ? hostName : `${hostName}:${target.port}`;
    const request = Buffer.from(
      `${m.method} ${m.path} HTTP/1.1\r\nHost: ${hostHeader}\r\nUser-Agent: gslbd-health-check\r\nAccept: */*\r\nConnection: close\r\n\r\n`,
      'latin1',
    );
    const sni = https ? (m.sni ?? (configuredHost !== undefined ? configuredHost.replace(/:\d+$/, '') : undefined)) : undefined;
    return { request, servername: sni !== undefined && isSniName(sni) ? sni : undefined };
  };
  return (target) => {
    let prepared: PreparedRequest | undefined;
    return (done) => start(target, (prepared ??= prepare(target)), done);
  };

  function start(target: CheckTarget, { request, servername }: PreparedRequest, done: CheckDone): void {
    const started = performance.now();
    const probe = new HttpProbe(verdict, request, started, m.timeoutMs, done);
    probe.deadline = checkDeadlines.arm(m.timeoutMs, started, probe);
    if (https) {
      const socket = tlsConnect({
        host: target.address,
        port: target.port,
        servername,
        rejectUnauthorized: m.tlsVerify,
        ...(ca ? { ca } : {}),
      });
      probe.socket = socket;
      socket.once('secureConnect', () => probe.connected());
      socket.on('data', (chunk: Buffer) => probe.data(chunk));
      socket.once('end', () => probe.ended());
      // `on`, not `once`: a socket may report a second error while being torn down.
      socket.on('error', (e: NodeJS.ErrnoException) => probe.failed(e.code ?? e.message));
    } else {
      probe.socket = checkSockets.connect(target.address, target.port, probe).socket;
    }
  }
}

/** A target's request bytes and TLS server name. */
interface PreparedRequest {
  readonly request: Buffer;
  readonly servername: string | undefined;
}

/** What decides an HTTP check's response, from the monitor. */
interface ResponseVerdict {
  readonly statusOk: (status: number) => boolean;
  readonly needBody: boolean;
  readonly bodyContains: string | undefined;
  readonly pattern: RegExp | undefined;
  /** The request is HEAD: the response has no body. */
  readonly head: boolean;
}

/** One HTTP check in flight: one object per check rather than a closure per event or timer. */
class HttpProbe implements ConnectionEvents, TimedCheck {
  socket: Socket | undefined;
  /** Its token in {@link checkDeadlines}. */
  deadline = 0;
  private settled = false;
  private readonly reader: HttpResponseReader;

  constructor(
    private readonly verdict: ResponseVerdict,
    private readonly request: Buffer,
    private readonly started: number,
    private readonly timeoutMs: number,
    private readonly done: CheckDone,
  ) {
    // Without body expectations no body byte is kept (the verdict is taken at the end of the head).
    this.reader = new HttpResponseReader(verdict.needBody ? MAX_BODY_BYTES : 0, verdict.head);
  }

  connected(): void {
    this.socket!.write(this.request);
  }

  data(chunk: Buffer): void {
    if (this.settled) return;
    this.reader.push(chunk);
    this.judge();
  }

  ended(): void {
    if (this.settled) return;
    this.reader.end();
    this.judge();
    this.finish(false, 'connection closed before a complete response');
  }

  failed(code: string): void {
    this.finish(false, code);
  }

  timedOut(): void {
    this.finish(false, 'timeout');
  }

  finish(ok: boolean, error: string): void {
    if (this.settled) return;
    this.settled = true;
    checkDeadlines.disarm(this.timeoutMs, this.deadline);
    if (this.socket instanceof TLSSocket) this.socket.destroy();
    else resetCheckConnection(this.socket!);
    this.done({ ok, latencyMs: elapsedMs(this.started), error });
  }

  private judge(): void {
    const { reader, verdict } = this;
    if (reader.error) return this.finish(false, reader.error);
    if (!reader.headComplete) return;
    if (!verdict.statusOk(reader.status)) return this.finish(false, `status ${reader.status}`);
    if (!verdict.needBody) return this.finish(true, '');
    if (!reader.bodyComplete) return;
    const body = reader.bodyText();
    if (verdict.bodyContains !== undefined && !body.includes(verdict.bodyContains)) this.finish(false, 'body does not contain the expected text');
    else if (verdict.pattern && !verdict.pattern.test(body)) this.finish(false, 'body does not match the expected pattern');
    else this.finish(true, '');
  }
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

import { createRequire } from 'node:module';
import { isIPv6 } from 'node:net';
import type * as GrpcJs from '@grpc/grpc-js';
import type { ChannelCredentials, ChannelOptions, Client, ServiceError } from '@grpc/grpc-js';
import type * as GrpcHealthCheck from 'grpc-health-check';
import { z } from 'zod';
import { domainNameSchema } from '../../../core/config/fieldSchemas.js';
import { outcomeOnce, type CheckRun, type CheckTarget } from './check.js';
import { checkDeadlines } from './checkDeadlines.js';
import { checkKind, monitorCommon } from './checkKind.js';

/**
 * One `grpc.health.v1.Health/Check` call (the gRPC health checking protocol, as
 * `grpc-health-probe`, Kubernetes' gRPC probes and coredns-gslb use it): up when the server
 * answers `SERVING` for `service`.
 */
export const grpcMonitorSchema = z
  .strictObject({
    type: z.literal('grpc').describe('gRPC monitor: one grpc.health.v1.Health/Check call, up when the answer is SERVING.'),
    ...monitorCommon,
    /** The service whose health is asked; '' (default) asks for the server as a whole (the protocol's convention). */
    service: z.string().default('').describe('gRPC service whose health is asked; "" (default) asks for the server as a whole.'),
    /** Call over TLS (HTTP/2 with ALPN `h2`), verifying the server's certificate and name; default false: plaintext HTTP/2. */
    tls: z.boolean().default(false).describe('Call over TLS (HTTP/2 with ALPN h2), verifying the certificate; default false (plaintext HTTP/2).'),
    /** TLS: the name the certificate must carry, sent as SNI and as `:authority`; defaults to the endpoint's `check.host`, else the checked address. */
    serverName: domainNameSchema
      .optional()
      .describe('TLS only: name the certificate must carry, sent as SNI and :authority; default check.host, else the address.'),
    /** TLS: PEM file of trusted CAs instead of Node's bundled roots (relative to the configuration file). */
    caFile: z.string().min(1).optional().describe("TLS only: PEM file of trusted CAs instead of Node's bundled roots, relative to the configuration file."),
  })
  .superRefine((m, ctx) => {
    for (const key of ['serverName', 'caFile'] as const) {
      if (m[key] !== undefined && !m.tls) ctx.addIssue({ code: 'custom', path: [key], message: `${key} applies to TLS only: set tls: true, or drop ${key}` });
    }
  });

export type GrpcMonitorConfig = z.output<typeof grpcMonitorSchema>;

/** The `grpc` check kind: no default port (gRPC has no registered one); its `caFile` is read at configure. */
export const grpcCheckKind = checkKind({
  schema: grpcMonitorSchema,
  defaultPort: undefined,
  files: ['caFile'],
  check: (m, files) => grpcCheck(m, files.caFile),
});

/**
 * How much later than the monitor's timeout the call's own gRPC deadline falls: the monitor's
 * timeout decides (`checkDeadlines`, which lets an answer that arrived while the engine was busy
 * still count), and the deadline the server receives (`grpc-timeout`) ends its work soon after.
 */
const DEADLINE_GRACE_MS = 1000;

/** `@grpc/grpc-js`, and the `Check` method of `grpc.health.v1.Health` (path, request serialiser, response deserialiser) from `grpc-health-check`'s health.proto. */
interface GrpcLibraries {
  readonly grpc: typeof GrpcJs;
  readonly check: (typeof GrpcHealthCheck.service)[string];
}

let libraries: GrpcLibraries | undefined;

/**
 * The gRPC libraries, loaded at the first grpc monitor's configure rather than when the engine
 * starts: loading them and parsing health.proto costs 0.5–1 s of CPU on the 2-core machine,
 * which an engine, a `check-config` or a test without gRPC monitors should not pay. Both are
 * CommonJS packages, so `require` loads them synchronously, as a check kind's `check` must return.
 */
function grpcLibraries(): GrpcLibraries {
  if (libraries === undefined) {
    const require = createRequire(import.meta.url);
    const health = require('grpc-health-check') as typeof GrpcHealthCheck;
    libraries = { grpc: require('@grpc/grpc-js') as typeof GrpcJs, check: health.service['Check']! };
  }
  return libraries;
}

/** What `CHECK` answers (`enums: String` in `grpc-health-check`'s proto loading). */
interface HealthCheckResponse {
  readonly status?: string;
}

/**
 * gRPC health check over a new HTTP/2 connection per check, as `grpc-health-probe` connects: a
 * channel of its own (`grpc.use_local_subchannel_pool`, so no connection is shared with another
 * check or kept after it) to the target's address, one unary `Check` call for `service`, the
 * channel closed once the verdict is known. Up when the answer is `SERVING`; down for any other
 * status (`status NOT_SERVING`, `status SERVICE_UNKNOWN`, `status UNKNOWN`), for a gRPC error,
 * named by its code (`UNIMPLEMENTED` from a server without the health service, `NOT_FOUND` for a
 * service the server does not know, `UNAVAILABLE` when it cannot connect or the TLS handshake
 * fails), and for `timeout` after `timeoutMs` (the call's deadline, armed on `checkDeadlines` as
 * every kind's). TLS (`tls: true`) verifies the chain against `ca` (else Node's roots) and the
 * name `serverName` ?? the target's host ?? its address.
 *
 * Uses `@grpc/grpc-js` (the gRPC project's Node implementation: HTTP/2 framing, status trailers,
 * deadlines) and `grpc-health-check` (the project's health.proto and its message codecs) rather
 * than gRPC framing written here.
 */
export function grpcCheck(m: GrpcMonitorConfig, ca: Buffer | undefined): CheckRun {
  const { grpc, check: CHECK } = grpcLibraries();
  const creds: ChannelCredentials = m.tls ? grpc.credentials.createSsl(ca ?? null) : grpc.credentials.createInsecure();
  const request = { service: m.service };
  return (target) => {
    const address = grpcAddress(target);
    const options = channelOptions(m, target);
    return (done) => {
      const started = performance.now();
      let client: Client | undefined;
      let call: { cancel(): void } | undefined;
      const finish = outcomeOnce(started, done, () => {
        checkDeadlines.disarm(m.timeoutMs, deadline);
        call?.cancel();
        client?.close();
      });
      const deadline = checkDeadlines.arm(m.timeoutMs, started, { timedOut: () => finish(false, 'timeout') });
      try {
        client = new grpc.Client(address, creds, options);
        call = client.makeUnaryRequest<{ service: string }, HealthCheckResponse>(
          CHECK.path,
          CHECK.requestSerialize,
          CHECK.responseDeserialize as (bytes: Buffer) => HealthCheckResponse,
          request,
          { deadline: Date.now() + m.timeoutMs + DEADLINE_GRACE_MS },
          (err: ServiceError | null, response?: HealthCheckResponse) => {
            if (err) finish(false, grpc.status[err.code] ?? `code ${err.code}`);
            else if (response?.status === 'SERVING') finish(true, '');
            else finish(false, `status ${response?.status ?? 'UNKNOWN'}`);
          },
        );
      } catch (e) {
        // The contract: never throw, never call back synchronously.
        setImmediate(() => finish(false, (e as Error).message));
      }
    };
  };
}

/** The channel target of `target`: an IP address and port, named with the `ipv4:`/`ipv6:` schemes so no resolver runs. */
function grpcAddress(target: CheckTarget): string {
  return isIPv6(target.address) ? `ipv6:[${target.address}]:${target.port}` : `ipv4:${target.address}:${target.port}`;
}

/**
 * Channel options of one check: its own subchannel pool (a new connection per check, closed with
 * the channel), no retries (one call is one check: rise/fall does the repeating), and the
 * `:authority` and TLS name from `serverName` ?? the target's host when one is set.
 */
function channelOptions(m: GrpcMonitorConfig, target: CheckTarget): ChannelOptions {
  const name = m.serverName ?? target.host;
  return {
    'grpc.use_local_subchannel_pool': 1,
    'grpc.enable_retries': 0,
    ...(name !== undefined ? { 'grpc.default_authority': name } : {}),
    // The certificate carries the name without a port (a check host may be written `name:port`).
    ...(m.tls && name !== undefined ? { 'grpc.ssl_target_name_override': name.replace(/:\d+$/, '') } : {}),
  };
}

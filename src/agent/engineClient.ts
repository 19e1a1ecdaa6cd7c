import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** A reply of the engine's agent API: status and parsed JSON body (undefined when not JSON). */
export interface EngineReply {
  readonly status: number;
  readonly json: unknown;
}

/** TLS material of an HTTPS engine, PEM. */
export interface EngineTls {
  /** CAs the engine's certificate must chain to (default: Node's bundled CAs). */
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
}

/** Largest reply body read (bytes): agent API replies are small. */
const MAX_REPLY_BYTES = 4 << 20;

/**
 * One engine's agent API over HTTP or HTTPS (Node's http/https with a keep-alive agent; for HTTPS
 * the engine's certificate is verified against `tls.ca` and its name against the URL's host, and a
 * client certificate is presented when given). Every request carries the agent's bearer token.
 */
export class EngineClient {
  private readonly agent: HttpAgent;
  private readonly https: boolean;

  constructor(
    readonly url: string,
    private readonly token: string,
    tls: EngineTls = {},
  ) {
    this.https = url.startsWith('https:');
    this.agent = this.https ? new HttpsAgent({ keepAlive: true, maxSockets: 4, ...tls }) : new HttpAgent({ keepAlive: true, maxSockets: 4 });
  }

  /**
   * Sends one request; resolves with any HTTP status.
   * @throws Error on a network or TLS failure (refused, unreachable, certificate not trusted) or when no reply came within `timeoutMs`.
   */
  request(method: 'GET' | 'POST', path: string, body: unknown, timeoutMs: number): Promise<EngineReply> {
    const url = new URL(path, this.url);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const send = this.https ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(
        url,
        {
          method,
          agent: this.agent,
          timeout: timeoutMs,
          headers: {
            authorization: `Bearer ${this.token}`,
            accept: 'application/json',
            ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          },
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size <= MAX_REPLY_BYTES) chunks.push(c);
          });
          res.on('end', () => {
            clearTimeout(deadline);
            let json: unknown;
            try {
              json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, json });
          });
          res.on('error', (e) => {
            clearTimeout(deadline);
            reject(e);
          });
        },
      );
      // The socket timeout only counts idle time; this bounds the whole exchange.
      const deadline = setTimeout(() => req.destroy(new Error(`no reply from ${this.url} within ${timeoutMs} ms`)), timeoutMs);
      req.on('timeout', () => req.destroy(new Error(`no reply from ${this.url} within ${timeoutMs} ms`)));
      req.on('error', (e) => {
        clearTimeout(deadline);
        reject(e);
      });
      req.end(payload);
    });
  }

  /** Closes idle connections. */
  close(): void {
    this.agent.destroy();
  }
}

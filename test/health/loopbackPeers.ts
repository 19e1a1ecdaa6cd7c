import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import dnsPacket from 'dns-packet';
import { generate } from 'selfsigned';

/**
 * Real servers on loopback for health-check tests: TCP, HTTP, HTTPS (certificate generated here)
 * and a UDP DNS responder. Each can be stopped and restarted on the same port. Peers never keep
 * a test process alive (their sockets are unref'd): a test that fails before stopping its peers
 * must not leave its ava worker running after the last test (it hung CI once).
 */

/** A peer that can be stopped and started again on the port it first got. */
export interface Peer {
  readonly port: number;
  stop(): Promise<void>;
  restart(): Promise<void>;
}

/** What the HTTP peer answers; change it while running. */
export interface HttpBehaviour {
  status: number;
  body: string;
  /** Delay before answering (ms); a long delay makes checks time out. */
  delayMs: number;
}

/** What the HTTP(S) peer saw of the last request. */
export interface SeenRequest {
  method: string;
  path: string;
  host: string | undefined;
  servername: string | undefined;
}

export interface HttpPeer extends Peer {
  readonly behaviour: HttpBehaviour;
  readonly seen: SeenRequest[];
  /** Requests served so far. */
  readonly count: () => number;
}

/** Answers of the DNS peer; change them while running. */
export interface DnsBehaviour {
  rcode: 'NOERROR' | 'NXDOMAIN' | 'SERVFAIL' | 'REFUSED';
  /** Address returned for A queries (none when undefined). */
  address: string | undefined;
}

export interface DnsPeer extends Peer {
  readonly behaviour: DnsBehaviour;
}

function listen(server: TcpServer | HttpServer, port: number, address: string): Promise<number> {
  server.on('connection', (c: Socket) => c.unref());
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: address }, () => {
      server.off('error', reject);
      server.unref();
      const a = server.address();
      resolve(typeof a === 'object' && a ? a.port : port);
    });
  });
}

function closeServer(server: TcpServer | HttpServer, sockets: Set<Socket>): Promise<void> {
  for (const s of sockets) s.destroy();
  sockets.clear();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A TCP server that accepts connections and closes them. */
export async function startTcpPeer(address = '127.0.0.1'): Promise<Peer> {
  const sockets = new Set<Socket>();
  const make = (): TcpServer =>
    createTcpServer((s) => {
      s.on('error', () => {});
      s.end();
    }).on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
  let server = make();
  const port = await listen(server, 0, address);
  return {
    port,
    stop: () => closeServer(server, sockets),
    async restart() {
      server = make();
      await listen(server, port, address);
    },
  };
}

/** A self-signed certificate for `names` (SAN DNS names), RSA 2048, generated at test time. */
export async function selfSignedCertificate(names: string[]): Promise<{ key: string; cert: string }> {
  const pems = await generate([{ name: 'commonName', value: names[0]! }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: names.map((value) => ({ type: 2 as const, value })) }],
  });
  return { key: pems.private, cert: pems.cert };
}

/** An HTTP server (or HTTPS with `tls`) whose answer is set through `behaviour`. */
export async function startHttpPeer(options: { tls?: { key: string; cert: string }; address?: string } = {}): Promise<HttpPeer> {
  const address = options.address ?? '127.0.0.1';
  const behaviour: HttpBehaviour = { status: 200, body: 'OK', delayMs: 0 };
  const seen: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  let served = 0;
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    served++;
    seen.push({ method: req.method ?? '', path: req.url ?? '', host: req.headers.host, servername: (req.socket as TLSSocket).servername || undefined });
    if (seen.length > 50) seen.shift();
    const answer = (): void => {
      res.writeHead(behaviour.status, { 'content-type': 'text/plain' });
      res.end(behaviour.body);
    };
    if (behaviour.delayMs > 0) setTimeout(answer, behaviour.delayMs);
    else answer();
  };
  const make = (): HttpServer => {
    const s = options.tls ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, handler) : createHttpServer(handler);
    s.on('connection', (c: Socket) => {
      sockets.add(c);
      c.on('close', () => sockets.delete(c));
    });
    s.on('tlsClientError', () => {});
    return s;
  };
  let server = make();
  const port = await listen(server, 0, address);
  return {
    port,
    behaviour,
    seen,
    count: () => served,
    stop: () => closeServer(server, sockets),
    async restart() {
      server = make();
      await listen(server, port, address);
    },
  };
}

/** A UDP DNS responder answering every question with `behaviour`. */
export async function startDnsPeer(address = '127.0.0.1'): Promise<DnsPeer> {
  const behaviour: DnsBehaviour = { rcode: 'NOERROR', address: '192.0.2.1' };
  const make = (): UdpSocket => {
    const socket = createSocket('udp4');
    socket.on('message', (msg, rinfo) => {
      let q: dnsPacket.Packet;
      try {
        q = dnsPacket.decode(msg);
      } catch {
        return;
      }
      const question = q.questions?.[0];
      if (!question) return;
      const rcodeBits = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 }[behaviour.rcode];
      const answers =
        behaviour.address !== undefined && question.type === 'A' && behaviour.rcode === 'NOERROR'
          ? [{ name: question.name, type: 'A' as const, ttl: 30, data: behaviour.address }]
          : [];
      const reply = dnsPacket.encode({ type: 'response', id: q.id, flags: dnsPacket.AUTHORITATIVE_ANSWER | rcodeBits, questions: [question], answers });
      socket.send(reply, rinfo.port, rinfo.address);
    });
    return socket;
  };
  const bind = (s: UdpSocket, port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      s.once('error', reject);
      s.bind(port, address, () => {
        s.off('error', reject);
        s.unref();
        resolve(s.address().port);
      });
    });
  let socket = make();
  const port = await bind(socket, 0);
  return {
    port,
    behaviour,
    stop: () => new Promise((resolve) => socket.close(() => resolve())),
    async restart() {
      socket = make();
      await bind(socket, port);
    },
  };
}

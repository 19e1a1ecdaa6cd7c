import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import dnsPacket from 'dns-packet';
import { stringify } from 'yaml';
import { PROTOCOL_VERSION } from '../../src/doors/compact/frameCodec.js';
import { FrameReader } from '../../src/doors/compact/frameReader.js';
import { decodeEngineFrame, encodeHello, encodeQuery } from '../support/compactClient.js';
import { CLI } from '../support/engineProcess.js';
import { childrenKilledAtExit } from '../support/childrenKilledAtExit.js';
import { startReplaceableEngine } from '../support/replaceableEngine.js';
import { zonesConfig } from '../support/powerdnsFixture.js';

/**
 * `gslbd ctl replace` (issue 26, item 2) with connections that are never between two requests:
 * a compact client (the CoreDNS plugin's protocol), a DNS-over-TCP client and a PowerDNS
 * remote-backend client on the Unix socket each write, every 2 ms, the rest of one request and
 * the first half of the next, so whenever the engine has read all there is, it holds part of a
 * request and has just answered the one before. Such a connection is never quiet: the hand-over
 * must stop reading it and pass it with the bytes read in part, not wait for a pause that never
 * comes (it used to close it at its 10 s deadline, with a request half sent). Every request is
 * answered, correctly, and no connection closes.
 */

const TOKEN = 'replace-busy-token-0123456789';
const WRITE_EVERY_MS = 2;
/** How long the clients go on after the old process exited (ms). */
const AFTER_HANDOVER_MS = 300;

const children = childrenKilledAtExit();

/** A protocol's side of a {@link BusyClient}: its requests and the check of each reply. */
interface Protocol {
  /** Request number `i`, encoded. */
  request(i: number): Buffer;
  /** Splits received bytes into replies and calls `reply` with an error text for a wrong one (undefined when right). */
  reader(reply: (problem: string | undefined) => void): (chunk: Buffer) => void;
}

/** A client that always leaves the engine holding part of its next request (see the file comment). */
class BusyClient {
  sent = 0;
  answered = 0;
  readonly problems: string[] = [];
  closed = false;
  private timer: NodeJS.Timeout | undefined;
  /** The second half of the request last begun. */
  private tail: Buffer = Buffer.alloc(0);

  constructor(
    readonly name: string,
    private readonly socket: Socket,
    private readonly protocol: Protocol,
  ) {
    socket.on(
      'data',
      protocol.reader((problem) => {
        this.answered++;
        if (problem !== undefined) this.problems.push(problem);
      }),
    );
    socket.on('close', () => (this.closed = true));
    socket.on('error', (e) => this.problems.push(`socket error ${e.message}`));
  }

  start(): void {
    this.timer = setInterval(() => {
      if (this.closed) return;
      const next = this.protocol.request(this.sent + 1);
      const half = next.length >> 1;
      // The previous request completes and the next one begins in the same write.
      this.socket.write(Buffer.concat([this.tail, next.subarray(0, half)]));
      this.tail = next.subarray(half);
      this.sent++;
    }, WRITE_EVERY_MS);
  }

  /** Completes the request begun last and resolves when every request is answered, or the connection closed, or after 10 s. */
  async finish(): Promise<void> {
    clearInterval(this.timer);
    if (!this.closed) this.socket.write(this.tail);
    for (let i = 0; i < 1000 && !this.closed && this.answered < this.sent; i++) await new Promise((r) => setTimeout(r, 10));
    this.socket.destroy();
  }
}

const compact: Protocol = {
  request: (i) => encodeQuery({ id: i, qtype: 1, qclass: 1, transport: 0, sourceAddress: '192.0.2.99', sourcePort: 5300, qname: 'www.example.test' }),
  reader: (reply) => {
    let next = 1;
    const frames = new FrameReader(131072, (f) => {
      const d = decodeEngineFrame(Buffer.from(f));
      if (d.kind === 'HELLO_ACK' || d.kind === 'PONG') return;
      const id = next++;
      const ok = d.kind === 'ANSWER' && d.id === id && d.rcode === 0 && d.answers.length === 1 && (d.answers[0] as { data?: unknown }).data === '192.0.2.10';
      reply(ok ? undefined : `query ${id}: ${JSON.stringify(d)}`);
    });
    return (chunk) => frames.push(chunk);
  },
};

const dnsOverTcp: Protocol = {
  request: (i) => dnsPacket.streamEncode({ type: 'query', id: i & 0xffff, flags: 0, questions: [{ type: 'A', name: 'www.example.test' }] }),
  reader: (reply) => {
    let pending = Buffer.alloc(0);
    let next = 1;
    return (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const m = dnsPacket.decode(pending.subarray(2, 2 + pending.readUInt16BE(0)));
        pending = pending.subarray(2 + pending.readUInt16BE(0));
        const id = next++ & 0xffff;
        const ok = m.id === id && ((m.flags ?? 0) & 0xf) === 0 && m.answers?.length === 1 && (m.answers[0] as { data?: unknown }).data === '192.0.2.10';
        reply(ok ? undefined : `query ${id}: ${JSON.stringify(m)}`);
      }
    };
  },
};

const powerdns: Protocol = {
  request: () =>
    Buffer.from(
      `${JSON.stringify({ method: 'lookup', parameters: { qname: 'www.example.test.', qtype: 'A', remote: '192.0.2.99', local: '127.0.0.1', 'real-remote': '192.0.2.99/32', 'zone-id': -1 } })}\n`,
    ),
  reader: (reply) => {
    let pending = '';
    let n = 0;
    return (chunk) => {
      pending += chunk.toString();
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        // The first reply is initialize's.
        if (n++ === 0) continue;
        const ok = /"content":"192\.0\.2\.10"/.test(line);
        reply(ok ? undefined : `lookup ${n - 1}: ${line}`);
      }
    };
  },
};

function open(path: string | { port: number }): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = typeof path === 'string' ? connect(path) : connect(path.port, '127.0.0.1');
    s.once('connect', () => {
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', reject);
  });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('gslbd ctl replace passes connections that always hold part of a request (compact, DNS over TCP, PowerDNS Unix): every request answered, none closed', async (t) => {
  t.timeout(120000);
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-replace-busy-'));
  const configFile = join(dir, 'gslbd.yaml');
  writeFileSync(
    configFile,
    stringify({
      ...zonesConfig(),
      listeners: {
        dns: [{ address: '127.0.0.1', port: 0 }],
        admin: { address: '127.0.0.1', port: 0, token: TOKEN },
        powerdns: { path: join(dir, 'pdns.sock') },
        compact: { path: join(dir, 'compact.sock') },
      },
    }),
  );
  const engine = await startReplaceableEngine(t, { configFile, dir, children });
  const { up } = engine;

  const compactSocket = await open(join(dir, 'compact.sock'));
  const compactClient = new BusyClient('compact', compactSocket, compact);
  // HELLO before the load: a connection passed before its HELLO would also do, but this one tests queries.
  compactSocket.write(encodeHello(PROTOCOL_VERSION, PROTOCOL_VERSION, 1024, 'busy-test'));
  const pdnsSocket = await open(join(dir, 'pdns.sock'));
  const pdnsClient = new BusyClient('PowerDNS (Unix)', pdnsSocket, powerdns);
  pdnsSocket.write(`${JSON.stringify({ method: 'initialize', parameters: { instance: 'busy' } })}\n`);
  const tcpClient = new BusyClient('DNS over TCP', await open({ port: Number(up.dns[0]!.split(':')[1]) }), dnsOverTcp);
  const clients = [compactClient, tcpClient, pdnsClient];
  for (const c of clients) c.start();
  await new Promise((r) => setTimeout(r, 300));

  const ctl = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const c = spawn(process.execPath, [CLI, 'ctl', '--admin', `http://${up.admin}`, 'replace'], { env: { ...process.env, GSLBD_TOKEN: TOKEN } });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out += d.toString()));
    c.on('close', (code) => resolve({ code, out }));
  });
  t.is(ctl.code, 0, ctl.out);
  // The old process exits once it has passed (or closed) every connection.
  for (let i = 0; i < 1200 && isRunning(up.pid); i++) await new Promise((r) => setTimeout(r, 25));
  t.false(isRunning(up.pid), `the old process exited:\n${engine.log()}`);
  await new Promise((r) => setTimeout(r, AFTER_HANDOVER_MS));
  const closedBeforeEnd = clients.filter((c) => c.closed).map((c) => c.name);
  await Promise.all(clients.map((c) => c.finish()));

  t.deepEqual(closedBeforeEnd, [], 'no connection was closed');
  t.regex(engine.log(), /"connections":3,[^\n]*"msg":"hand-over: every connection passed/);
  t.notRegex(engine.log(), /connections whose answers were not out in time were closed/);
  for (const c of clients) {
    t.log(`${c.name}: ${c.sent} requests, ${c.answered} answered`);
    t.true(c.sent > 0, `${c.name}: requests ran`);
    t.is(c.answered, c.sent, `${c.name}: every request answered`);
    t.deepEqual(c.problems.slice(0, 3), [], `${c.name}: every answer right`);
  }
});

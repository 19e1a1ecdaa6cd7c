import test from 'ava';
import { performance } from 'node:perf_hooks';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { createServer, Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { seededRandom } from '../../../test/support/seededRandom.js';
import { kernelTcpRttMs } from './nativeSockets.js';
import { probesSchema, type ProbesConfig } from './probeSchema.js';
import { Prober, ProbeRefusedError } from './prober.js';

/**
 * Probe trains against userspace responders on loopback whose delay and loss the test sets (no
 * `tc netem` here): a UDP responder answers each DNS query after `delayMs`, or drops it with
 * probability `loss` (seeded). Timing bounds allow for a loaded machine on the upper side only:
 * a reply can never come before the set delay.
 */

interface Responder {
  readonly port: number;
  received: number;
  close(): Promise<void>;
}

async function udpResponder(address: string, delayMs: number, loss = 0, seed = 1): Promise<Responder> {
  const random = seededRandom(seed);
  const socket: UdpSocket = createSocket('udp4');
  const r = { port: 0, received: 0, close: () => new Promise<void>((done) => socket.close(() => done())) };
  socket.on('message', (msg, from) => {
    r.received++;
    if (random() < loss) return;
    // The query echoed with QR set: any response times the path.
    const reply = Buffer.from(msg);
    reply[2] = reply[2]! | 0x80;
    // Node's timers count from the event loop's cached clock and may fire early by its staleness:
    // the rest of the delay is waited out, so a reply never comes before it (CI: min 4.653 ms for 5).
    const receivedAt = performance.now();
    const send = (): void => {
      const left = delayMs - (performance.now() - receivedAt);
      if (left > 0) setTimeout(send, Math.ceil(left));
      else socket.send(reply, from.port, from.address);
    };
    setTimeout(send, delayMs);
  });
  await new Promise<void>((done) => socket.bind(0, address, () => done()));
  r.port = (socket.address() as AddressInfo).port;
  return r;
}

function config(over: Partial<ProbesConfig> & { port: number }): ProbesConfig {
  return probesSchema.parse({ allow: ['127.0.0.1/32'], trainLength: 20, gapMs: 10, timeoutMs: 1000, maxPacketsPerSecond: 1000, ...over });
}

for (const d of [5, 40, 120]) {
  test(`DNS train with a set delay of ${d} ms: min RTT in [d, d + 3], median ≤ d + 5, nothing lost`, async (t) => {
    const responder = await udpResponder('127.0.0.1', d);
    t.teardown(() => responder.close());
    const [r] = await new Prober(config({ port: responder.port })).probe('127.0.0.1');
    t.like(r, { target: '127.0.0.1', method: 'dns', sent: 20, received: 20 });
    t.true(r!.rttMinMs! >= d && r!.rttMinMs! <= d + 3, `min ${r!.rttMinMs} ms`);
    t.true(r!.rttMedianMs! <= d + 5, `median ${r!.rttMedianMs} ms`);
    t.log(`d=${d}: min ${r!.rttMinMs} median ${r!.rttMedianMs} jitter ${r!.jitterMs}`);
  });
}

test('DNS train with 20 % loss: the loss read is within the binomial bound (n = 200, ± 3σ = ± 17 packets)', async (t) => {
  const responder = await udpResponder('127.0.0.1', 1, 0.2, 7);
  t.teardown(() => responder.close());
  const [r] = await new Prober(config({ port: responder.port, trainLength: 200, gapMs: 2 })).probe('127.0.0.1');
  const lost = r!.sent - r!.received;
  t.is(responder.received, 200, 'every query reached the responder');
  t.true(Math.abs(lost - 40) <= 17, `${lost} of 200 lost`);
});

test('TCP connect trains: an accepted connection and a refused one (RST) both time the path; no TTL', async (t) => {
  const server = createServer((s) => s.destroy());
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  const open = (server.address() as AddressInfo).port;
  t.teardown(() => new Promise<void>((done) => server.close(() => done())));
  const [accepted] = await new Prober(config({ port: open, methods: ['tcp'], trainLength: 5 })).probe('127.0.0.1');
  t.like(accepted, { method: 'tcp', sent: 5, received: 5 });
  t.is(accepted!.ttl, undefined);
  const closed = await new Promise<number>((done) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => done(p));
    });
  });
  const [refused] = await new Prober(config({ port: closed, methods: ['tcp'], trainLength: 5 })).probe('127.0.0.1');
  t.like(refused, { method: 'tcp', sent: 5, received: 5 });
  t.true(refused!.rttMinMs! < 50);
});

test('a probe to an address outside probes.allow is refused before any packet is sent', async (t) => {
  const responder = await udpResponder('127.0.0.2', 1);
  t.teardown(() => responder.close());
  const prober = new Prober(config({ port: responder.port }));
  await t.throwsAsync(prober.probe('127.0.0.2'), { instanceOf: ProbeRefusedError });
  await new Promise((r) => setTimeout(r, 100));
  t.is(responder.received, 0, 'no packet reached 127.0.0.2');
  await t.throwsAsync(
    new Prober(probesSchema.parse({ port: responder.port })).probe('127.0.0.1'),
    { instanceOf: ProbeRefusedError },
    'the default allow list is empty',
  );
});

test('the global packet cap paces trains: two trains of 10 at 10 packets/s take at least 0.9 s once the bucket of 10 is spent', async (t) => {
  const responder = await udpResponder('127.0.0.1', 0);
  t.teardown(() => responder.close());
  const prober = new Prober(config({ port: responder.port, maxPacketsPerSecond: 10, trainLength: 10, gapMs: 1 }));
  const started = performance.now();
  await Promise.all([prober.probe('127.0.0.1'), prober.probe('127.0.0.1')]);
  const took = performance.now() - started;
  // 20 packets at 10/s with a bucket of 10: the second 10 need ≥ 0.9 s of refill.
  t.true(took >= 900, `${Math.round(took)} ms`);
  t.is(responder.received, 20);
});

/** Blocks the event loop for `ms` (a stand-in for a busy agent: timers, reports, other trains). */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

test.serial('a connected TCP probe reads the kernel RTT (TCP_INFO), not the 100 ms the event loop stalled after the connect', async (t) => {
  const server = createServer((s) => s.destroy());
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  t.teardown(() => new Promise<void>((done) => server.close(() => done())));
  const port = (server.address() as AddressInfo).port;

  const socket = new Socket();
  const startedAt = performance.now();
  const connected = once(socket, 'connect');
  socket.connect({ port, host: '127.0.0.1' });
  // Node sends the SYN on the next tick (an address needs no lookup); the stall comes right after it.
  process.nextTick(() => process.nextTick(() => stall(100)));
  await connected;
  const loopMs = performance.now() - startedAt;
  const kernelMs = kernelTcpRttMs(socket);
  socket.destroy();
  t.true(loopMs >= 100, `the event loop saw the connect after ${loopMs} ms`);
  t.true(kernelMs !== undefined && kernelMs > 0 && kernelMs < 20, `kernel RTT ${kernelMs} ms`);

  // The same through the prober: every connect of the train is followed by a stall.
  const proto = Socket.prototype as unknown as { connect: (this: Socket, ...args: unknown[]) => Socket };
  const connect = proto.connect;
  proto.connect = function (this: Socket, ...args: unknown[]) {
    const r = connect.apply(this, args);
    process.nextTick(() => process.nextTick(() => stall(100)));
    return r;
  };
  try {
    const [r] = await new Prober(config({ port, methods: ['tcp'], trainLength: 3, gapMs: 1 })).probe('127.0.0.1');
    t.like(r, { method: 'tcp', sent: 3, received: 3 });
    t.true(r!.rttMedianMs! < 20, `median ${r!.rttMedianMs} ms`);
  } finally {
    proto.connect = connect;
  }
});

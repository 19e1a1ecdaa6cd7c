import { isIPv6, Socket } from 'node:net';
import dnsPacket from 'dns-packet';
import { openUdpProbeSocket } from './nativeSockets.js';
import type { PacketBudget } from './packetBudget.js';

/** One train's raw outcome: packets sent, the RTT (ms) of each answered packet in sending order, and the TTL (hop limit) of each reply when the method reads it (ICMP, DNS). */
export interface TrainOutcome {
  readonly sent: number;
  readonly rtts: readonly number[];
  readonly ttls?: readonly number[];
}

/** How a train is paced: packets, the gap between them, the loss deadline of each, and the global packet budget. */
export interface TrainPacing {
  readonly length: number;
  readonly gapMs: number;
  readonly timeoutMs: number;
  readonly budget: PacketBudget;
}

/**
 * A train of DNS queries over UDP (type NS for `name`) to `target`:`port`: any response with the
 * query's id from the target — an answer, a referral, an error — times the path, as the resolver
 * had to receive and answer it. Packets are sent `gapMs` apart, each waits up to `timeoutMs`. The
 * socket is native/icmp.cc's (src/agent/probes/nativeSockets.ts): the RTT runs from just before
 * `sendto` to the kernel's receive timestamp, so a busy event loop does not stretch it, and a reply
 * the kernel received within `timeoutMs` counts even when the timer fired first; each reply's TTL
 * (IPv4) or hop limit (IPv6) is kept, from which the prober infers hops as for ICMP.
 */
export async function dnsTrain(target: string, port: number, name: string, pacing: TrainPacing): Promise<TrainOutcome> {
  const pending = new Map<number, { sentAtMs: number; settle: (rtt: number | undefined, ttl?: number) => void }>();
  const ttls: number[] = [];
  const socket = openUdpProbeSocket(isIPv6(target) ? 6 : 4, (from, fromPort, ttl, receivedAtMs, msg) => {
    if (msg.length < 2 || from !== target || fromPort !== port) return;
    const p = pending.get(msg.readUInt16BE(0));
    if (!p) return;
    const rtt = Math.max(0, receivedAtMs - p.sentAtMs);
    // Read after the loss verdict was due (a stalled loop), but received by the kernel in time: it counts; later, it is lost.
    p.settle(rtt <= pacing.timeoutMs ? rtt : undefined, ttl);
  });
  const firstId = Math.floor(Math.random() * 0x10000);
  try {
    const outcome = await train(pacing, (i) => {
      const id = (firstId + i) & 0xffff;
      const query = dnsPacket.encode({ type: 'query', id, flags: 0, questions: [{ type: 'NS', name }] });
      return new Promise<number | undefined>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const settle = (rtt: number | undefined, ttl?: number): void => {
          clearTimeout(timer);
          pending.delete(id);
          if (rtt !== undefined && ttl !== undefined && ttl > 0) ttls.push(ttl);
          resolve(rtt);
        };
        let sentAtMs: number;
        try {
          sentAtMs = socket.send(target, port, query);
        } catch {
          resolve(undefined);
          return;
        }
        const entry = { sentAtMs, settle };
        pending.set(id, entry);
        // Node runs expired timers before it reads sockets: the verdict waits for the next poll phase.
        timer = setTimeout(() => setImmediate(() => pending.get(id) === entry && settle(undefined)), pacing.timeoutMs);
      });
    });
    return { ...outcome, ttls };
  } finally {
    socket.close();
  }
}

/**
 * A train of TCP connects to `target`:`port`: a SYN-ACK (connected) or a RST (refused) both time
 * the path; anything else within `timeoutMs` counts as lost. A connect gives RTT only: no TTL. A
 * connected socket's RTT is `kernelRtt`'s (the kernel's SYN → SYN-ACK sample, unaffected by a late
 * event loop) when it gives one; a refused one, and any socket it gives none for, is timed here
 * from just before `connect` to the event.
 */
export function tcpTrain(
  target: string,
  port: number,
  pacing: TrainPacing,
  kernelRtt: (socket: Socket) => number | undefined = () => undefined,
): Promise<TrainOutcome> {
  return train(
    pacing,
    () =>
      new Promise<number | undefined>((resolve) => {
        const socket = new Socket();
        const startedAt = performance.now();
        const done = (rtt: number | undefined): void => {
          clearTimeout(timer);
          socket.destroy();
          resolve(rtt);
        };
        const timer = setTimeout(() => done(undefined), pacing.timeoutMs);
        socket.once('connect', () => {
          const elapsed = performance.now() - startedAt;
          done(kernelRtt(socket) ?? elapsed);
        });
        socket.once('error', (e: NodeJS.ErrnoException) => done(e.code === 'ECONNREFUSED' ? performance.now() - startedAt : undefined));
        socket.connect({ host: target, port });
      }),
  );
}

/** Sends `pacing.length` packets `gapMs` apart (each after a token of the budget) and gathers their RTTs (undefined: lost) in sending order. */
export async function train(pacing: TrainPacing, packet: (i: number) => Promise<number | undefined>): Promise<TrainOutcome> {
  const inFlight: Promise<number | undefined>[] = [];
  for (let i = 0; i < pacing.length; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, pacing.gapMs));
    await pacing.budget.take();
    inFlight.push(packet(i));
  }
  const rtts = (await Promise.all(inFlight)).filter((r): r is number => r !== undefined);
  return { sent: pacing.length, rtts };
}

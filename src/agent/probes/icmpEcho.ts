import { isIPv6 } from 'node:net';
import { openIcmpSocket, type NativeIcmpSocket } from './nativeSockets.js';
import type { TrainOutcome, TrainPacing } from './pathProbes.js';
import { train } from './pathProbes.js';

/** ICMP echo request / reply types: IPv4 (RFC 792) and ICMPv6 (RFC 4443 §4). */
export const ECHO = { 4: { request: 8, reply: 0 }, 6: { request: 128, reply: 129 } } as const;

/** 16 bytes after the ICMP header, like ping's minimum: small, and the same for every probe. */
const PAYLOAD = Buffer.from('gslbd-agent-echo');

interface Pending {
  readonly sentAtMs: number;
  readonly timeoutMs: number;
  readonly settle: (rtt: number | undefined, ttl?: number) => void;
}

/**
 * ICMP echo trains (docs/PRODUCT.md §5; issue 19 "client-path probes"): with CAP_NET_RAW, one raw
 * socket per address family, shared by every train in flight and closed when none is, so concurrent
 * trains do not each read every reply; without it, a ping socket per train (net.ipv4.ping_group_range,
 * src/agent/probes/nativeSockets.ts), whose identifier the kernel sets and filters replies by.
 * Requests carry an identifier unique among the trains in flight and the packet's index as sequence;
 * a reply counts when its sender, identifier and sequence match. The RTT runs from just before
 * `sendto` to the kernel's receive timestamp, so a busy event loop does not stretch it, and a reply
 * the kernel received within `timeoutMs` counts even when the timer fired first (the loss verdict
 * waits for the I/O poll after the timer). Each reply's TTL gives the path's hops
 * (src/agent/probes/hopCount.ts), read alike from both kinds of socket.
 */
export class IcmpEchoer {
  private readonly sockets = new Map<4 | 6, { socket: NativeIcmpSocket; users: number }>();
  private readonly pending = new Map<string, Pending>();
  private readonly activeIds = new Set<number>();
  /** Identifiers are handed out in turn from a random start, so a restarted agent does not reuse the last one's. */
  private nextId = Math.floor(Math.random() * 0x10000);

  /**
   * One train of `pacing.length` echo requests to `target`.
   * @throws Error when no ICMP socket can be opened (no addon; no CAP_NET_RAW and a group outside net.ipv4.ping_group_range).
   */
  async train(target: string, pacing: TrainPacing): Promise<TrainOutcome> {
    const family = isIPv6(target) ? 6 : 4;
    const { socket, trainId, release } = this.lease(family);
    const ttls: number[] = [];
    try {
      const outcome = await train(
        pacing,
        (i) =>
          new Promise<number | undefined>((resolve) => {
            const key = `${family} ${target} ${trainId} ${i}`;
            let timer: NodeJS.Timeout | undefined;
            const settle = (rtt: number | undefined, ttl?: number): void => {
              clearTimeout(timer);
              this.pending.delete(key);
              if (rtt !== undefined && ttl !== undefined && ttl > 0) ttls.push(ttl);
              resolve(rtt);
            };
            let sentAtMs: number;
            try {
              sentAtMs = socket.send(target, ECHO[family].request, 0, trainId, i & 0xffff, PAYLOAD);
            } catch {
              resolve(undefined);
              return;
            }
            const entry = { sentAtMs, timeoutMs: pacing.timeoutMs, settle };
            this.pending.set(key, entry);
            // Node runs expired timers before it reads sockets: the verdict waits for the next poll phase.
            timer = setTimeout(() => setImmediate(() => this.pending.get(key) === entry && settle(undefined)), pacing.timeoutMs);
          }),
      );
      return { ...outcome, ttls };
    } finally {
      release();
    }
  }

  /** An identifier no train in flight uses (two trains sharing one would take each other's replies). */
  private takeId(): number {
    if (this.activeIds.size >= 0x10000) throw new Error('65,536 ICMP trains in flight: no identifier left');
    while (this.activeIds.has(this.nextId)) this.nextId = (this.nextId + 1) & 0xffff;
    const id = this.nextId;
    this.nextId = (id + 1) & 0xffff;
    this.activeIds.add(id);
    return id;
  }

  /**
   * The socket and echo identifier of one train: the shared raw socket of `family` and an identifier
   * of our own, or — without CAP_NET_RAW — a ping socket of the train's own, whose identifier the
   * kernel picked (ping sockets only read replies to their own identifier).
   */
  private lease(family: 4 | 6): { socket: NativeIcmpSocket; trainId: number; release: () => void } {
    let entry = this.sockets.get(family);
    if (!entry) {
      const socket = openIcmpSocket(family, (from, type, _code, id, seq, ttl, at) => this.onMessage(family, from, type, id, seq, ttl, at));
      if (socket.ident() >= 0) return { socket, trainId: socket.ident(), release: () => socket.close() };
      entry = { socket, users: 0 };
      this.sockets.set(family, entry);
    }
    const shared = entry;
    shared.users++;
    let trainId: number;
    try {
      trainId = this.takeId();
    } catch (e) {
      this.releaseShared(family, shared);
      throw e;
    }
    return {
      socket: shared.socket,
      trainId,
      release: () => {
        this.activeIds.delete(trainId);
        this.releaseShared(family, shared);
      },
    };
  }

  private releaseShared(family: 4 | 6, entry: { socket: NativeIcmpSocket; users: number }): void {
    if (--entry.users > 0) return;
    entry.socket.close();
    this.sockets.delete(family);
  }

  private onMessage(family: 4 | 6, from: string, type: number, id: number, seq: number, ttl: number, receivedAtMs: number): void {
    if (type !== ECHO[family].reply) return;
    const p = this.pending.get(`${family} ${from} ${id} ${seq}`);
    if (!p) return;
    const rtt = Math.max(0, receivedAtMs - p.sentAtMs);
    // Read after the loss verdict was due (a stalled loop), but received by the kernel in time: it counts; later, it is lost.
    p.settle(rtt <= p.timeoutMs ? rtt : undefined, ttl);
  }
}

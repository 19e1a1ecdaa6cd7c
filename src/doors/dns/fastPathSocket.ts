import { parseIp, type IpAddress } from '../../core/net/ipAddress.js';
import type { Logger } from '../../core/telemetry/logger.js';
import type { FastPathAddon, FastPathBatch, FastPathHandle, FastPathStats } from './fastPathAddon.js';
import type { FastPathMetrics } from './fastPathMetrics.js';
import type { MessageHandler, ReplyReuse } from './handleMessage.js';

/**
 * One listener address served by the native fast path (`native/fast_path.cc`, README "Fast
 * path"): native threads answer the queries whose reply they hold a template for; every other
 * datagram reaches {@link MessageHandler.handle} here, one call per batch, exactly as the Node
 * socket would hand it, and its reply goes back through the addon, kept as a template when
 * `handle` says it may be replayed for the client's block. Every publish of the engine starts a
 * new template generation before the publish returns. With `dns.queryLogSampleRate` > 0 the
 * threads hand that fraction of their hits over too, flagged, and `handle` logs each of them: the
 * query log samples hits and misses alike.
 */
export class FastPathSocket {
  private readonly server: FastPathHandle;
  private readonly unsubscribe: () => void;
  private peerText = '';
  private peer: IpAddress | undefined;
  private readonly reuse: ReplyReuse = { scope: -1 };

  /**
   * Binds `address`:`port` with `threads` native sockets and threads.
   * @throws Error when the address cannot be bound.
   */
  constructor(
    private readonly addon: FastPathAddon,
    private readonly messages: MessageHandler,
    private readonly log: Logger,
    onPublish: ((listener: () => void) => () => void) | undefined,
    address: string,
    port: number,
    threads: number,
    sampleRate: number,
    private readonly metrics: FastPathMetrics,
  ) {
    this.server = addon.open(address, port, threads, (batch, packets, peers, _ports, sampled) => this.answer(batch, packets, peers, sampled), sampleRate);
    // Without publish notifications nothing could ever make a template stale: keep none.
    this.unsubscribe = onPublish ? onPublish(() => addon.bump(this.server)) : () => undefined;
    this.keep = onPublish !== undefined;
    metrics.add(this.counters);
  }

  private readonly counters = (): FastPathStats => this.addon.stats(this.server);

  private readonly keep: boolean;

  /** Counters since the socket opened. */
  stats(): FastPathStats {
    return this.addon.stats(this.server);
  }

  /** Samples that fraction (0–1) of the threads' template hits for the query log from their next batch on (a reload's `dns.queryLogSampleRate`). */
  setSampleRate(rate: number): void {
    this.addon.setSampleRate(this.server, rate);
  }

  /** Stops the native threads and closes the sockets. */
  close(): void {
    this.unsubscribe();
    this.metrics.remove(this.counters);
    this.addon.close(this.server);
  }

  private answer(batch: FastPathBatch, packets: Buffer[], peers: string[], sampled: Uint8Array | undefined): void {
    const n = packets.length;
    const replies: (Buffer | null)[] = new Array<Buffer | null>(n).fill(null);
    const scopes = new Int32Array(n).fill(-1);
    for (let i = 0; i < n; i++) {
      try {
        if (peers[i] !== this.peerText || !this.peer) {
          this.peer = parseIp(peers[i]!);
          this.peerText = peers[i]!;
        }
        this.reuse.scope = -1;
        const reply = this.messages.handle(packets[i]!, 'udp', this.peer, this.keep ? this.reuse : undefined, sampled !== undefined && sampled[i] === 1);
        if (reply instanceof Promise) {
          reply.then(
            (bytes) => this.addon.replyOne(this.server, batch, i, bytes),
            (e: unknown) => this.log.error({ err: e }, 'UDP message handling failed'),
          );
        } else {
          replies[i] = reply;
          scopes[i] = this.reuse.scope;
        }
      } catch (e) {
        this.log.error({ err: e }, 'UDP message handling failed');
      }
    }
    try {
      this.addon.reply(this.server, batch, replies, scopes);
    } catch (e) {
      this.log.error({ err: e }, 'fast path reply failed');
    }
  }
}

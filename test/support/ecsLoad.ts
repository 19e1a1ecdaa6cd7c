import { createSocket } from 'node:dgram';
import { buildQuery, decodeReply } from './dnsClient.js';
import { seededUint32 } from './seededRandom.js';
import { waitFor } from './waitFor.js';

/**
 * A UDP load of many ECS clients against one DNS server (the CoreDNS restart tests): one query
 * per client in turn, a sliding window of queries in flight, every reply recorded with when its
 * query left and when it came back. Times are `performance.now()` ms of the test process.
 */

/** One reply of the load: which client, when its query left and its reply came (ms), rcode, A addresses and their TTL (−1 without A). */
export interface EcsAnswer {
  readonly client: number;
  readonly sentAt: number;
  readonly at: number;
  readonly rcode: number;
  readonly addresses: string;
  readonly ttl: number;
}

/** A running load: the replies so far (appended as they come), and `stop()`. */
export interface EcsLoad {
  readonly answers: EcsAnswer[];
  /** Stops sending; resolves once every query was answered or lost, with the send times of the lost ones. */
  stop(): Promise<{ lost: number[] }>;
}

/** `count` distinct client /24s over the IPv4 unicast space (127/8 left out), as network addresses; the same set for the same seed. */
export function seededClientBlocks(count: number, seed: number): string[] {
  const next = seededUint32(seed);
  const blocks = new Set<string>();
  while (blocks.size < count) {
    const n = next();
    const first = 1 + ((n >>> 24) % 223);
    if (first === 127) continue;
    blocks.add(`${first}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.0`);
  }
  return [...blocks];
}

/**
 * Queries `name A` for each block of `blocks` in turn (ECS source /24) at `127.0.0.1:port`,
 * `inFlight` at a time (each reply or loss lets the next query go), until `stop()`. A query
 * without a reply after `lostMs` counts lost.
 */
export async function startEcsLoad(port: number, name: string, blocks: readonly string[], inFlight: number, lostMs: number): Promise<EcsLoad> {
  const socket = createSocket({ type: 'udp4', recvBufferSize: 4 << 20 });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  const queries = blocks.map((b) => buildQuery({ name, type: 'A', edns: { ecs: `${b}/24` } }));
  const answers: EcsAnswer[] = [];
  const lost: number[] = [];
  const outstanding = new Map<number, { client: number; sentAt: number }>();
  let nextClient = 0;
  let nextId = 0;
  let running = true;
  const send = (): void => {
    // The next free ID: IDs rotate over 16 bits, far more than the window.
    while (outstanding.has(nextId)) nextId = (nextId + 1) & 0xffff;
    const client = nextClient;
    nextClient = (nextClient + 1) % blocks.length;
    const message = Buffer.from(queries[client]!);
    message.writeUInt16BE(nextId, 0);
    outstanding.set(nextId, { client, sentAt: performance.now() });
    nextId = (nextId + 1) & 0xffff;
    socket.send(message, port, '127.0.0.1');
  };
  socket.on('message', (raw: Buffer) => {
    const q = outstanding.get(raw.readUInt16BE(0));
    if (!q) return;
    outstanding.delete(raw.readUInt16BE(0));
    const reply = decodeReply(raw);
    const a = (reply.packet.answers ?? []).filter((r) => r.type === 'A') as { data: string; ttl?: number }[];
    answers.push({
      ...q,
      at: performance.now(),
      rcode: reply.rcode,
      addresses: a.map((r) => r.data).join(','),
      ttl: a[0]?.ttl ?? -1,
    });
    if (running) send();
  });
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [id, q] of outstanding) {
      if (now - q.sentAt < lostMs) continue;
      outstanding.delete(id);
      lost.push(q.sentAt);
      if (running) send();
    }
  }, 100);
  for (let i = 0; i < inFlight; i++) send();
  return {
    answers,
    stop: async () => {
      running = false;
      await waitFor('the last queries answered or lost', () => outstanding.size === 0, lostMs + 2000, { everyMs: 50 });
      clearInterval(sweep);
      socket.close();
      return { lost };
    },
  };
}

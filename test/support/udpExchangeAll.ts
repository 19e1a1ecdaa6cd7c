import { createSocket } from 'node:dgram';

/**
 * Queries kept in flight by {@link exchangeAll}: few enough that a server's default receive buffer
 * (rmem_default, 208 KiB: about 160 small datagrams on loopback) holds them all while its thread is
 * busy, since a lost query is asked again later, out of order, and would put a rotating answer out of step.
 */
const IN_FLIGHT = 96;
/** A query without a reply after this long (ms, times its attempt) is sent again. */
const RETRY_MS = 1000;
const ATTEMPTS = 6;

/**
 * Sends every query over UDP to `address`:`port` and returns the replies by index, keeping
 * {@link IN_FLIGHT} queries outstanding (a sliding window: each reply lets the next query go, so
 * a run costs the server's time, not one round trip per batch). Query `i` must carry the ID
 * `i & 0xffff`; a reply is matched to its query by ID. A query not answered within
 * {@link RETRY_MS} × its attempt is sent again (UDP may drop).
 * @throws Error when a query is still unanswered after {@link ATTEMPTS} attempts.
 */
export async function exchangeAll(address: string, port: number, queries: readonly Buffer[]): Promise<Buffer[]> {
  return (await exchangeWindow(address, port, queries, RETRY_MS, ATTEMPTS, false)) as Buffer[];
}

/**
 * {@link exchangeAll} for queries a server may rightly leave unanswered (malformed ones: a
 * header with QR set, a message too short for one): a query unanswered after `attempts` sends,
 * `retryMs` × its attempt apart, is `undefined` in the result instead of an error.
 */
export async function exchangeAllOrUnanswered(
  address: string,
  port: number,
  queries: readonly Buffer[],
  retryMs = 200,
  attempts = 2,
): Promise<(Buffer | undefined)[]> {
  return exchangeWindow(address, port, queries, retryMs, attempts, true);
}

async function exchangeWindow(
  address: string,
  port: number,
  queries: readonly Buffer[],
  retryMs: number,
  attempts: number,
  unansweredAllowed: boolean,
): Promise<(Buffer | undefined)[]> {
  const socket = createSocket({ type: address.includes(':') ? 'udp6' : 'udp4', recvBufferSize: 4 << 20 });
  await new Promise<void>((r) => socket.bind(0, address, r));
  const replies: (Buffer | undefined)[] = new Array<Buffer | undefined>(queries.length);
  /** Outstanding queries by ID: index, attempts so far, when last sent (ms). */
  const outstanding = new Map<number, { index: number; attempts: number; sentAt: number }>();
  let next = 0;
  let done = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const send = (index: number, attempt: number): void => {
        outstanding.set(index & 0xffff, { index, attempts: attempt, sentAt: Date.now() });
        socket.send(queries[index]!, port, address);
      };
      const fill = (): void => {
        while (outstanding.size < IN_FLIGHT && next < queries.length) send(next++, 1);
        if (done === queries.length) finish();
      };
      const timer = setInterval(
        () => {
          const now = Date.now();
          for (const [id, q] of outstanding) {
            if (now - q.sentAt < retryMs * q.attempts) continue;
            if (q.attempts < attempts) send(q.index, q.attempts + 1);
            else if (!unansweredAllowed) return finish(new Error(`no reply to query ${q.index} after ${attempts} attempts`));
            else {
              outstanding.delete(id);
              done++;
            }
          }
          fill();
        },
        Math.max(1, retryMs / 4),
      );
      function finish(err?: Error): void {
        clearInterval(timer);
        socket.off('message', onMessage);
        if (err) reject(err);
        else resolve();
      }
      function onMessage(msg: Buffer): void {
        if (msg.length < 2) return;
        const q = outstanding.get(msg.readUInt16BE(0));
        if (q === undefined || replies[q.index]) return;
        replies[q.index] = msg;
        outstanding.delete(msg.readUInt16BE(0));
        done++;
        fill();
      }
      socket.on('message', onMessage);
      fill();
    });
  } finally {
    socket.close();
  }
  return replies;
}

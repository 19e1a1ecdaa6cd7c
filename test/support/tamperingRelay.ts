import { createSocket, type Socket } from 'node:dgram';

/**
 * A UDP relay on loopback between a resolver and an authoritative server that changes the
 * server's replies on the way (`tamper`), as an attacker on the path would: the DNSSEC tests put
 * it in front of a signed zone to prove that a validating resolver rejects an answer whose data
 * no longer matches its signature. Each query gets its own upstream socket, so replies cannot be
 * confused; a query without a reply within 5 s is dropped with its socket.
 */
export interface TamperingRelay {
  readonly address: string;
  readonly port: number;
  /** Replies changed so far (`tamper` returned a different buffer). */
  readonly tampered: () => number;
  close(): Promise<void>;
}

/**
 * Starts a relay to `upstream` on a free 127.0.0.1 port.
 * @param tamper returns the reply to send on (the same buffer to leave it alone).
 */
export async function startTamperingRelay(upstream: { address: string; port: number }, tamper: (reply: Buffer) => Buffer): Promise<TamperingRelay> {
  const front = createSocket('udp4');
  const open = new Set<Socket>();
  let count = 0;
  front.on('message', (query, client) => {
    const up = createSocket('udp4');
    open.add(up);
    const done = (): void => {
      clearTimeout(timer);
      open.delete(up);
      up.close();
    };
    const timer = setTimeout(done, 5000);
    up.on('error', done);
    up.once('message', (reply) => {
      const changed = tamper(reply);
      if (changed !== reply) count++;
      front.send(changed, client.port, client.address);
      done();
    });
    up.send(query, upstream.port, upstream.address);
  });
  await new Promise<void>((resolve) => front.bind(0, '127.0.0.1', resolve));
  return {
    address: '127.0.0.1',
    port: front.address().port,
    tampered: () => count,
    close: async () => {
      for (const s of open) s.close();
      await new Promise<void>((resolve) => front.close(() => resolve()));
    },
  };
}

/**
 * `reply` with the last octet of the IPv4 address `address` (as A record data) flipped wherever
 * it occurs, or `reply` itself when it does not occur: the answer's data changes, its RRSIG stays.
 */
export function flipAddress(reply: Buffer, address: string): Buffer {
  const octets = Buffer.from(address.split('.').map(Number));
  const at = reply.indexOf(octets);
  if (at < 0) return reply;
  const out = Buffer.from(reply);
  for (let i = at; i >= 0; i = out.indexOf(octets, i + 4)) out[i + 3]! ^= 0x01;
  return out;
}

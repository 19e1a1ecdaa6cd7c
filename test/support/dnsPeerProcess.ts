import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { createServer } from 'node:net';

/**
 * A DNS peer for probes inside a network namespace (started by {@link startDnsPeer} in `dnsPeer.ts`):
 * on port 53 of every address of its namespace, IPv4 and IPv6 (dual-stack sockets), it answers each
 * UDP query at once with the query echoed with QR set (any response times a DNS probe) and accepts
 * and closes each TCP connection (a TCP probe's SYN-ACK). Prints `ready` once listening and, on
 * SIGTERM, `udp N tcp M` (queries and connections seen) before it exits.
 */
const udp = createSocket({ type: 'udp6', ipv6Only: false });
let queries = 0;
let connections = 0;
udp.on('message', (msg, from) => {
  queries++;
  if (msg.length < 12) return;
  const reply = Buffer.from(msg);
  reply[2] = reply[2]! | 0x80;
  udp.send(reply, from.port, from.address);
});
const tcp = createServer((socket) => {
  connections++;
  socket.destroy();
});
udp.bind(53, '::');
tcp.listen({ port: 53, host: '::', ipv6Only: false });
await Promise.all([once(udp, 'listening'), once(tcp, 'listening')]);
process.on('SIGTERM', () => {
  process.stdout.write(`udp ${queries} tcp ${connections}\n`, () => process.exit(0));
});
process.stdout.write('ready\n');

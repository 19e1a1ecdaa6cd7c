import { createSocket } from 'node:dgram';

/**
 * The Node runtime's own UDP ceiling: answers every datagram with one precomputed reply, only the
 * 2-byte query ID copied in. No parsing, no engine, no metrics.
 *
 * Usage: `node fixedResponder.js <port> <reply as hex>`; binds 127.0.0.1 and prints `ready`.
 */
const [port, replyHex] = process.argv.slice(2);
const reply = Buffer.from(replyHex ?? '', 'hex');
if (!port || reply.length < 12) {
  process.stderr.write('usage: fixedResponder.js <port> <reply hex, at least a DNS header>\n');
  process.exit(1);
}
const socket = createSocket('udp4');
socket.on('message', (msg, rinfo) => {
  if (msg.length < 2) return;
  const out = Buffer.from(reply);
  out[0] = msg[0]!;
  out[1] = msg[1]!;
  socket.send(out, rinfo.port, rinfo.address);
});
socket.bind(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));

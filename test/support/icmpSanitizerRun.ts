import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { ECHO, IcmpEchoer } from '../../src/agent/probes/icmpEcho.js';
import { openIcmpSocket, openUdpProbeSocket } from '../../src/agent/probes/nativeSockets.js';
import { dnsTrain } from '../../src/agent/probes/pathProbes.js';
import { PacketBudget } from '../../src/agent/probes/packetBudget.js';

/**
 * Exercises native/icmp.cc (the build `GSLBD_ICMP_ADDON` names; under the sanitizers in
 * src/agent/probes/icmpSanitizer.test.ts): echo trains to 127.0.0.1 and ::1 answered by the kernel,
 * DNS trains over the UDP probe socket to a responder on 127.0.0.1 and ::1, every argument error
 * path, sends on a closed socket, many sockets opened, closed and collected (run with
 * `--expose-gc`). Prints one JSON line: the addon path, the sanitizer libraries mapped into the
 * process, the trains' results and the error messages of the refused calls.
 */
const pacing = { length: 20, gapMs: 1, timeoutMs: 1000, budget: new PacketBudget(10_000) };
const echoer = new IcmpEchoer();
const results = await Promise.all([echoer.train('127.0.0.1', pacing), echoer.train('::1', pacing), echoer.train('127.0.0.1', pacing)]);

// A responder echoing each query with QR set, dual-stack on loopback.
const responder = createSocket({ type: 'udp6', ipv6Only: false });
responder.on('message', (msg, from) => {
  const reply = Buffer.from(msg);
  reply[2] = reply[2]! | 0x80;
  responder.send(reply, from.port, from.address);
});
responder.bind(0, '::');
await once(responder, 'listening');
const { port } = responder.address() as AddressInfo;
const dns = await Promise.all([dnsTrain('127.0.0.1', port, 'example.', pacing), dnsTrain('::1', port, 'example.', pacing)]);
responder.close();

const rejected: string[] = [];
const attempt = (f: () => unknown): void => {
  try {
    f();
  } catch (e) {
    rejected.push((e as Error).message);
  }
};
const noop = (): void => {};
const socket = openIcmpSocket(4, noop);
attempt(() => socket.send('not an address', ECHO[4].request, 0, 1, 1, Buffer.alloc(0)));
attempt(() => socket.send('::1', ECHO[4].request, 0, 1, 1, Buffer.alloc(0)));
attempt(() => socket.send('127.0.0.1', ECHO[4].request, 0, 1, 1, Buffer.alloc(5000)));
attempt(() => (socket.send as (...a: unknown[]) => number)('127.0.0.1', 'x', 0, 1, 1, Buffer.alloc(0)));
attempt(() => (socket.send as (...a: unknown[]) => number)('127.0.0.1'));
socket.close();
socket.close();
attempt(() => socket.send('127.0.0.1', ECHO[4].request, 0, 1, 1, Buffer.alloc(0)));
attempt(() => openIcmpSocket(5 as 4, noop));
attempt(() => openIcmpSocket(4, 'x' as unknown as typeof noop));
for (let i = 0; i < 200; i++) openIcmpSocket(i % 2 === 0 ? 4 : 6, noop).close();
const udp = openUdpProbeSocket(6, noop);
attempt(() => udp.send('127.0.0.1', 53, Buffer.alloc(12)));
attempt(() => udp.send('::1', 0, Buffer.alloc(12)));
attempt(() => udp.send('::1', 53, Buffer.alloc(5000)));
attempt(() => (udp.send as (...a: unknown[]) => number)('::1', '53', Buffer.alloc(12)));
udp.close();
udp.close();
attempt(() => udp.send('::1', 53, Buffer.alloc(12)));
attempt(() => openUdpProbeSocket(7 as 4, noop));
attempt(() => openUdpProbeSocket(4, 'x' as unknown as typeof noop));
for (let i = 0; i < 200; i++) openUdpProbeSocket(i % 2 === 0 ? 4 : 6, noop).close();
(globalThis as { gc?: () => void }).gc?.();
await new Promise((r) => setTimeout(r, 50));

const maps = readFileSync('/proc/self/maps', 'utf8');
const sanitizers = [...new Set([...maps.matchAll(/\/(lib(?:asan|ubsan)\.so)[^/\s]*$/gm)].map((m) => m[1]!))];
process.stdout.write(`${JSON.stringify({ addon: process.env.GSLBD_ICMP_ADDON, sanitizers, results, dns, rejected })}\n`);

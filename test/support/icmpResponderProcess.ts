import { ECHO } from '../../src/agent/probes/icmpEcho.js';
import { openIcmpSocket } from '../../src/agent/probes/nativeSockets.js';
import { seededRandom } from './seededRandom.js';

/**
 * A userspace ICMP echo responder (run inside a network namespace by {@link startIcmpResponder} in
 * `icmpResponder.ts`; the namespace's kernel ignores echo requests): answers each echo request of its family (IPv4 or ICMPv6)
 * `delayMs` after the kernel received it, or drops it with probability `loss` drawn from a generator seeded with `seed`, so
 * the delay and loss a probe sees are the ones the test set (no `tc netem` on these machines).
 * Arguments: `delayMs loss seed family` (family 4 or 6). Prints `ready` once listening and, on SIGTERM, `received N` before it exits.
 */
const [delayMs, loss, seed, family] = process.argv.slice(2).map(Number) as [number, number, number, 4 | 6];
const random = seededRandom(seed);
let received = 0;
/** CLOCK_REALTIME in ms with sub-millisecond precision, the clock of the kernel's receive timestamps. */
const realtimeMs = (): number => performance.timeOrigin + performance.now();

/**
 * Sends at `deadline` (realtime ms), never before: Node's timers count from the loop's cached time,
 * which lags, so a timer alone can fire up to a millisecond early; the last part is waited out.
 */
function sendAt(deadline: number, send: () => void): void {
  const left = deadline - realtimeMs();
  if (left > 2) {
    setTimeout(() => sendAt(deadline, send), left - 1);
    return;
  }
  while (realtimeMs() < deadline) {
    // spin out the last two milliseconds at most
  }
  send();
}

const socket = openIcmpSocket(
  family,
  (from, type, _code, id, seq, _ttl, receivedAtMs, payload) => {
    if (type !== ECHO[family].request) return;
    received++;
    if (random() < loss) return;
    sendAt(receivedAtMs + delayMs, () => socket.send(from, ECHO[family].reply, 0, id, seq, payload));
  },
  true,
);
process.on('SIGTERM', () => {
  process.stdout.write(`received ${received}\n`, () => {
    socket.close();
    process.exit(0);
  });
});
process.stdout.write('ready\n');

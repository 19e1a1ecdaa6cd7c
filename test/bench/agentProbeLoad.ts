import { probesSchema } from '../../src/agent/probes/probeSchema.js';
import { Prober } from '../../src/agent/probes/prober.js';

/**
 * The agent's prober under load, for the `agent` benchmark group (agent.bench.ts): the real
 * {@link Prober} (allow list, packet budget, trains, statistics) toward `127.0.0.1`.
 *
 * Usage: `node agentProbeLoad.js <icmp|dns|tcp> <port> <seconds> <saturate|paced>`.
 * - `saturate`: 64 workers each run 10-packet trains back to back (gap 1 ms), no packet cap that binds;
 * - `paced`: one 5-packet train (gap 20 ms, the defaults) every 60 ms: 1,000 probed networks per minute.
 * Prints one JSON line: packets sent and answered, trains, the process's CPU seconds (user + system)
 * and peak RSS over the measured time, and its length.
 */
const [method, port, seconds, mode] = process.argv.slice(2) as ['icmp' | 'dns' | 'tcp', string, string, 'saturate' | 'paced'];
const saturate = mode === 'saturate';
const prober = new Prober(
  probesSchema.parse({
    allow: ['127.0.0.1/32'],
    methods: [method],
    port: Number(port),
    trainLength: saturate ? 10 : 5,
    gapMs: saturate ? 1 : 20,
    timeoutMs: 1000,
    maxPacketsPerSecond: 100_000,
  }),
);
let sent = 0;
let answered = 0;
let trains = 0;
const probeOnce = async (): Promise<void> => {
  const [r] = await prober.probe('127.0.0.1');
  sent += r!.sent;
  answered += r!.received;
  trains++;
};
// Warm-up: V8 compiles the hot paths, the sockets open.
for (let i = 0; i < 20; i++) await probeOnce();
[sent, answered, trains] = [0, 0, 0];
let rssPeak = 0;
const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 100);
const endAt = performance.now() + Number(seconds) * 1000;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
if (saturate) {
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (performance.now() < endAt) await probeOnce();
    }),
  );
} else {
  const inFlight: Promise<void>[] = [];
  for (let next = t0; next < endAt; next += 60) {
    await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
    inFlight.push(probeOnce());
  }
  await Promise.all(inFlight);
}
const elapsed = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
clearInterval(sampler);
rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
process.stdout.write(`${JSON.stringify({ sent, answered, trains, cpuSeconds: (cpu.user + cpu.system) / 1e6, rssPeakBytes: rssPeak, seconds: elapsed })}\n`);

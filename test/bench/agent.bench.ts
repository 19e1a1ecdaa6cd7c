import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext, BenchGroup } from './harness/benchGroup.js';
import { freePort } from '../support/freePort.js';
import { BENCH_DIST } from './harness/paths.js';

const SECONDS = 4;
const PROBER_CPU = 1;
const RESPONDER_CPU = 0;

interface LoadResult {
  readonly sent: number;
  readonly answered: number;
  readonly trains: number;
  readonly cpuSeconds: number;
  readonly rssPeakBytes: number;
  readonly seconds: number;
}

/**
 * The agent's probes (issue 19 benchmark): packets per second the real prober sends and gets
 * answered toward 127.0.0.1, one process pinned to one core, and its CPU per packet. The baseline is
 * DNS over UDP to a fixed-reply responder on the other core (`fixedResponder.ts`), measured in the
 * same run; ICMP echo (the raw socket of native/icmp.cc, the kernel answers) and TCP connects to a
 * closed port (the kernel's RST) beside it; and the paced load of the target — 1,000 probed
 * networks per minute (one 5-packet ICMP train every 60 ms) — whose CPU % of a core (target ≤ 5 %)
 * and peak RSS (target ≤ 100 MiB) are its details. Needs root (raw sockets).
 */
const group: BenchGroup = {
  name: 'agent',
  // About 75 s for 3 runs: more than an issue may add to a bare `npm run bench`.
  onDemand: true,
  description: 'agent probes: ICMP/TCP packets per second and CPU per packet vs. DNS over UDP; CPU and RSS at 1,000 networks/min',
  tables: [
    {
      id: 'agent',
      title: `gslbd agent prober toward 127.0.0.1 (prober CPU ${PROBER_CPU}, responder CPU ${RESPONDER_CPU}), ${SECONDS} s per run`,
      measure: 'probes/s',
      baseline: 'dns',
      rows: [
        { id: 'dns', label: 'DNS over UDP, 64 trains of 10 at once, fixed-reply responder' },
        { id: 'icmp', label: 'ICMP echo (raw socket), 64 trains of 10 at once, kernel replies' },
        { id: 'tcp', label: 'TCP connect to a closed port (RST), 64 trains of 10 at once' },
        { id: 'icmp-paced', label: 'ICMP, 1,000 networks/min (5-packet train every 60 ms)' },
      ],
    },
  ],
  // ~1 s to start each prober process and its 20 warm-up trains, plus the measured seconds.
  estimateSeconds: (runs) => 3 + runs * 4 * (SECONDS + 2),
  async run(ctx) {
    const dir = ctx.tempDir('agent');
    const dnsPort = await freePort();
    const closedPort = await freePort();
    // A minimal DNS reply header (QR set, no records): any response times a DNS probe.
    const responder = ctx.processes.start(
      'dns responder',
      process.execPath,
      [join(BENCH_DIST, 'fixedResponder.js'), String(dnsPort), '000081000000000000000000'],
      {
        cpu: RESPONDER_CPU,
        logFile: join(dir, 'responder.log'),
      },
    );
    for (let i = 0; !readFileSync(responder.logFile, 'utf8').includes('ready'); i++) {
      if (i > 100) throw new Error(`DNS responder not ready:\n${responder.tail()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const rows = [
      ['dns', 'dns', dnsPort, 'saturate'],
      ['icmp', 'icmp', 53, 'saturate'],
      ['tcp', 'tcp', closedPort, 'saturate'],
      ['icmp-paced', 'icmp', 53, 'paced'],
    ] as const;
    for (let run = 1; run <= ctx.runs; run++) {
      for (const [row, method, port, mode] of rows) {
        if (!ctx.wants('agent', row)) continue;
        const r = await load(ctx, dir, method, port, mode);
        const perSecond = r.answered / r.seconds;
        ctx.record('agent', row, perSecond, {
          'sent/s': r.sent / r.seconds,
          'loss %': r.sent === 0 ? 0 : ((r.sent - r.answered) / r.sent) * 100,
          'CPU µs/probe': (r.cpuSeconds * 1e6) / Math.max(1, r.sent),
          'CPU % of a core': (r.cpuSeconds / r.seconds) * 100,
          'RSS peak MiB': r.rssPeakBytes / 2 ** 20,
          'trains/min': (r.trains / r.seconds) * 60,
        });
        ctx.log(
          `run ${run} ${row}: ${perSecond.toFixed(0)} probes/s, CPU ${((r.cpuSeconds / r.seconds) * 100).toFixed(1)} %, RSS ${(r.rssPeakBytes / 2 ** 20).toFixed(0)} MiB`,
        );
      }
    }
    ctx.note(
      `the real Prober (src/agent/probes/prober.ts: allow list, packet budget, trains, statistics) in one Node process pinned to CPU ${PROBER_CPU} (agentProbeLoad.ts); after 20 warm-up trains, ${SECONDS} s measured; ` +
        'probes/s = packets answered per second; CPU µs/probe = process CPU (user + system) / packets sent; on loopback the kernel work of the reply (ICMP echo reply, RST) is partly charged to the prober. ' +
        'Issue 19 target for icmp-paced: ≤ 5 % of a core and ≤ 100 MiB. Probe timing error against set delays: src/agent/probes/icmpPath.timing.test.ts logs it (min RTT − d and median − d for d = 5, 40, 120 ms).',
    );
  },
};

export default group;

async function load(ctx: BenchContext, dir: string, method: string, port: number, mode: string): Promise<LoadResult> {
  const { code, output } = await ctx.processes.runToEnd(
    `agent prober ${method} ${mode}`,
    process.execPath,
    [join(BENCH_DIST, 'agentProbeLoad.js'), method, String(port), String(SECONDS), mode],
    { cpu: PROBER_CPU, logFile: join(dir, `prober-${method}-${mode}-${Date.now()}.log`) },
    ctx.signal,
  );
  const line = output.trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`prober ${method} ${mode} exited ${code}:\n${output.slice(-2000)}`);
  return JSON.parse(line) as LoadResult;
}

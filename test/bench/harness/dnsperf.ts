import { join } from 'node:path';
import type { ProcessSupervisor } from './processes.js';

/** One dnsperf run against a server on loopback. */
export interface DnsperfRun {
  /** Loopback address of the server (127.0.0.0/8 or ::1 only: the benchmark never leaves the machine). */
  readonly server: string;
  readonly port: number;
  /** Query file: text lines `name TYPE`, or RFC 1035 §4.2.2 length-prefixed packets when `binary`. */
  readonly queryFile: string;
  /** True for a binary query file (`-B`): each packet is sent as is, only the ID rewritten. */
  readonly binary?: boolean;
  /** Send EDNS(0) with text query files (`-e`); binary files carry their own OPT record. */
  readonly edns?: boolean;
  /** Seconds to run (`-l`). */
  readonly seconds: number;
  /** CPU dnsperf is pinned to (`taskset -c`), a different one from the server's; undefined: not pinned. */
  readonly cpu: number | undefined;
  /** Concurrent clients (`-c`, each its own socket) and outstanding queries (`-q`). */
  readonly clients?: number;
  readonly outstanding?: number;
  /** Seconds after which a query counts as lost (`-t`); default 2. */
  readonly timeoutSeconds?: number;
  /** Most queries per second (`-Q`); unlimited when undefined. */
  readonly queriesPerSecond?: number;
}

/** What dnsperf reported. */
export interface DnsperfResult {
  readonly queriesPerSecond: number;
  readonly completed: number;
  readonly lost: number;
  /** Response counts by rcode name, e.g. `{ NOERROR: 1000 }`. */
  readonly rcodes: Readonly<Record<string, number>>;
  readonly averageLatencyMs: number;
  readonly runSeconds: number;
}

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1)$/;

/**
 * Runs dnsperf (Debian package `dnsperf`) once and parses its statistics.
 * @throws Error when the server address is not loopback, dnsperf fails, or its output has no
 *   statistics.
 */
export async function runDnsperf(processes: ProcessSupervisor, run: DnsperfRun, workDir: string, signal: AbortSignal): Promise<DnsperfResult> {
  if (!LOOPBACK.test(run.server)) throw new Error(`dnsperf target ${run.server} is not a loopback address`);
  const args = ['-s', run.server, '-p', String(run.port), '-d', run.queryFile, '-l', String(run.seconds)];
  args.push('-c', String(run.clients ?? 1), '-q', String(run.outstanding ?? 100), '-t', String(run.timeoutSeconds ?? 2));
  if (run.queriesPerSecond !== undefined) args.push('-Q', String(run.queriesPerSecond));
  if (run.binary) args.push('-B');
  else if (run.edns) args.push('-e');
  const logFile = join(workDir, `dnsperf-${process.hrtime.bigint()}.log`);
  const { code, output } = await processes.runToEnd('dnsperf', 'dnsperf', args, { cpu: run.cpu, logFile }, signal);
  if (signal.aborted) throw new Error('dnsperf interrupted');
  if (code !== 0) throw new Error(`dnsperf exited with ${code}: ${output.trim().split('\n').slice(-5).join(' | ')}`);
  return parseDnsperfOutput(output);
}

/**
 * Parses the "Statistics" block dnsperf 2.x prints.
 * @throws Error when a required line is missing.
 */
export function parseDnsperfOutput(text: string): DnsperfResult {
  const number = (label: string): number => {
    const m = new RegExp(`^\\s*${label}:\\s+([\\d.]+)`, 'm').exec(text);
    if (!m) throw new Error(`dnsperf output has no "${label}" line`);
    return Number(m[1]);
  };
  const rcodes: Record<string, number> = {};
  const codes = /^\s*Response codes:\s+(.*)$/m.exec(text);
  if (codes) {
    for (const m of codes[1]!.matchAll(/([A-Z]+) (\d+) \(/g)) rcodes[m[1]!] = Number(m[2]);
  }
  return {
    queriesPerSecond: number('Queries per second'),
    completed: number('Queries completed'),
    lost: number('Queries lost'),
    rcodes,
    averageLatencyMs: number('Average Latency \\(s\\)') * 1000,
    runSeconds: number('Run time \\(s\\)'),
  };
}

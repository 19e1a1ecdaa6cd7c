import { execFile } from 'node:child_process';

/**
 * Runs the real `dig` (Debian dnsutils, installed by `test/setup.sh`) and parses its output.
 * A missing `dig` is an error, never a skipped test (briefing: a missing peer fails the test).
 */

/** Where `dig` sends its query. */
export interface DigServer {
  readonly address: string;
  readonly port: number;
}

/** One resource record line of dig's output. */
export interface DigRecord {
  readonly name: string;
  readonly ttl: number;
  readonly type: string;
  /** The data as dig prints it (`192.0.2.10`, `www.example.test.`, `"RFC8482" ""`). */
  readonly data: string;
}

/** The parts of dig's output tests assert on. */
export interface DigResult {
  readonly output: string;
  /** `NOERROR`, `NXDOMAIN`, `REFUSED`, `BADVERS`, … */
  readonly status: string;
  readonly opcode: string;
  /** Header flags dig printed: `qr`, `aa`, `tc`, `rd`, … */
  readonly flags: readonly string[];
  readonly answer: readonly DigRecord[];
  readonly authority: readonly DigRecord[];
  readonly additional: readonly DigRecord[];
  /** The `; EDNS:` line's version and UDP size, when the reply had an OPT record. */
  readonly edns: { readonly version: number; readonly udp: number } | undefined;
  /** The `; CLIENT-SUBNET:` line, when the reply echoed ECS. */
  readonly ecs: { readonly subnet: string; readonly source: number; readonly scope: number } | undefined;
}

/**
 * Runs `dig @server -p port ARGS +norec +time=2 +tries=1` and parses the reply.
 * @throws Error when dig is not installed, times out without any reply, or prints no header.
 */
export async function dig(server: DigServer, args: readonly string[]): Promise<DigResult> {
  const output = await runDig([`@${server.address}`, '-p', String(server.port), '+norec', '+time=2', '+tries=1', ...args]);
  return parseDigOutput(output);
}

/**
 * At most this many dig processes run at once per test worker: ava runs a file's tests
 * concurrently, and dozens of process start-ups at once on a 2-core machine stall everything else
 * (including the engine under test) for seconds.
 */
const MAX_CONCURRENT_DIGS = 3;
let runningDigs = 0;
const waitingDigs: (() => void)[] = [];

/** Runs dig with exactly these arguments and returns its standard output. */
export async function runDig(args: readonly string[]): Promise<string> {
  if (runningDigs >= MAX_CONCURRENT_DIGS) await new Promise<void>((r) => waitingDigs.push(r));
  runningDigs++;
  try {
    return await execDig(args);
  } finally {
    runningDigs--;
    waitingDigs.shift()?.();
  }
}

function execDig(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('dig', [...args], { timeout: 15000 }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new Error('dig is not installed: run `bash test/setup.sh` (Debian package dnsutils)'));
      } else if (err && !stdout.includes('->>HEADER<<-')) {
        reject(new Error(`dig ${args.join(' ')} failed: ${err.message}\n${stdout}${stderr}`));
      } else {
        resolve(stdout);
      }
    });
  });
}

/**
 * Parses dig's default output (the last reply when dig printed several, e.g. after a TC retry).
 * @throws Error when the output holds no reply header.
 */
export function parseDigOutput(output: string): DigResult {
  const start = output.lastIndexOf(';; ->>HEADER<<-');
  if (start < 0) throw new Error(`dig printed no reply:\n${output}`);
  const text = output.slice(start);
  const header = /opcode: (\w+), status: (\w+)/.exec(text);
  const flags = /;; flags:([^;]*);/.exec(text);
  const edns = /; EDNS: version: (\d+), flags:[^;]*; udp: (\d+)/.exec(text);
  const ecs = /; CLIENT-SUBNET: (\S+)\/(\d+)\/(\d+)/.exec(text);
  return {
    output,
    opcode: header?.[1] ?? '',
    status: header?.[2] ?? '',
    flags: (flags?.[1] ?? '').trim().split(/\s+/).filter(Boolean),
    answer: section(text, 'ANSWER'),
    authority: section(text, 'AUTHORITY'),
    additional: section(text, 'ADDITIONAL'),
    edns: edns ? { version: Number(edns[1]), udp: Number(edns[2]) } : undefined,
    ecs: ecs ? { subnet: ecs[1]!, source: Number(ecs[2]), scope: Number(ecs[3]) } : undefined,
  };
}

function section(text: string, name: string): DigRecord[] {
  const start = text.indexOf(`;; ${name} SECTION:\n`);
  if (start < 0) return [];
  const lines = text.slice(start).split('\n').slice(1);
  const out: DigRecord[] = [];
  for (const line of lines) {
    if (line.trim() === '' || line.startsWith(';')) break;
    const m = /^(\S+)\s+(\d+)\s+IN\s+(\S+)\s+(.*)$/.exec(line);
    if (m) out.push({ name: m[1]!, ttl: Number(m[2]), type: m[3]!, data: m[4]!.trim() });
  }
  return out;
}

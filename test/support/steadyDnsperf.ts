import { spawn, type ChildProcess } from 'node:child_process';
import { parseDnsperfOutput, type DnsperfResult } from '../bench/harness/dnsperf.js';

/** A steady dnsperf load: where, what, how long and how fast. */
export interface SteadyLoad {
  readonly port: number;
  /** dnsperf's query file (`-d`). */
  readonly queryFile: string;
  readonly mode: 'udp' | 'tcp';
  /** Seconds of load (`-l`). */
  readonly seconds: number;
  /** Queries per second (`-Q`). */
  readonly rate: number;
  /** Seconds before a query counts as lost (`-t`). */
  readonly lostAfterS: number;
  /** The test's live children: dnsperf joins while it runs, so the test's exit handler can kill it. */
  readonly children?: Set<ChildProcess>;
}

/**
 * dnsperf against 127.0.0.1 at a steady rate, 2 clients with 8 queries outstanding each (the
 * load of the replace and live-systemd tests: every query counts, none may be lost).
 *
 * @returns dnsperf's statistics and its whole output (for assertion messages)
 * @throws Error with dnsperf's output when it exits non-zero or prints no statistics
 */
export function steadyDnsperf(load: SteadyLoad): Promise<{ result: DnsperfResult; out: string }> {
  return new Promise((resolve, reject) => {
    const { port, queryFile, mode, seconds, rate, lostAfterS, children } = load;
    const args = ['-s', '127.0.0.1', '-p', String(port), '-d', queryFile, '-l', String(seconds), '-Q', String(rate), '-t', String(lostAfterS)];
    const c = spawn('dnsperf', [...args, '-m', mode, '-c', '2', '-q', '8'], { stdio: ['ignore', 'pipe', 'pipe'] });
    children?.add(c);
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('error', reject);
    // 'close', not 'exit': dnsperf's stdout is a pipe, so it is block-buffered and dnsperf writes
    // all of it as it exits; at 'exit' Node may not have read it yet (the CI failure "dnsperf
    // output has no Queries per second line" with no output at all). 'close' comes after both
    // pipes reached their end.
    c.on('close', (code, signal) => {
      children?.delete(c);
      const described = `dnsperf -m ${mode} on port ${port} ended with ${signal ? `signal ${signal}` : `exit code ${code}`}`;
      try {
        if (code !== 0) throw new Error(described);
        resolve({ result: parseDnsperfOutput(out), out: `${out}${err}` });
      } catch (e) {
        reject(new Error(`${(e as Error).message} (${described})\nstderr:\n${err || '(empty)'}\nstdout:\n${out || '(empty)'}`));
      }
    });
  });
}

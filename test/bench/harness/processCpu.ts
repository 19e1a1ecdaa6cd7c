import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/**
 * CPU seconds (user + system, all threads) a process has used so far, from `/proc/<pid>/stat`
 * fields 14 and 15 (proc(5)), in clock ticks of `getconf CLK_TCK` (10 ms on Linux).
 * @throws Error when the process does not exist.
 */
export function processCpuSeconds(pid: number): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces; fields after it are space-separated.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/**
 * CPU seconds the calling thread has run so far (the first field of `/proc/thread-self/schedstat`,
 * nanoseconds on a CPU; proc(5)): unlike `process.cpuUsage()`, it leaves out this process's other
 * threads (GC helpers marking a large heap, the libuv pool), so a loop timed with it costs only
 * what the loop itself ran on this thread.
 * @throws Error when the kernel has no schedstat (CONFIG_SCHED_INFO off).
 */
export function threadCpuSeconds(): number {
  return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e9;
}

/**
 * Context switches of every thread of a process so far (voluntary + involuntary, from
 * `/proc/<pid>/task/<tid>/status`; proc(5)): how often it slept and woke (or was preempted), a
 * cost CPU time shows only in part. Threads that ended are not counted.
 * @throws Error when the process does not exist.
 */
export function processContextSwitches(pid: number): number {
  let switches = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
    } catch {
      continue; // the thread ended while we read
    }
    for (const m of status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)) switches += Number(m[1]);
  }
  return switches;
}

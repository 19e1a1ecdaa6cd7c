import { execFileSync } from 'node:child_process';

/**
 * Pins every thread of a running process (JS, GC helpers, libuv pool) to the CPUs in `cpuList`
 * (`taskset -a -p -c`, e.g. `"1"`), so an in-process measurement stays on one core.
 * @returns a function restoring the affinity the process had before.
 * @throws Error when taskset is missing or the process does not exist.
 */
export function pinAllThreads(pid: number, cpuList: string): () => void {
  const before = /list:\s*(\S+)/.exec(execFileSync('taskset', ['-p', '-c', String(pid)], { encoding: 'utf8' }))?.[1];
  execFileSync('taskset', ['-a', '-p', '-c', cpuList, String(pid)], { stdio: 'ignore' });
  return () => {
    if (before) execFileSync('taskset', ['-a', '-p', '-c', before, String(pid)], { stdio: 'ignore' });
  };
}

import { readFile } from 'node:fs/promises';

/**
 * Readers of the Linux `/proc` files the host and HAProxy sources measure with (proc(5)). Each
 * returns cumulative counters or an instantaneous value; rates and shares come from the
 * difference of two readings over a window (`hostSource.ts`), never from one sample.
 */

/** CPU time of all CPUs from the `cpu` line of `/proc/stat`, in clock ticks. */
export interface CpuTimes {
  /** user + nice + system + irq + softirq: time spent working. */
  readonly busy: number;
  /** busy + idle + iowait + steal: all time accounted. */
  readonly total: number;
}

/**
 * Parses the aggregate `cpu` line of `/proc/stat` (fields user nice system idle iowait irq softirq
 * steal; guest time is already inside user). Waiting for I/O counts as idle; time stolen by a
 * hypervisor counts as not ours.
 * @throws Error when the text has no `cpu` line.
 */
export function parseCpuTimes(stat: string): CpuTimes {
  const line = /^cpu\s+(.*)$/m.exec(stat);
  if (!line) throw new Error('/proc/stat has no "cpu" line');
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line[1]!.trim().split(/\s+/).map(Number);
  const busy = user + nice + system + irq + softirq;
  return { busy, total: busy + idle + iowait + steal };
}

/** Number of CPUs in `/proc/stat` (its `cpuN` lines). */
export function cpuCount(stat: string): number {
  return (stat.match(/^cpu\d+\s/gm) ?? []).length || 1;
}

/** Memory from `/proc/meminfo`, in bytes. */
export interface MemInfo {
  readonly total: number;
  /** MemAvailable: what can be allocated without swapping (the kernel's own estimate). */
  readonly available: number;
  /** MemFree: pages in the buddy allocator's free lists. */
  readonly free: number;
}

/**
 * Parses `MemTotal`, `MemFree` and `MemAvailable` of `/proc/meminfo` (kB there).
 * @throws Error when one is missing.
 */
export function parseMemInfo(meminfo: string): MemInfo {
  const kb = (name: string): number => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(meminfo);
    if (!m) throw new Error(`/proc/meminfo has no ${name}`);
    return Number(m[1]) * 1024;
  };
  return { total: kb('MemTotal'), available: kb('MemAvailable'), free: kb('MemFree') };
}

/**
 * Bytes of free pages parked in the per-CPU page lists (`/proc/zoneinfo`: the `count:` of each
 * CPU's pageset in each zone) of `pageSize` bytes. The kernel counts these pages neither in MemFree
 * nor in MemAvailable, yet they are free: the next allocations on that CPU take them first, and
 * freed pages land there first. Since Linux 6.7 these lists are sized automatically (`pcp->high` up
 * to `high_max`) and can hold a large share of memory — up to 0.66 GiB per CPU on the 24 GiB test
 * machine — so without them a 1 GiB allocation moved MemAvailable by 0.38–1.0 GiB. 0 when the file
 * has no pagesets.
 */
export function perCpuFreeBytes(zoneinfo: string, pageSize: number): number {
  let pages = 0;
  for (const m of zoneinfo.matchAll(/^\s+count:\s+(\d+)$/gm)) pages += Number(m[1]);
  return pages * pageSize;
}

/**
 * The kernel's page size from `/proc/self/smaps` (its first `KernelPageSize:` line, kB there);
 * 4096 when the file has none.
 */
export function parsePageSize(smaps: string): number {
  const m = /^KernelPageSize:\s+(\d+) kB$/m.exec(smaps);
  return m ? Number(m[1]) * 1024 : 4096;
}

/** Byte counters of one network interface from `/proc/net/dev`. */
export interface InterfaceBytes {
  readonly rx: number;
  readonly tx: number;
}

/** Parses `/proc/net/dev` into received and transmitted bytes per interface name. */
export function parseNetDev(netdev: string): Map<string, InterfaceBytes> {
  const out = new Map<string, InterfaceBytes>();
  for (const line of netdev.split('\n').slice(2)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const fields = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .map(Number);
    out.set(line.slice(0, colon).trim(), { rx: fields[0] ?? 0, tx: fields[8] ?? 0 });
  }
  return out;
}

/** CPU ticks and resident memory of one process. */
export interface ProcessUsage {
  /** utime + stime in clock ticks. */
  readonly ticks: number;
  /** Resident set size in bytes. */
  readonly rss: number;
}

/**
 * Reads `/proc/<pid>/stat` (utime and stime, fields 14 and 15, after the parenthesised command
 * name, which may hold spaces) and `VmRSS` of `/proc/<pid>/status`.
 * @throws Error when the process does not exist.
 */
export async function readProcessUsage(pid: number): Promise<ProcessUsage> {
  const [stat, status] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile(`/proc/${pid}/status`, 'utf8')]);
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const rss = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return { ticks: Number(fields[11]) + Number(fields[12]), rss: rss ? Number(rss[1]) * 1024 : 0 };
}

/**
 * Clock ticks per second of `/proc` CPU times (USER_HZ): 100 on every Linux architecture Node
 * runs on (the kernel ABI fixes it, whatever CONFIG_HZ is).
 */
export const USER_HZ = 100;

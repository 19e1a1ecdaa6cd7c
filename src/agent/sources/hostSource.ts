import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { HostSourceConfig } from './hostSchema.js';
import { parseCpuTimes, parseMemInfo, parseNetDev, parsePageSize, perCpuFreeBytes, type CpuTimes, type InterfaceBytes } from './procStats.js';

/** One train of probes to a check point, as the probes module reports it. */
export interface CheckPointResult {
  readonly sent: number;
  readonly received: number;
}

/**
 * A check point of the data center: `packetLoss` is the mean loss over them, and `status` is up
 * when some WAN and some LAN check point answer (a role without check points does not vote).
 */
export interface CheckPoint {
  readonly address: string;
  readonly role: 'wan' | 'lan';
}

/** Probes one check point (the agent's prober: ICMP, DNS or TCP as configured). */
export type CheckPointProbe = (address: string) => Promise<CheckPointResult>;

/** What one host reading measured: the push API's host sample, and the details `--once` prints. */
export interface HostReading {
  /** The host sample (percent, bits/s, up/down): `cpu`, `mem`, `bw`, `packetLoss`, `status`. */
  readonly sample: Record<string, number | string>;
  /** Bits/s and share of capacity per configured interface (absent when the interface is gone). */
  readonly interfaces: Record<string, { bitsPerSecond: number; percentOfCapacity?: number } | null>;
  /** Seconds the averages cover. */
  readonly windowSeconds: number;
}

interface Counters {
  readonly atMs: number;
  readonly cpu: CpuTimes;
  readonly net: Map<string, InterfaceBytes>;
}

/**
 * `/proc/meminfo` and `/proc/zoneinfo` read back to back, synchronously: pages move between the
 * per-CPU lists and the free lists all the time (a process exiting frees a GiB in a few ms), so the
 * two files must describe the same moment, or a page is counted twice or not at all. A missing or
 * unreadable zoneinfo (not Linux, a restricted `/proc`) gives '' — MemAvailable alone.
 */
let pageSize: number | undefined;

function readMemory(): Promise<[string, string]> {
  const meminfo = readFileSync('/proc/meminfo', 'utf8');
  let zoneinfo = '';
  try {
    zoneinfo = readFileSync('/proc/zoneinfo', 'utf8');
  } catch {
    // no zoneinfo: MemAvailable alone
  }
  return Promise.resolve([meminfo, zoneinfo]);
}

/** The page size, read once (`/proc/self/smaps`); 4096 where it cannot be read. */
function readPageSize(): number {
  try {
    return parsePageSize(readFileSync('/proc/self/smaps', 'utf8'));
  } catch {
    return 4096;
  }
}

/**
 * The host source (docs/PRODUCT.md §3): reads `/proc/stat`, `/proc/meminfo`, `/proc/zoneinfo` and
 * `/proc/net/dev` (of the network namespace the agent runs in). CPU % and bandwidth are averages
 * over the window between two readings — the cadence in the running agent — never one sample;
 * memory % is `1 − (MemAvailable + free pages in the per-CPU lists) / MemTotal` at the reading
 * (see {@link perCpuFreeBytes}: without them a 1 GiB allocation read as 0.38–1.0 GiB). Check points are probed at each reading.
 */
export class HostSource {
  private previous: Counters | undefined;

  /** `checkPoints` are probed with `probe` at each reading (none: `status` is up while the agent runs). */
  constructor(
    private readonly config: HostSourceConfig,
    private readonly checks: { readonly points: readonly CheckPoint[]; readonly probe: CheckPointProbe } | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes the counters a first reading is measured against. */
  async baseline(): Promise<void> {
    this.previous = await this.counters();
  }

  /**
   * Measures since the previous reading (or {@link baseline}) and starts the next window.
   * @throws Error when there is no previous reading, or `/proc` cannot be read.
   */
  async read(): Promise<HostReading> {
    const before = this.previous;
    if (before === undefined) throw new Error('host source: no baseline reading');
    const [after, [memText, zoneText], checks] = await Promise.all([this.counters(), readMemory(), this.checkPoints()]);
    this.previous = after;
    const seconds = (after.atMs - before.atMs) / 1000;
    const sample: Record<string, number | string> = {};
    const ticks = after.cpu.total - before.cpu.total;
    if (ticks > 0) sample.cpu = round(clampPercent(((after.cpu.busy - before.cpu.busy) / ticks) * 100));
    const mem = parseMemInfo(memText);
    sample.mem = round(clampPercent((1 - (mem.available + perCpuFreeBytes(zoneText, (pageSize ??= readPageSize()))) / mem.total) * 100));
    const interfaces: HostReading['interfaces'] = {};
    let bits = 0;
    let measured = false;
    for (const i of this.config.interfaces) {
      const a = before.net.get(i.name);
      const b = after.net.get(i.name);
      if (a === undefined || b === undefined || seconds <= 0 || b.rx < a.rx || b.tx < a.tx) {
        interfaces[i.name] = null;
        continue;
      }
      const bps = ((b.rx - a.rx + (b.tx - a.tx)) * 8) / seconds;
      bits += bps;
      measured = true;
      interfaces[i.name] = {
        bitsPerSecond: Math.round(bps),
        ...(i.capacityMbps !== undefined ? { percentOfCapacity: round((bps / (i.capacityMbps * 1e6)) * 100) } : {}),
      };
    }
    if (measured) sample.bw = Math.round(bits);
    if (checks !== undefined) {
      sample.packetLoss = checks.packetLoss;
      sample.status = checks.up ? 'up' : 'down';
    } else {
      sample.status = 'up';
    }
    return { sample, interfaces, windowSeconds: round(seconds) };
  }

  private async counters(): Promise<Counters> {
    const [stat, netdev] = await Promise.all([readFile('/proc/stat', 'utf8'), readFile('/proc/net/dev', 'utf8')]);
    return { atMs: this.now(), cpu: parseCpuTimes(stat), net: parseNetDev(netdev) };
  }

  /** Mean loss over the check points and the WAN/LAN status rule; undefined without check points. */
  private async checkPoints(): Promise<{ packetLoss: number; up: boolean } | undefined> {
    if (this.checks === undefined || this.checks.points.length === 0) return undefined;
    const { points, probe } = this.checks;
    const results = await Promise.all(points.map(async (p) => ({ role: p.role, r: await probe(p.address).catch(() => ({ sent: 1, received: 0 })) })));
    const loss = results.reduce((sum, { r }) => sum + (1 - r.received / r.sent) * 100, 0) / results.length;
    const answers = (role: 'wan' | 'lan'): boolean => !results.some((x) => x.role === role) || results.some((x) => x.role === role && x.r.received > 0);
    return { packetLoss: round(loss), up: answers('wan') && answers('lan') };
  }
}

function clampPercent(v: number): number {
  return Math.min(100, Math.max(0, v));
}

/** Three decimals: the push API keeps numbers as given, and reports stay readable. */
function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}

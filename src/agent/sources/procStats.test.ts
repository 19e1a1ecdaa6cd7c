import test from 'ava';
import { cpuCount, parseCpuTimes, parseMemInfo, parseNetDev, parsePageSize, perCpuFreeBytes, readProcessUsage } from './procStats.js';

const STAT = `cpu  100 5 50 800 20 3 2 10 0 0
cpu0 50 2 25 400 10 1 1 5 0 0
cpu1 50 3 25 400 10 2 1 5 0 0
intr 12345
`;

test('/proc/stat: busy is user+nice+system+irq+softirq, total adds idle, iowait and steal; CPUs are the cpuN lines', (t) => {
  t.deepEqual(parseCpuTimes(STAT), { busy: 100 + 5 + 50 + 3 + 2, total: 160 + 800 + 20 + 10 });
  t.is(cpuCount(STAT), 2);
  t.throws(() => parseCpuTimes('intr 1\n'), { message: /no "cpu" line/ });
});

test('/proc/meminfo: MemTotal and MemAvailable in bytes; a missing field throws', (t) => {
  t.deepEqual(parseMemInfo('MemTotal:        2048 kB\nMemFree:  10 kB\nMemAvailable:    1024 kB\n'), {
    total: 2048 * 1024,
    available: 1024 * 1024,
    free: 10 * 1024,
  });
  t.throws(() => parseMemInfo('MemTotal: 2048 kB\n'), { message: /MemAvailable/ });
});

test('/proc/net/dev: received and transmitted bytes per interface', (t) => {
  const text = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1000      10    0    0    0     0          0         0     2000      20    0    0    0     0       0          0
  eth0:5 1 0 0 0 0 0 0 7 1 0 0 0 0 0 0
`;
  t.deepEqual(
    [...parseNetDev(text)],
    [
      ['lo', { rx: 1000, tx: 2000 }],
      ['eth0', { rx: 5, tx: 7 }],
    ],
  );
});

test('a process reads its own CPU ticks and resident memory; a missing process throws', async (t) => {
  const usage = await readProcessUsage(process.pid);
  t.true(usage.ticks >= 0 && Number.isInteger(usage.ticks));
  t.true(usage.rss > 10 * 1024 * 1024, `rss ${usage.rss}`);
  await t.throwsAsync(readProcessUsage(2 ** 22 + 1));
});

/** Two zones of a 2-CPU /proc/zoneinfo (Linux 6.18), trimmed: free pages and each CPU's pageset. */
const ZONEINFO = `Node 0, zone    DMA32
  per-node stats
      nr_inactive_anon 512
  pages free     772798
        min      1000
  pagesets
    cpu: 0
              count:    0
              high:     2311
              batch:    63
              high_max: 48299
    cpu: 1
              count:    5
              high:     0
              batch:    63
              high_max: 48299
Node 0, zone   Normal
  pages free     887279
  pagesets
    cpu: 0
              count:    128728
              high:     117288
              batch:    63
              high_max: 172032
    cpu: 1
              count:    160384
              high:     70950
              batch:    63
              high_max: 172032
`;

test('/proc/zoneinfo: free pages in the per-CPU lists, in bytes; the page size from /proc/self/smaps', (t) => {
  const pages = 5 + 128728 + 160384;
  t.is(perCpuFreeBytes(ZONEINFO, 4096), pages * 4096);
  t.is(perCpuFreeBytes(ZONEINFO, 65536), pages * 65536);
  t.is(perCpuFreeBytes('Node 0, zone DMA\n  pages free 10\n', 4096), 0, 'no pagesets: nothing to add');
  t.is(parsePageSize('00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/node\nSize:  328 kB\nKernelPageSize:        4 kB\nMMUPageSize: 4 kB\n'), 4096);
  t.is(parsePageSize('KernelPageSize:       64 kB\n'), 65536);
  t.is(parsePageSize(''), 4096);
});

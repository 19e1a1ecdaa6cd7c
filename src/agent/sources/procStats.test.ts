import test from 'ava';
import { cpuCount, parseCpuTimes, parseMemInfo, parseNetDev, readProcessUsage } from './procStats.js';

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
  t.deepEqual(parseMemInfo('MemTotal:        2048 kB\nMemFree:  10 kB\nMemAvailable:    1024 kB\n'), { total: 2048 * 1024, available: 1024 * 1024 });
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

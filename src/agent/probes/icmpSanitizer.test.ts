import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../../test/support/engineProcess.js';

// native/icmp.cc under ASan + UBSan (native/build-sanitized.sh, run by test/setup.sh): loopback echo
// trains, DNS trains over the UDP probe socket, every argument error path, closed sockets and collected ones. A stock node is not
// instrumented, so libasan is preloaded and the leak checker (node's own allocations) is off.
test('the sanitizer build of the ICMP and UDP probe sockets runs trains and error paths clean', (t) => {
  const addon = join(REPO_ROOT, '.tmp', 'asan', 'gslbd_icmp.node');
  const script = join(REPO_ROOT, 'dist', 'test', 'support', 'icmpSanitizerRun.js');
  t.true(existsSync(addon), `${addon} is missing: run bash test/setup.sh (native/build-sanitized.sh)`);
  const libasan = execFileSync('g++', ['-print-file-name=libasan.so'], { encoding: 'utf8' }).trim();
  const run = spawnSync(process.execPath, ['--expose-gc', script], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: {
      ...process.env,
      GSLBD_ICMP_ADDON: addon,
      LD_PRELOAD: libasan,
      ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=0:exitcode=86',
      UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
    },
    timeout: 60_000,
  });
  t.is(run.status, 0, `exit ${run.status}; stderr:\n${run.stderr.slice(0, 4000)}`);
  t.notRegex(run.stderr, /AddressSanitizer|runtime error:/);
  const result = JSON.parse(run.stdout) as {
    addon: string;
    sanitizers: string[];
    results: { sent: number; rtts: number[]; ttls: number[] }[];
    dns: { sent: number; rtts: number[] }[];
    rejected: string[];
  };
  t.is(result.addon, addon);
  t.deepEqual(result.sanitizers.sort(), ['libasan.so', 'libubsan.so']);
  for (const r of result.results) {
    t.is(r.rtts.length, 20, 'the kernel answers every echo on loopback');
    t.deepEqual(new Set(r.ttls), new Set([64]));
  }
  t.is(result.dns.length, 2);
  for (const r of result.dns) t.is(r.rtts.length, 20, 'the responder answers every query on loopback');
  t.is(result.rejected.length, 15, result.rejected.join('\n'));
});

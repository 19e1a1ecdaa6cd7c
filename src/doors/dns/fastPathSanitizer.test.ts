import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../../test/support/engineProcess.js';

// native/fast_path.cc and fast_query.cc under ASan + UBSan (native/build-sanitized.sh, run by
// test/setup.sh), driven by test/support/fastPathSanitizerRun.ts: two threads per address over IPv4
// and IPv6, templates installed and replayed, a publish between passes, sampled hits, malformed and
// oversized datagrams, every argument error path, servers opened, closed and collected; every
// answer byte-identical to the Node listener's. A stock node is not instrumented, so libasan is
// preloaded and the leak checker (node's own allocations) is off.
test('the sanitizer build of the fast path answers like the Node listener and runs its error paths clean', (t) => {
  const addon = join(REPO_ROOT, '.tmp', 'asan', 'gslbd_fastpath.node');
  const script = join(REPO_ROOT, 'dist', 'test', 'support', 'fastPathSanitizerRun.js');
  t.true(existsSync(addon), `${addon} is missing: run bash test/setup.sh (native/build-sanitized.sh)`);
  const libasan = execFileSync('g++', ['-print-file-name=libasan.so'], { encoding: 'utf8' }).trim();
  const run = spawnSync(process.execPath, ['--expose-gc', script], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: {
      ...process.env,
      GSLBD_FASTPATH_ADDON: addon,
      LD_PRELOAD: libasan,
      ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=0:exitcode=86',
      UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
    },
    timeout: 120_000,
  });
  t.is(run.status, 0, `exit ${run.status}; stderr:\n${run.stderr.slice(0, 4000)}`);
  t.notRegex(run.stderr, /AddressSanitizer|runtime error:/);
  const result = JSON.parse(run.stdout) as {
    addon: string;
    sanitizers: string[];
    compared: number;
    mismatches: string[];
    stats: { hits: number; misses: number; sampled: number; dropped: number; installed: number }[];
    rejected: string[];
  };
  t.is(result.addon, addon);
  t.deepEqual(result.sanitizers.sort(), ['libasan.so', 'libubsan.so']);
  t.deepEqual(result.mismatches, []);
  t.true(result.compared > 4000, `${result.compared} answers compared`);
  const [plain, sampled] = result.stats;
  t.true(plain!.hits > 0 && plain!.installed > 0 && plain!.dropped >= 1, JSON.stringify(plain));
  t.true(sampled!.sampled > 0 && sampled!.hits > 0, JSON.stringify(sampled));
  t.is(result.rejected.length, 13, result.rejected.join('\n'));
});

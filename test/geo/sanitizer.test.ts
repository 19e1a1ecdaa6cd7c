import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './cityImage.js';

// The differential run against the ASan + UBSan build of the addon (native/build-sanitized.sh,
// run by test/setup.sh). A stock node is not instrumented, so libasan must be preloaded and the
// leak checker (which reports node's own allocations) disabled: native/README.md.
test('the sanitizer build of the addon runs the differential check clean', (t) => {
  const addon = join(repoRoot, '.tmp', 'asan', 'gslbd_geo.node');
  const script = join(repoRoot, 'dist', 'test', 'geo', 'differentialRun.js');
  t.true(existsSync(addon), `${addon} is missing: run bash test/setup.sh (native/build-sanitized.sh)`);
  t.true(existsSync(script), `${script} is missing: npm test compiles it (tsc) before ava runs`);
  const libasan = execFileSync('g++', ['-print-file-name=libasan.so'], { encoding: 'utf8' }).trim();
  const run = spawnSync(process.execPath, ['--expose-gc', script, '100000'], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: {
      ...process.env,
      GSLBD_NATIVE_ADDON: addon,
      LD_PRELOAD: libasan,
      ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=0:exitcode=86',
      UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
    },
    timeout: 5 * 60_000,
  });
  t.is(run.status, 0, `exit ${run.status}; stderr:\n${run.stderr.slice(0, 4000)}`);
  t.notRegex(run.stderr, /AddressSanitizer|runtime error:/);
  const result = JSON.parse(run.stdout) as {
    addon: string;
    sanitizers: string[];
    mismatches: number;
    hugePageMismatches: number;
    results: unknown[];
    rejected: string[];
  };
  t.is(result.addon, addon);
  t.deepEqual(result.sanitizers.sort(), ['libasan.so', 'libubsan.so']);
  t.is(result.mismatches, 0);
  t.is(result.hugePageMismatches, 0);
  t.is(result.results.length, 6);
  t.is(result.rejected.length, 17);
});

import test from 'ava';
import { join } from 'node:path';
import { runSanitized } from '../support/sanitizedRun.js';
import { repoRoot } from './cityImage.js';

// The differential run against the ASan + UBSan build of the addon (native/build-sanitized.sh,
// run by test/setup.sh). A stock node is not instrumented, so libasan must be preloaded and the
// leak checker (which reports node's own allocations) disabled: native/README.md.
test('the sanitizer build of the addon runs the differential check clean', (t) => {
  const addon = join(repoRoot, '.tmp', 'asan', 'gslbd_geo.node');
  const script = join(repoRoot, 'dist', 'test', 'geo', 'differentialRun.js');
  const result = runSanitized<{
    addon: string;
    sanitizers: string[];
    mismatches: number;
    hugePageMismatches: number;
    results: unknown[];
    rejected: string[];
  }>(t, { script, args: ['100000'], addon, addonVariable: 'GSLBD_NATIVE_ADDON', cwd: repoRoot, timeoutMs: 5 * 60_000 });
  t.is(result.addon, addon);
  t.deepEqual(result.sanitizers.sort(), ['libasan.so', 'libubsan.so']);
  t.is(result.mismatches, 0);
  t.is(result.hugePageMismatches, 0);
  t.is(result.results.length, 6);
  t.is(result.rejected.length, 17);
});

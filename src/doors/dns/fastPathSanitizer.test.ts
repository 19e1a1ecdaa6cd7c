import test from 'ava';
import { join } from 'node:path';
import { runSanitized } from '../../../test/support/sanitizedRun.js';
import { REPO_ROOT } from '../../../test/support/engineProcess.js';

// native/fast_path.cc and fast_query.cc under ASan + UBSan (native/build-sanitized.sh, run by
// test/setup.sh), driven by test/support/fastPathSanitizerRun.ts: two threads per address over IPv4
// and IPv6, templates installed and replayed, a publish between passes, sampled hits, malformed and
// oversized datagrams, response-rate limiting (table evictions, slip replies), class templates
// replayed while their class table is replaced and dropped, every argument error path, servers opened, closed and collected; every
// answer byte-identical to the Node listener's. A stock node is not instrumented, so libasan is
// preloaded and the leak checker (node's own allocations) is off.
test('the sanitizer build of the fast path answers like the Node listener and runs its error paths clean', (t) => {
  const addon = join(REPO_ROOT, '.tmp', 'asan', 'gslbd_fastpath.node');
  const script = join(REPO_ROOT, 'dist', 'test', 'support', 'fastPathSanitizerRun.js');
  const result = runSanitized<{
    addon: string;
    sanitizers: string[];
    compared: number;
    mismatches: string[];
    stats: { hits: number; misses: number; sampled: number; dropped: number; limited: number; slipped: number; installed: number }[];
    rejected: string[];
    classChecks: { replayed: number; lookups: number };
  }>(t, { script, addon, addonVariable: 'GSLBD_FASTPATH_ADDON', cwd: REPO_ROOT, timeoutMs: 120_000 });
  t.is(result.addon, addon);
  t.deepEqual(result.sanitizers.sort(), ['libasan.so', 'libubsan.so']);
  t.deepEqual(result.mismatches, []);
  t.true(result.compared > 4000, `${result.compared} answers compared`);
  const [plain, sampled, limited] = result.stats;
  t.true(plain!.hits > 0 && plain!.installed > 0 && plain!.dropped >= 1, JSON.stringify(plain));
  t.true(sampled!.sampled > 0 && sampled!.hits > 0, JSON.stringify(sampled));
  t.true(limited!.limited > 0 && limited!.slipped > 0 && limited!.hits + limited!.misses > 0, JSON.stringify(limited));
  t.is(result.rejected.length, 26, result.rejected.join('\n'));
  // 3,840 datagrams (IPv4, IPv6 and mapped ECS) sent while the table came and went: the bare server answers only what a template answers.
  t.true(result.classChecks.replayed > 0, JSON.stringify(result.classChecks));
  t.is(result.classChecks.lookups, 4096);
});

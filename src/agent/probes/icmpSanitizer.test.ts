import test from 'ava';
import { join } from 'node:path';
import { runSanitized } from '../../../test/support/sanitizedRun.js';
import { REPO_ROOT } from '../../../test/support/engineProcess.js';

// native/icmp.cc under ASan + UBSan (native/build-sanitized.sh, run by test/setup.sh): loopback echo
// trains, DNS trains over the UDP probe socket, every argument error path, closed sockets and collected ones. A stock node is not
// instrumented, so libasan is preloaded and the leak checker (node's own allocations) is off.
test('the sanitizer build of the ICMP and UDP probe sockets runs trains and error paths clean', (t) => {
  const addon = join(REPO_ROOT, '.tmp', 'asan', 'gslbd_icmp.node');
  const script = join(REPO_ROOT, 'dist', 'test', 'support', 'icmpSanitizerRun.js');
  const result = runSanitized<{
    addon: string;
    sanitizers: string[];
    results: { sent: number; rtts: number[]; ttls: number[] }[];
    dns: { sent: number; rtts: number[] }[];
    rejected: string[];
  }>(t, { script, addon, addonVariable: 'GSLBD_ICMP_ADDON', cwd: REPO_ROOT, timeoutMs: 60_000 });
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

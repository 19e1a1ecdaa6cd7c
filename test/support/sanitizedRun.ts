import type { ExecutionContext } from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** One run of a compiled driver script against the ASan + UBSan build of an addon. */
export interface SanitizedRun {
  /** The driver, compiled under `dist/` (npm test runs tsc before ava). */
  readonly script: string;
  readonly args?: readonly string[];
  /** The sanitizer build of the addon (`.tmp/asan/*.node`, made by native/build-sanitized.sh). */
  readonly addon: string;
  /** The environment variable through which the driver loads that build instead of the stock one (`GSLBD_ICMP_ADDON`, …). */
  readonly addonVariable: string;
  readonly cwd: string;
  /** Deadline of the whole run, in milliseconds. */
  readonly timeoutMs: number;
}

/**
 * Runs `run.script` in a stock node with the sanitizer build of an addon, as native/README.md
 * describes: node is not instrumented, so libasan is preloaded (its path from `g++
 * -print-file-name`), the leak checker (which reports node's own allocations) is off, and a
 * sanitizer report ends the run with exit 86 (UBSan halts on the first error). Asserts, on `t`,
 * that the build and the driver exist, that the run exited 0 and that stderr holds no
 * AddressSanitizer or UBSan report.
 * @returns the driver's stdout parsed as JSON (its summary), typed as the caller says.
 * @throws SyntaxError when stdout is not JSON (the run failed: the assertions above say why).
 */
export function runSanitized<T>(t: ExecutionContext, run: SanitizedRun): T {
  t.true(existsSync(run.addon), `${run.addon} is missing: run bash test/setup.sh (native/build-sanitized.sh)`);
  t.true(existsSync(run.script), `${run.script} is missing: npm test compiles it (tsc) before ava runs`);
  const libasan = execFileSync('g++', ['-print-file-name=libasan.so'], { encoding: 'utf8' }).trim();
  const r = spawnSync(process.execPath, ['--expose-gc', run.script, ...(run.args ?? [])], {
    cwd: run.cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      [run.addonVariable]: run.addon,
      LD_PRELOAD: libasan,
      ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=0:exitcode=86',
      UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
    },
    timeout: run.timeoutMs,
  });
  t.is(r.status, 0, `exit ${r.status}; stderr:\n${r.stderr.slice(0, 4000)}`);
  t.notRegex(r.stderr, /AddressSanitizer|runtime error:/);
  return JSON.parse(r.stdout) as T;
}

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { repoRoot } from '../../../test/geo/cityImage.js';

/**
 * The fast path's libFuzzer targets with ASan and UBSan, built by `native/build-fuzzer.sh` from
 * test/setup.sh: the query parser (`native/fuzz_query.cc`) and the template cache with its block
 * table against a reference model (`native/fuzz_block_table.cc`). A bounded run of each from its
 * committed seed corpus must end with no crash, no sanitizer report, no broken invariant and no
 * disagreement with the model. New inputs go to a scratch directory, never into the repository; a
 * failing input is kept in a temporary directory libFuzzer names in its output ("Test unit written to").
 * The two run side by side, 15 s each (CI's fuzz budget is 60 s).
 */

const FUZZ_DIR = join(repoRoot, '.tmp', 'fuzz');

/**
 * Runs `fuzzer` for `seconds` from `corpus` with inputs up to `maxLen` bytes; resolves with its
 * runs (libFuzzer's `Done N runs`) and rejects when it exits non-zero (a crash or a finding).
 */
async function fuzz(fuzzer: string, corpus: string, seconds: number, maxLen: number): Promise<{ runs: number; stderr: string }> {
  const scratch = mkdtempSync(join(tmpdir(), 'gslbd-fuzz-'));
  const findings = mkdtempSync(join(tmpdir(), 'gslbd-fuzz-finding-'));
  try {
    const { stderr } = await promisify(execFile)(
      fuzzer,
      [`-max_total_time=${seconds}`, `-max_len=${maxLen}`, '-rss_limit_mb=1024', `-artifact_prefix=${findings}/`, scratch, join(repoRoot, 'native', corpus)],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    const runs = /Done (\d+) runs/.exec(stderr);
    return { runs: runs ? Number(runs[1]) : 0, stderr };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    if (readdirSync(findings).length === 0) rmSync(findings, { recursive: true });
  }
}

const PARSER_SECONDS = 15;

test(`libFuzzer finds nothing in the fast path's query parser in ${PARSER_SECONDS} s`, async (t) => {
  t.timeout((PARSER_SECONDS + 60) * 1000);
  const fuzzer = join(FUZZ_DIR, 'fuzz_query');
  t.true(existsSync(fuzzer), `${fuzzer} is missing: run bash native/build-fuzzer.sh (test/setup.sh does)`);
  const { runs, stderr } = await fuzz(fuzzer, 'fuzz-corpus', PARSER_SECONDS, 512);
  t.true(runs > 1000, `only ${runs} runs: ${stderr.slice(-2000)}`);
});

const TABLE_SECONDS = 15;

test(`libFuzzer finds no disagreement between the fast path's block table and its model in ${TABLE_SECONDS} s`, async (t) => {
  t.timeout((TABLE_SECONDS + 60) * 1000);
  const fuzzer = join(FUZZ_DIR, 'fuzz_block_table');
  t.true(existsSync(fuzzer), `${fuzzer} is missing: run bash native/build-fuzzer.sh (test/setup.sh does)`);
  // Each input runs up to thousands of installs (growth, older generations dropped, starting afresh): ~80 inputs a second at load 20.
  const { runs, stderr } = await fuzz(fuzzer, 'fuzz-corpus-blocks', TABLE_SECONDS, 256);
  t.true(runs > 100, `only ${runs} runs: ${stderr.slice(-2000)}`);
});

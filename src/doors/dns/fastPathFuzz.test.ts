import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { repoRoot } from '../../../test/geo/cityImage.js';

/**
 * The fast path's query parser under libFuzzer with ASan and UBSan (`native/fuzz_query.cc`, built
 * by `native/build-fuzzer.sh` from test/setup.sh): a bounded run from the committed seed corpus
 * (`native/fuzz-corpus/`) must end with no crash, no sanitizer report and no broken invariant.
 * New inputs go to a scratch directory, never into the repository.
 */

const FUZZER = join(repoRoot, '.tmp', 'fuzz', 'fuzz_query');
const SECONDS = 15;

test(`libFuzzer finds nothing in the fast path's query parser in ${SECONDS} s`, async (t) => {
  t.timeout((SECONDS + 60) * 1000);
  t.true(existsSync(FUZZER), `${FUZZER} is missing: run bash native/build-fuzzer.sh (test/setup.sh does)`);
  const scratch = mkdtempSync(join(tmpdir(), 'gslbd-fuzz-'));
  try {
    const { stderr } = await promisify(execFile)(
      FUZZER,
      [`-max_total_time=${SECONDS}`, '-max_len=512', '-rss_limit_mb=1024', scratch, join(repoRoot, 'native', 'fuzz-corpus')],
      {
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    const runs = /Done (\d+) runs/.exec(stderr);
    t.truthy(runs, stderr.slice(-2000));
    t.true(Number(runs![1]) > 1000, `only ${runs![1]} runs`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file runs from `dist/test/bench/harness/`). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/** The quickstart configuration every foundation row runs on. */
export const QUICKSTART_CONFIG = join(REPO_ROOT, 'examples/quickstart.yaml');

/** The compiled gslbd command line. */
export const GSLBD_CLI = join(REPO_ROOT, 'dist/src/cli/main.js');

/** The bundled gslbd command line (bundle/build.mjs, run by `npm run build`): what the package's `gslbd` runs. */
export const GSLBD_BUNDLE = join(REPO_ROOT, 'dist/bundle/cli/gslbd.js');

/** Compiled benchmark files (servers the groups start, e.g. the fixed-packet responder). */
export const BENCH_DIST = resolve(dirname(fileURLToPath(import.meta.url)), '..');

import { readFileSync } from 'node:fs';

/**
 * The second pass of `npm test`: the tests that measure time (`*.timing.test.ts`: timeouts, check
 * latency, rise/fall over real intervals, reloads under a query loop), one file and one test at a
 * time after the parallel pass, so the load of other test files does not stretch what they
 * measure. Otherwise the configuration of package.json's "ava" key.
 */
const { ava } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

export default { ...ava, files: ['test/**/*.timing.test.ts', 'src/**/*.timing.test.ts'], serial: true };

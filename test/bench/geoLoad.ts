import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * Load-time probe for the geo benchmark group, run in a fresh process:
 * `node dist/test/bench/geoLoad.js FILE native|typescript` prints one JSON line with the
 * milliseconds from reading the compiled file to a database ready to answer (module imports
 * excluded, the addon's dlopen and checks included) and the process's resident memory after.
 */
const [file, implementation] = process.argv.slice(2) as [string, 'native' | 'typescript'];
const { readImage } = await import('../../src/capabilities/geo/compiledImage.js');
const { openLocationDb } = await import('../../src/capabilities/geo/openLocationDb.js');
const { parseIp } = await import('../../src/core/net/ipAddress.js');
const rssBefore = process.memoryUsage().rss;
const started = performance.now();
const db = openLocationDb(readImage(readFileSync(file)), implementation).db;
const packed = db.lookup(parseIp('193.0.14.129'));
const ms = performance.now() - started;
process.stdout.write(
  `${JSON.stringify({ ms, implementation: db.implementation, rssMiB: process.memoryUsage().rss / 2 ** 20, rssAddedMiB: (process.memoryUsage().rss - rssBefore) / 2 ** 20, packed })}\n`,
);

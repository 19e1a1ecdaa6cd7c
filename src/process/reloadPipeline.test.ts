import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../core/config/load.js';
import { emptyLocationDb } from '../core/location/locationDb.js';
import { BACKGROUND_NICE } from '../core/threads/backgroundPriority.js';
import { emptyMetricView } from '../core/views/metricView.js';
import { compileSnapshot } from '../pipeline/snapshot.js';
import { largeConfig } from '../../test/support/largeConfig.js';
import { forcedScavenges } from '../../test/support/forcedScavenges.js';
import { dcsDown } from '../../test/support/selectionFixture.js';
import { CAPABILITIES } from './capabilities.js';
import type { Config } from './configSchema.js';
import { readCandidateConfig } from './candidateConfig.js';
import { compileInSlices, ConfigReader } from './reloadPipeline.js';
import { configurationHash } from './sharedState/clusterMembers.js';

const dir = mkdtempSync(join(tmpdir(), 'gslbd-reload-pipeline-'));
const reader = new ConfigReader();
test.after.always(() => reader.close());

test('the worker reads what the engine thread would read: the same configuration, fingerprint and zone hashes', async (t) => {
  const file = join(dir, 'big.yaml');
  writeFileSync(file, largeConfig({ records: 1200 }));
  const off = await reader.read(file);
  const here = readCandidateConfig(file);
  t.deepEqual(off.config, here.config);
  t.is(off.fingerprint, here.fingerprint);
  t.deepEqual([...off.contentHashes], [...here.contentHashes]);
  // The member beat's hash comes with the read (issue 17: hashing 20,000 records on every beat held the event loop 50-80 ms).
  t.is(off.sharedHash, configurationHash(here.config));
  t.is(here.sharedHash, off.sharedHash);
  const other = await reader.read(file, largeConfig({ records: 1200, ttl: 31 }));
  t.not(other.fingerprint, off.fingerprint, 'text given instead of the file is what is read');
});

/** Nice value of each thread of this process (`/proc/self/task/<tid>/stat`, field 19). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').map((tid) => niceOf(`/proc/self/task/${tid}/stat`));
}

function niceOf(statFile: string): number {
  const stat = readFileSync(statFile, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces: state is field 3.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

// Serial, so it runs before the other tests start the shared reader's worker.
test.serial('the worker reads at a lower priority than the engine thread (nice 10 against 0)', async (t) => {
  const own = new ConfigReader();
  t.teardown(() => own.close());
  const before = threadNiceValues().filter((n) => n === BACKGROUND_NICE).length;
  const file = join(dir, 'nice.yaml');
  writeFileSync(file, largeConfig({ records: 3 }));
  await own.read(file);
  t.is(threadNiceValues().filter((n) => n === BACKGROUND_NICE).length, before + 1);
  t.is(niceOf('/proc/thread-self/stat'), 0, 'the engine thread keeps its priority');
});

test.serial('a worker a read has grown past the bound is ended, and a fresh one reads the next configuration', async (t) => {
  const file = join(dir, 'retire.yaml');
  writeFileSync(file, largeConfig({ records: 3 }));
  const background = () => threadNiceValues().filter((n) => n === BACKGROUND_NICE).length;
  const before = background();
  const kept = new ConfigReader();
  t.teardown(() => kept.close());
  await kept.read(file);
  // A small read keeps its worker (under RETIRE_HEAP_BYTES).
  t.is(background(), before + 1);
  await kept.close();
  // issue 17: a 20,000-record read left ~170 MB in the worker, collected during the next reload.
  const retiring = new ConfigReader(0);
  t.teardown(() => retiring.close());
  const first = await retiring.read(file);
  // Its replacement starts 5 s later (REPLACEMENT_DELAY_MS): looked for before that.
  const deadline = Date.now() + 4_000;
  while (background() > before && Date.now() < deadline) await new Promise((d) => setTimeout(d, 20));
  t.is(background(), before, 'the worker that read is ended');
  const second = await retiring.read(file, largeConfig({ records: 3, ttl: 31 }));
  t.not(second.fingerprint, first.fingerprint, 'a fresh worker reads the next request');
  t.deepEqual(second.config, readCandidateConfig(file, largeConfig({ records: 3, ttl: 31 })).config);
});

test('the worker reports every problem as a ConfigError, as the engine thread does', async (t) => {
  const file = join(dir, 'bad.yaml');
  writeFileSync(file, largeConfig({ records: 3 }).replace('    service: svc1\n', '    service: svc1\n    bogus: 1\n'));
  const e = await t.throwsAsync(reader.read(file), { instanceOf: ConfigError });
  t.deepEqual(e.problems, [
    { path: 'records[1].bogus', message: 'unknown key (not part of the configuration schema; check the spelling)', line: 1024, col: 5 },
  ]);
  await t.throwsAsync(reader.read(join(dir, 'absent.yaml')), { instanceOf: ConfigError, message: /cannot read: ENOENT/ });
});

test('a FIFO or a device at the configuration path is refused at once, not read', async (t) => {
  const fifo = join(dir, 'fifo.yaml');
  execFileSync('mkfifo', [fifo]);
  // Reading either would block (FIFO without writer) or never end (/dev/zero): bounded here, on a
  // reader of its own (the shared one reads large files for the other tests first). The bound is
  // loose: starting a worker takes seconds on a loaded machine.
  const own = new ConfigReader();
  t.teardown(() => own.close());
  const bounded = <T>(p: Promise<T>) =>
    Promise.race([p, new Promise<never>((_, fail) => setTimeout(() => fail(new Error('the read did not finish in 120 s')), 120_000).unref())]);
  await t.throwsAsync(bounded(own.read(fifo)), { instanceOf: ConfigError, message: /is not a regular file \(a FIFO\)/ });
  await t.throwsAsync(bounded(own.read('/dev/zero')), { instanceOf: ConfigError, message: /is not a regular file \(a character device\)/ });
});

test('compiling in slices gives the event loop turns and the same snapshot as compiling in one go', async (t) => {
  const { config } = readCandidateConfig(join(dir, 'slices.yaml'), largeConfig({ records: 1500 }));
  const input = {
    file: 'x',
    config,
    capabilities: CAPABILITIES,
    state: { geo: emptyLocationDb(), health: dcsDown(), metrics: emptyMetricView },
    nowMs: 1_700_000_000_000,
  };
  let turns = 0;
  const ticker = setInterval(() => turns++, 0);
  let sliced!: Awaited<ReturnType<typeof compileInSlices>>;
  // A scavenge after each slice, while the young generation holds one slice's objects (issue 17:
  // V8's own scavenges of a 16 MiB young generation held the event loop 33-75 ms in a reload).
  const scavenges = await forcedScavenges(async () => (sliced = await compileInSlices(input, 2)));
  clearInterval(ticker);
  t.true(turns >= 5, `other events ran ${turns} times during the compilation`);
  t.true(scavenges >= 5, `${scavenges} scavenges asked for during the compilation`);
  const whole = compileSnapshot<Config>(input);
  t.deepEqual(
    sliced.records.map((r) => [r.name, r.type, r.candidates.length]),
    whole.records.map((r) => [r.name, r.type, r.candidates.length]),
  );
  t.deepEqual([...sliced.zones.zone('big.test')!.nodes.keys()], [...whole.zones.zone('big.test')!.nodes.keys()]);
  t.deepEqual(sliced.serials, whole.serials);
});

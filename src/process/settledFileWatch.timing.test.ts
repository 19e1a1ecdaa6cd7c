import test from 'ava';
import { appendFileSync, mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../core/telemetry/logger.js';
import { watchSettledFile, type FileChange } from './settledFileWatch.js';

const log = createLogger('silent');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A watch on `file` that records each change with the time it was reported (ms after `since()`). */
function recorder(t: { teardown(fn: () => void): void }, file: string) {
  const seen: { change: FileChange; at: number }[] = [];
  let since = Date.now();
  const w = watchSettledFile(file, (change) => seen.push({ change, at: Date.now() - since }), log, { debounceMs: 50, pollMs: 500 });
  t.teardown(() => w?.close());
  return { seen, mark: () => (since = Date.now()) };
}

test('an in-place write is reported once, only after size, mtime and hash held still over two polls', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-watch-'));
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, 'a: 1\n');
  const r = recorder(t, file);
  await sleep(200);
  r.mark();
  const began = Date.now();
  // A writer that pauses between parts (scp, rsync --inplace): each part is a valid prefix.
  writeFileSync(file, 'a: 2\n');
  for (let i = 0; i < 4; i++) {
    await sleep(300);
    appendFileSync(file, `b${i}: ${i}\n`);
  }
  const lastPart = Date.now() - began;
  await sleep(400);
  t.deepEqual(r.seen, [], 'nothing while the file keeps changing');
  await sleep(1500);
  t.deepEqual(
    r.seen.map((s) => s.change),
    ['written'],
  );
  // The last part is seen by the first poll after it and confirmed by the next, 500 ms later.
  t.true(
    r.seen[0]!.at >= lastPart + 500,
    `reported ${r.seen[0]!.at} ms after the write began, the last part at ${lastPart} ms: at least a poll interval after it`,
  );
});

test('a rename over the path is reported at once, without waiting for polls', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-watch-'));
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, 'a: 1\n');
  const r = recorder(t, file);
  await sleep(200);
  r.mark();
  writeFileSync(`${file}.tmp`, 'a: 2\n');
  renameSync(`${file}.tmp`, file);
  await sleep(1500);
  t.deepEqual(
    r.seen.map((s) => s.change),
    ['replaced'],
  );
  t.true(r.seen[0]!.at < 450, `reported after ${r.seen[0]!.at} ms, before the first poll`);
});

test('the Kubernetes ConfigMap swap (the ..data symlink moved to a new directory) is reported at once, and so are later swaps', async (t) => {
  // The layout kubelet writes: dir/gslbd.yaml -> ..data/gslbd.yaml, ..data -> ..2026_v1/
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-watch-'));
  const version = (name: string, text: string) => {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, 'gslbd.yaml'), text);
    symlinkSync(name, join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  };
  version('..2026_v1', 'a: 1\n');
  symlinkSync('..data/gslbd.yaml', join(dir, 'gslbd.yaml'));
  const file = join(dir, 'gslbd.yaml');
  const r = recorder(t, file);
  await sleep(200);
  r.mark();
  version('..2026_v2', 'a: 2\n');
  await sleep(1000);
  t.deepEqual(
    r.seen.map((s) => s.change),
    ['replaced'],
  );
  t.true(r.seen[0]!.at < 450);
  version('..2026_v3', 'a: 3\n');
  await sleep(1000);
  t.deepEqual(
    r.seen.map((s) => s.change),
    ['replaced', 'replaced'],
  );
});

test('an in-place write through the symlink (to the file in the target directory) is seen too', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-watch-'));
  mkdirSync(join(dir, 'real'));
  writeFileSync(join(dir, 'real', 'gslbd.yaml'), 'a: 1\n');
  symlinkSync(join(dir, 'real', 'gslbd.yaml'), join(dir, 'gslbd.yaml'));
  const r = recorder(t, join(dir, 'gslbd.yaml'));
  await sleep(200);
  writeFileSync(join(dir, 'real', 'gslbd.yaml'), 'a: 2\n');
  await sleep(2000);
  t.deepEqual(
    r.seen.map((s) => s.change),
    ['written'],
  );
});

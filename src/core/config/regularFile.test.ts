import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileKindError, readRegularFile, readRegularFileAsync, referencedFileProblem } from './regularFile.js';

/**
 * Files the engine reads are regular files under a size cap (a FIFO at the configuration path
 * froze a reload for 14 s; `check-config /dev/zero` grew to 8 GB): every kind of non-regular file
 * is refused before any read, and so is a file over its cap.
 */

const dir = mkdtempSync(join(tmpdir(), 'gslbd-regular-file-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

/** One path of every kind that is not a regular file, made in the test's directory. */
async function otherKinds(): Promise<Record<string, string>> {
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const directory = join(dir, 'directory');
  mkdirSync(directory);
  const socket = join(dir, 'socket');
  // Node removes the socket file when the server closes: it listens until the tests end.
  const server = createServer();
  await new Promise<void>((r) => server.listen(socket, r));
  server.unref();
  const link = join(dir, 'link-to-zero');
  symlinkSync('/dev/zero', link);
  return { 'a FIFO': fifo, 'a directory': directory, 'a socket': socket, 'a character device': '/dev/zero', 'a character device (through a link)': link };
}

let kinds: Promise<Record<string, string>>;
test.before(() => {
  kinds = otherKinds();
});

test('every kind of file that is not a regular file is refused at once, by the sync and async reads and by the check', async (t) => {
  for (const [kind, path] of Object.entries(await kinds)) {
    const reason = `is not a regular file (${kind.replace(' (through a link)', '')})`;
    const sync = t.throws(() => readRegularFile(path, 1 << 20), { instanceOf: FileKindError }, kind);
    t.is(sync.reason, reason, kind);
    const async = await t.throwsAsync(readRegularFileAsync(path, 1 << 20), { instanceOf: FileKindError }, kind);
    t.is(async.reason, reason, kind);
    t.is(referencedFileProblem('shown', path, 1 << 20), `"shown" ${reason}`, kind);
  }
});

test('a regular file over its cap is refused; one at the cap is read whole', async (t) => {
  const file = join(dir, 'nine');
  writeFileSync(file, '123456789');
  t.is(t.throws(() => readRegularFile(file, 8), { instanceOf: FileKindError }).reason, 'is 9 bytes, more than the limit of 8');
  t.is((await t.throwsAsync(readRegularFileAsync(file, 8), { instanceOf: FileKindError })).reason, 'is 9 bytes, more than the limit of 8');
  t.is(referencedFileProblem('nine', file, 8), '"nine" is 9 bytes, more than the limit of 8');
  t.is(readRegularFile(file, 9).toString(), '123456789');
  t.is((await readRegularFileAsync(file, 9)).toString(), '123456789');
  t.is(referencedFileProblem('nine', file, 9), undefined);
});

test('a missing file keeps its error code', async (t) => {
  const absent = join(dir, 'absent');
  t.is(t.throws(() => readRegularFile(absent, 8), { instanceOf: FileKindError }).code, 'ENOENT');
  t.is((await t.throwsAsync(readRegularFileAsync(absent, 8), { instanceOf: FileKindError })).code, 'ENOENT');
  t.is(referencedFileProblem('absent', absent, 8), 'cannot read "absent": ENOENT');
});

test('a file larger than one read is read whole in place, by the sync and async reads', async (t) => {
  // 20 MiB and 3 bytes: more than one 16 MiB read. Concatenating the pieces of a 55 MB compiled
  // location file held a location reload's event loop 45-65 ms (issue 17): both reads fill one
  // buffer of the size stat gives, plus the byte that shows the end.
  const size = (20 << 20) + 3;
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4093) bytes[i] = (i / 4093) & 0xff;
  const file = join(dir, 'large');
  writeFileSync(file, bytes);
  for (const read of [readRegularFileAsync(file, 64 << 20), Promise.resolve(readRegularFile(file, 64 << 20))]) {
    const got = await read;
    t.true(got.equals(bytes));
    t.is(got.buffer.byteLength, size + 1);
  }
});

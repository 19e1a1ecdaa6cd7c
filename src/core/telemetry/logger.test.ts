import test from 'ava';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, LOG_BUFFER_BYTES } from './logger.js';

/**
 * Reads everything written to the FIFO's non-blocking read end until `done` says the text is
 * complete (polling: an empty FIFO answers EAGAIN).
 * @throws Error after 20 s.
 */
async function readUntil(fd: number, done: (text: string) => boolean): Promise<string> {
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(1 << 20);
  const until = Date.now() + 20000;
  for (;;) {
    let n = 0;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
    }
    if (n > 0) chunks.push(Buffer.from(buf.subarray(0, n)));
    else {
      const text = Buffer.concat(chunks).toString();
      if (done(text)) return text;
      if (Date.now() > until) throw new Error(`incomplete after 20 s: ${text.length} bytes`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

test('logging to a pipe whose reader stalls never blocks: lines are buffered, those beyond the buffer dropped and counted once the reader catches up', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-logger-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const fifo = join(dir, 'log.fifo');
  execFileSync('mkfifo', [fifo]);
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  // A blocking write end, as a service manager's pipe is: a synchronous write to a full one waits for the reader.
  const writer = openSync(fifo, 'w');
  t.teardown(() => {
    closeSync(reader);
    closeSync(writer);
  });
  const log = createLogger('info', writer);
  const pad = 'x'.repeat(1000);
  // 24 MiB of lines while nobody reads (the FIFO holds 64 KiB): before, the first write that
  // found the FIFO full never returned.
  const lines = Math.ceil((LOG_BUFFER_BYTES * 1.5) / 1024);
  for (let i = 0; i < lines; i++) log.info({ i, pad }, 'line');
  const text = await readUntil(reader, (s) => s.includes('log lines dropped'));
  const parsed = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { msg: string; i?: number; dropped?: number });
  const written = parsed.filter((l) => l.msg === 'line');
  const report = parsed.find((l) => l.msg === 'log lines dropped: the log reader was too slow');
  t.truthy(report);
  // Every line is either written, in order and whole, or counted as dropped.
  t.deepEqual(
    written.map((l) => l.i),
    Array.from({ length: written.length }, (_, i) => i),
  );
  t.is(written.length + report!.dropped!, lines);
  t.true(written.length * 1024 >= LOG_BUFFER_BYTES * 0.9, `${written.length} lines written`);
});

test('a line to a regular file is written before the call returns', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-logger-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const fd = openSync(join(dir, 'log.jsonl'), 'w+');
  t.teardown(() => closeSync(fd));
  createLogger('info', fd).info({ n: 1 }, 'first');
  const buf = Buffer.alloc(4096);
  const text = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString();
  t.like(JSON.parse(text) as object, { n: 1, msg: 'first' });
});

import test from 'ava';
import { HttpResponseReader } from './httpResponse.js';

/** Feeds `parts` (strings) and returns what the reader saw; `end` closes the connection after them. */
function read(parts: string[], options: { limit?: number; head?: boolean; end?: boolean } = {}) {
  const r = new HttpResponseReader(options.limit ?? 1024, options.head ?? false);
  for (const p of parts) r.push(Buffer.from(p, 'latin1'));
  if (options.end) r.end();
  return { status: r.status, error: r.error, head: r.headComplete, done: r.bodyComplete, body: r.bodyText() };
}

test('status line and Content-Length body, in one piece or split anywhere', (t) => {
  const whole = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello';
  t.deepEqual(read([whole]), { status: 200, error: '', head: true, done: true, body: 'hello' });
  for (let cut = 1; cut < whole.length; cut++) {
    t.deepEqual(read([whole.slice(0, cut), whole.slice(cut)]), { status: 200, error: '', head: true, done: true, body: 'hello' }, `cut at ${cut}`);
  }
});

test('the status is known as soon as the head ends, before any body', (t) => {
  t.like(read(['HTTP/1.0 503 Service Unavailable\r\nContent-Length: 100\r\n\r\n']), { status: 503, head: true, done: false });
  t.like(read(['HTTP/1.1 302\r\nLocation: /x\r\n\r\n']), { status: 302, head: true }, 'the reason phrase may be empty');
});

test('chunked bodies are decoded (extensions, split size lines), and must end with the zero chunk', (t) => {
  const chunked = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\n\r\n';
  t.deepEqual(read([chunked]), { status: 200, error: '', head: true, done: true, body: 'Wikipedia in\r\n\r\nchunks.' });
  for (let cut = 40; cut < chunked.length; cut += 3) {
    t.is(read([chunked.slice(0, cut), chunked.slice(cut)]).body, 'Wikipedia in\r\n\r\nchunks.', `cut at ${cut}`);
  }
  t.like(read(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n'], { end: true }), {
    error: 'connection closed before the end of the body',
  });
  t.like(read(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n']), { error: 'invalid chunk size' });
  t.like(read(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY\r\n']), { error: 'missing CRLF after chunk data' });
});

test('a body without length runs to the end of the connection; bodies are cut at the limit', (t) => {
  t.like(read(['HTTP/1.0 200 OK\r\n\r\nall of ', 'it'], { end: true }), { done: true, body: 'all of it', error: '' });
  t.like(read(['HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n', 'x'.repeat(5000)], { limit: 1000 }), { done: true, body: 'x'.repeat(1000) });
  t.like(read(['HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'], { end: true }), { error: 'connection closed before the end of the body' });
});

test('no body for HEAD, 204 and 304', (t) => {
  t.like(read(['HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n'], { head: true }), { done: true, body: '' });
  t.like(read(['HTTP/1.1 204 No Content\r\n\r\n']), { done: true });
  t.like(read(['HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n']), { done: true });
});

test('malformed responses fail with a reason and never throw', (t) => {
  t.like(read(['SSH-2.0-OpenSSH_9.2\r\n\r\n']), { error: 'not an HTTP/1.x response', head: false });
  t.like(read(['HTTP/2 200\r\n\r\n']), { error: 'not an HTTP/1.x response' });
  t.like(read(['HTTP/1.1 200 OK\r\nno colon here\r\n\r\n']), { error: 'malformed header line' });
  t.like(read(['HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n']), { error: 'invalid Content-Length' });
  t.like(read(['HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n']), { error: 'invalid Content-Length' });
  t.like(read(['HTTP/1.1 200 OK\r\n' + 'X-Pad: y\r\n'.repeat(2000)]), { error: 'response head larger than 16 KiB' });
  t.like(read(['HTTP/1.1 200 OK\r\nContent'], { end: true }), { error: 'connection closed before a complete response head' });
  t.like(read([''], { end: true }), { error: 'connection closed before a complete response head' });
});

test('chunks are only borrowed: one read buffer reused (and overwritten) for every piece gives the same result', (t) => {
  const whole = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello world';
  for (let size = 1; size <= whole.length; size += 3) {
    const r = new HttpResponseReader(1024, false);
    const shared = Buffer.alloc(size);
    for (let i = 0; i < whole.length; i += size) {
      const n = shared.write(whole.slice(i, i + size), 'latin1');
      r.push(shared.subarray(0, n));
      shared.fill('X');
    }
    t.deepEqual(
      { status: r.status, error: r.error, done: r.bodyComplete, body: r.bodyText() },
      { status: 200, error: '', done: true, body: 'hello world' },
      `pieces of ${size}`,
    );
  }
});

test('a limit of 0 (no body expectations) keeps no body byte and is complete at the end of the head', (t) => {
  t.deepEqual(read(['HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial'], { limit: 0 }), { status: 200, error: '', head: true, done: true, body: '' });
  t.deepEqual(read(['HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n'], { limit: 0 }), { status: 200, error: '', head: true, done: true, body: '' });
  t.deepEqual(read(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n'], { limit: 0 }), {
    status: 200,
    error: '',
    head: true,
    done: true,
    body: '',
  });
  t.like(read(['HTTP/1.1 200 OK\r\nbroken header\r\n\r\n'], { limit: 0 }), { error: 'malformed header line' }, 'the head is still checked');
});

test('interim 1xx responses are skipped: the final response after them decides (RFC 9110 §15.2)', (t) => {
  const hints = 'HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n';
  const ok = 'HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nhealthy';
  t.deepEqual(read([hints + ok]), { status: 200, error: '', head: true, done: true, body: 'healthy' });
  const both = hints + ok;
  for (let cut = 1; cut < both.length; cut++) {
    t.deepEqual(read([both.slice(0, cut), both.slice(cut)]), { status: 200, error: '', head: true, done: true, body: 'healthy' }, `cut at ${cut}`);
  }
  t.deepEqual(
    read(['HTTP/1.1 100 Continue\r\n\r\n', 'HTTP/1.1 103 Early Hints\r\nLink: </b>\r\n\r\n', 'HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n']),
    { status: 503, error: '', head: true, done: true, body: '' },
  );
  t.like(
    read([hints], { end: true }),
    { status: 0, head: false, error: 'connection closed before a complete response head' },
    'only interim heads: no response',
  );
  t.like(
    read(['HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n']),
    { status: 101, head: true },
    '101 is final (the reader never asks for an upgrade)',
  );
  t.like(read([hints], { head: true, limit: 0 }), { status: 0, head: false }, 'a HEAD request waits for the final head too');
});

test('the status line is matched exactly: HTTP/1.0 or 1.1, three digits, an optional reason without CR or LF', (t) => {
  t.like(read(['HTTP/1.1 200\r\n\r\n']), { status: 200, head: true, error: '' }, 'a head that is only a status line');
  t.like(read(['HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n']), { status: 404, error: '' });
  for (const bad of [
    'HTTP/1.2 200 OK',
    'HTTP/1.1 20 OK',
    'HTTP/1.1 2000 OK',
    'HTTP/1.1  200 OK',
    'HTTP/1.1 2x0 OK',
    'HTTP/1.1 200OK',
    'http/1.1 200 OK',
    'HTTP/1.1 200 O\rK',
    'HTTP/1.1 200 O\nK',
    'HTTP/1.1',
  ]) {
    t.like(read([`${bad}\r\nContent-Length: 0\r\n\r\n`]), { status: 0, error: 'not an HTTP/1.x response' }, JSON.stringify(bad));
  }
});

test('header names are found in any case, with spaces around them; other long names are skipped', (t) => {
  t.like(read(['HTTP/1.1 200 OK\r\nX-Some-Long-Header-Name: 12\r\nCONTENT-LENGTH: 3\r\n\r\nabcdef']), { done: true, body: 'abc' });
  t.like(read(['HTTP/1.1 200 OK\r\n content-length : 2\r\n\r\nxyz']), { done: true, body: 'xy' });
  t.like(read(['HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n']), { done: true, body: 'abc' });
  t.like(read(['HTTP/1.1 200 OK\r\nContent-Type: a:b\r\n:empty-name\r\n\r\n']), { error: 'malformed header line' }, 'a colon first is no name');
});

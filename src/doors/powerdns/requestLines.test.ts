import test from 'ava';
import { RequestLines } from './requestLines.js';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');

test('splits on LF, keeps partial lines across chunks, strips a trailing CR', (t) => {
  const lines = new RequestLines(100);
  t.deepEqual(lines.push(b('{"a":1}\n{"b"')), ['{"a":1}']);
  t.is(lines.partialBytes, 4);
  t.deepEqual(lines.push(b(':2}\r\n\n')), ['{"b":2}', '']);
  t.is(lines.partialBytes, 0);
});

test('multi-byte UTF-8 split between chunks is decoded whole', (t) => {
  const lines = new RequestLines(100);
  const text = b('"café"\n');
  t.deepEqual(lines.push(text.subarray(0, 4)), []);
  t.deepEqual(lines.push(text.subarray(4)), ['"café"']);
});

test('a line longer than the limit is oversized, terminated or not', (t) => {
  t.is(new RequestLines(8).push(b('123456789\n')), 'oversized');
  const open = new RequestLines(8);
  t.deepEqual(open.push(b('1234')), []);
  t.is(open.push(b('56789')), 'oversized');
  t.deepEqual(new RequestLines(8).push(b('12345678\n')), ['12345678']);
});

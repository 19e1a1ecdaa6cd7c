import test from 'ava';
import { pino } from 'pino';
import { RateLimitedLog } from './rateLimitedLog.js';

test('one line per kind and interval; the next line says how many were left out', (t) => {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  let now = 0;
  const limited = new RateLimitedLog(log, 1000, () => now);
  for (let i = 0; i < 100; i++) limited.warn('bad', { i }, 'bad request');
  limited.warn('other', {}, 'other kind');
  t.deepEqual(
    lines.map((l) => [l.msg, l.i, l.suppressed]),
    [
      ['bad request', 0, undefined],
      ['other kind', undefined, undefined],
    ],
  );
  now = 1000;
  limited.warn('bad', { i: 100 }, 'bad request');
  t.deepEqual(lines.at(-1)!.suppressed, 99);
  t.is(lines.length, 3);
});

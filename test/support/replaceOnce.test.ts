import test from 'ava';
import { replaceOnce } from './replaceOnce.js';

test('replaces the one occurrence, literally', (t) => {
  t.is(replaceOnce('port: 5353\nadmin: 8053\n', 'port: 5353', 'port: 45353'), 'port: 45353\nadmin: 8053\n');
  t.is(replaceOnce('a.b', 'a', '$&$&'), '$&$&.b');
});

test('an absent or repeated substring is an error naming it', (t) => {
  t.throws(() => replaceOnce('port: 5353', 'port: 53 ', 'x'), { message: 'fixture edit: "port: 53 " must occur exactly once in the text' });
  t.throws(() => replaceOnce('a a', 'a', 'b'), { message: 'fixture edit: "a" must occur exactly once in the text' });
});

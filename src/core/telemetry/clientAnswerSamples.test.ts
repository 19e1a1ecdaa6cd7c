import test from 'ava';
import { parseIp } from '../net/ipAddress.js';
import { CLIENT_ANSWER_SAMPLE_LIMIT, ClientAnswerSamples } from './clientAnswerSamples.js';

test('answers are kept up to the bound between two drains, the rest only counted; a drain starts a new period', (t) => {
  const s = new ClientAnswerSamples();
  const a = parseIp('192.0.2.1');
  for (let i = 0; i < CLIENT_ANSWER_SAMPLE_LIMIT + 5; i++) s.add(a, ['east']);
  const first = s.drain();
  t.is(first.answers.length, CLIENT_ANSWER_SAMPLE_LIMIT);
  t.is(first.dropped, 5);
  t.deepEqual(first.answers[0], { address: a, dcs: ['east'] });
  s.add(a, ['west']);
  t.deepEqual(s.drain(), { answers: [{ address: a, dcs: ['west'] }], dropped: 0 });
});

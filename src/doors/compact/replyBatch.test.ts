import test from 'ava';
import { encodeAnswer, encodePong, type AnswerFrame } from './frameCodec.js';
import { ReplyBatch } from './replyBatch.js';

const none: never[] = [];
const answer = (i: number): AnswerFrame => ({
  rcode: 0,
  authoritative: true,
  notOurs: false,
  ecsScope: 24,
  clientScope: 24,
  answers: [{ name: `q${i}.example.test`, type: 'A', ttl: 30, data: `192.0.2.${i & 255}` }],
  authority: none,
  additional: none,
});

test('frames come out in order, byte for byte as encoded one by one, in one write per flush', (t) => {
  const writes: Buffer[] = [];
  const batch = new ReplyBatch((b) => writes.push(b));
  batch.answer(1, answer(1));
  batch.frame(encodePong(2, 1));
  batch.answer(3, answer(3));
  t.is(writes.length, 0);
  batch.flush();
  batch.flush();
  t.is(writes.length, 1);
  t.deepEqual(writes[0], Buffer.concat([encodeAnswer(1, answer(1)), encodePong(2, 1), encodeAnswer(3, answer(3))]));
});

test('a burst larger than one batch is written in parts, nothing lost; discard drops what is gathered', (t) => {
  const writes: Buffer[] = [];
  const batch = new ReplyBatch((b) => writes.push(b));
  const expected: Buffer[] = [];
  for (let i = 0; i < 20_000; i++) {
    batch.answer(i, answer(i));
    expected.push(encodeAnswer(i, answer(i)));
  }
  batch.flush();
  t.true(writes.length > 1);
  t.deepEqual(Buffer.concat(writes), Buffer.concat(expected));
  batch.answer(1, answer(1));
  batch.discard();
  batch.flush();
  t.is(Buffer.concat(writes).length, Buffer.concat(expected).length);
});

test('a frame larger than a batch is written on its own after what came before it', (t) => {
  const writes: Buffer[] = [];
  const batch = new ReplyBatch((b) => writes.push(b));
  const big = Buffer.alloc(300 * 1024, 7);
  batch.answer(1, answer(1));
  batch.frame(big);
  batch.flush();
  t.deepEqual(writes, [encodeAnswer(1, answer(1)), big]);
});

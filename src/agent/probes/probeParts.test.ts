import test from 'ava';
import { AllowList } from './allowList.js';
import { hopsFromTtl } from './hopCount.js';
import { PacketBudget } from './packetBudget.js';
import { probesSchema } from './probeSchema.js';
import { trainStats } from './trainStats.js';

test('the allow list: inside an allowed network only, per family; empty allows nothing; junk is not an address', (t) => {
  const allow = new AllowList(['127.0.0.0/8', '2001:db8::/32', '192.0.2.7']);
  t.true(allow.allows('127.1.2.3'));
  t.true(allow.allows('2001:db8::1'));
  t.true(allow.allows('192.0.2.7'));
  t.false(allow.allows('192.0.2.8'));
  t.false(allow.allows('10.0.0.1'));
  t.false(allow.allows('::ffff:10.0.0.1'));
  t.false(allow.allows('2001:db9::1'));
  t.false(allow.allows('not-an-address'));
  t.false(new AllowList([]).allows('127.0.0.1'));
  t.deepEqual(probesSchema.parse({}).allow, [], 'the default allows nothing');
  t.false(probesSchema.safeParse({ allow: ['192.0.2.1/24'] }).success, 'host bits set');
});

// Jitter of [10, 12, 11]: J = 0 + (2 − 0) / 16 = 0.125, then 0.125 + (1 − 0.125) / 16 = 0.1797.
test('train statistics: min, median (even and odd), RFC 3550 jitter; nothing answered gives none', (t) => {
  t.is(trainStats([]), undefined);
  t.deepEqual(trainStats([10, 12, 11]), { rttMinMs: 10, rttMedianMs: 11, jitterMs: 0.18 });
  t.is(trainStats([4, 1, 3, 2])!.rttMedianMs, 2.5);
  t.is(trainStats([5, 5, 5, 5])!.jitterMs, 0);
});

test('the packet budget holds one second of tokens, then paces to the rate, in order', async (t) => {
  let now = 0;
  const budget = new PacketBudget(10, () => now);
  for (let i = 0; i < 10; i++) await budget.take();
  let taken = false;
  const next = budget.take().then(() => (taken = true));
  await new Promise((r) => setTimeout(r, 30));
  t.false(taken, 'the bucket is empty: the 11th packet waits');
  now = 100;
  await next;
  t.true(taken, 'one token after 100 ms at 10/s');
});

test('hops from a received TTL: the initial TTL is the next of 64, 128, 255 at or above it', (t) => {
  t.is(hopsFromTtl(64), 0);
  t.is(hopsFromTtl(62), 2);
  t.is(hopsFromTtl(1), 63);
  t.is(hopsFromTtl(65), 63, 'above 64: sent with 128 (Windows)');
  t.is(hopsFromTtl(120), 8);
  t.is(hopsFromTtl(250), 5, 'above 128: sent with 255 (network gear)');
  t.is(hopsFromTtl(255), 0);
  t.throws(() => hopsFromTtl(0), { instanceOf: RangeError });
  t.throws(() => hopsFromTtl(256), { instanceOf: RangeError });
});

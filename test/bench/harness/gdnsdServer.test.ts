import test from 'ava';
import { cidrBlocks } from './gdnsdServer.js';

const v4 = (s: string): bigint => BigInt(s.split('.').reduce((a, o) => a * 256 + Number(o), 0));
const show = (blocks: [bigint, number][]): string[] =>
  blocks.map(([n, len]) => `${[24, 16, 8, 0].map((s) => Number((n >> BigInt(s)) & 255n)).join('.')}/${len}`);

test('a range becomes the fewest CIDR blocks covering it exactly', (t) => {
  t.deepEqual(show(cidrBlocks(v4('10.0.0.0'), v4('10.0.0.255'), 32)), ['10.0.0.0/24']);
  t.deepEqual(show(cidrBlocks(v4('10.0.0.1'), v4('10.0.0.6'), 32)), ['10.0.0.1/32', '10.0.0.2/31', '10.0.0.4/31', '10.0.0.6/32']);
  t.deepEqual(show(cidrBlocks(v4('193.0.0.0'), v4('193.0.23.255'), 32)), ['193.0.0.0/20', '193.0.16.0/21']);
  t.deepEqual(show(cidrBlocks(0n, 2n ** 32n - 1n, 32)), ['0.0.0.0/0']);
});

test('IPv6 ranges use 128-bit prefix lengths', (t) => {
  const start = 0x20010db8n << 96n;
  t.deepEqual(cidrBlocks(start, start + (1n << 96n) - 1n, 128), [[start, 32]]);
});

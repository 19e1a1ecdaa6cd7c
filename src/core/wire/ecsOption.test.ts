import test from 'ava';
import { formatIp } from '../net/ipAddress.js';
import { parseEcs, readEcs, replyScope, type EcsOption } from './ecsOption.js';

/** The ECS option codec (RFC 7871 §6) and the scope a reply carries (§7.2.1, docs/PRODUCT.md §8). */

const ecs = (bytes: number[]): EcsOption => {
  const r = parseEcs(Buffer.from(bytes));
  if (typeof r === 'string') throw new Error(r);
  return r;
};

test('parses IPv4, IPv6 and IPv4-mapped options', (t) => {
  const v4 = ecs([0, 1, 24, 0, 192, 0, 2]);
  t.deepEqual([v4.family, v4.sourcePrefix, formatIp(v4.address), v4.effectivePrefix, v4.address.mapped], [1, 24, '192.0.2.0', 24, false]);
  const v6 = ecs([0, 2, 48, 0, 0x20, 0x01, 0x0d, 0xb8, 0, 1]);
  t.deepEqual([v6.family, formatIp(v6.address), v6.effectivePrefix], [2, '2001:db8:1::', 48]);
  const mapped = ecs([0, 2, 120, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 20, 30]);
  t.deepEqual([mapped.family, formatIp(mapped.address), mapped.effectivePrefix, mapped.address.mapped], [2, '10.20.30.0', 24, true]);
  const zero = ecs([0, 1, 0, 0]);
  t.deepEqual([zero.sourcePrefix, zero.addressBytes.length, zero.effectivePrefix], [0, 0, 0]);
});

test('family 0 with a /0 source prefix (dig +subnet=0) means "use no client data"', (t) => {
  const none = ecs([0, 0, 0, 0]);
  t.deepEqual([none.family, none.sourcePrefix, none.addressBytes.length, none.effectivePrefix], [0, 0, 0, 0]);
  t.is(replyScope(none, 24), 0);
});

const malformed: [bytes: number[], reason: string][] = [
  [[0, 1, 8], 'ECS option shorter than 4 bytes'],
  [[0, 3, 8, 0, 10], 'ECS family 3 is not 1 (IPv4) or 2 (IPv6), nor 0 with a /0 prefix'],
  [[0, 0, 8, 0, 10], 'ECS family 0 is not 1 (IPv4) or 2 (IPv6), nor 0 with a /0 prefix'],
  [[0, 0, 0, 0, 10], 'ECS family 0 is not 1 (IPv4) or 2 (IPv6), nor 0 with a /0 prefix'],
  [[0, 1, 33, 0, 1, 2, 3, 4, 5], 'ECS source prefix 33 is longer than 32'],
  [[0, 2, 129, 0, ...new Array<number>(17).fill(0)], 'ECS source prefix 129 is longer than 128'],
  [[0, 1, 24, 24, 10, 20, 30], 'ECS scope prefix must be 0 in a query'],
  [[0, 1, 16, 0, 10, 20, 30], 'ECS address length does not match the source prefix'],
  [[0, 1, 24, 0, 10, 20], 'ECS address length does not match the source prefix'],
  [[0, 1, 23, 0, 10, 20, 31], 'ECS address has bits set beyond the source prefix'],
  [[0, 1, 1, 0, 0xc0], 'ECS address has bits set beyond the source prefix'],
];
for (const [bytes, reason] of malformed) {
  test(`rejects ${bytes.join(' ')}: ${reason}`, (t) => {
    t.is(parseEcs(Buffer.from(bytes)), reason);
    t.is(readEcs(Buffer.from([0xff, ...bytes, 0xff]), 1, 1 + bytes.length), reason, 'readEcs in place, the same reason');
  });
}

test('readEcs reads the option in place inside a larger buffer: the subnet parseEcs gives, nothing outside the range read', (t) => {
  const options = [
    [0, 1, 24, 0, 192, 0, 2],
    [0, 1, 23, 0, 10, 20, 30],
    [0, 2, 48, 0, 0x20, 0x01, 0x0d, 0xb8, 0, 1],
    [0, 2, 56, 0, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0x80],
    [0, 2, 120, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 20, 30],
    [0, 2, 96, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255],
    [0, 1, 0, 0],
    [0, 0, 0, 0],
  ];
  for (const bytes of options) {
    const expected = ecs(bytes);
    // Bytes after the range that would set address bits if they were read.
    const framed = Buffer.from([0x5a, 0x5a, ...bytes, 0xff, 0xff, 0xff, 0xff]);
    const subnet = readEcs(framed, 2, 2 + bytes.length);
    if (typeof subnet === 'string') return t.fail(`${bytes.join(' ')}: ${subnet}`);
    t.deepEqual(
      subnet,
      { family: expected.family, sourcePrefix: expected.sourcePrefix, address: expected.address, effectivePrefix: expected.effectivePrefix },
      bytes.join(' '),
    );
  }
  t.is(readEcs(Buffer.from([0, 1, 24, 0, 10, 20, 30]), 0, 6), 'ECS address length does not match the source prefix', 'end cuts the option short');
});

// option, decision scope → reply scope.
const scopes: [title: string, bytes: number[], scope: number, reply: number][] = [
  ['IPv4: the decision scope as is', [0, 1, 24, 0, 10, 20, 30], 18, 18],
  ['IPv4: may be longer than the source (RFC 7871 §7.2.1)', [0, 1, 16, 0, 10, 20], 20, 20],
  ['client-independent answer', [0, 1, 24, 0, 10, 20, 30], 0, 0],
  ['source /0: never client data', [0, 1, 0, 0], 8, 0],
  ['IPv4-mapped: 96 + the IPv4 scope', [0, 2, 120, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 20, 30], 24, 120],
  ['IPv4-mapped, client-independent: 0, not 96', [0, 2, 120, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 10, 20, 30], 0, 0],
  ['IPv6', [0, 2, 56, 0, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0], 32, 32],
];
for (const [title, bytes, scope, reply] of scopes) {
  test(`reply scope, ${title}: ${scope} → ${reply}`, (t) => {
    t.is(replyScope(ecs(bytes), scope), reply);
  });
}

test('IPv4-mapped ECS of /96 carries no IPv4 bits: the resolver decides and the scope is 0', (t) => {
  const option = ecs([0, 2, 96, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255]);
  t.deepEqual([option.address.mapped, option.effectivePrefix], [true, 0]);
  t.is(replyScope(option, 8), 0);
});

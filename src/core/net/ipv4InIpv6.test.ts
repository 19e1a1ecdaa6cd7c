import test from 'ava';
import { parseIp } from './ipAddress.js';
import { ipv4BlocksScope, outsideIpv4MappedScope } from './ipv4InIpv6.js';

/**
 * The floor of an IPv6 client's ECS scope: the block around it never reaches a range that carries
 * IPv4 addresses, and stays inside the one it is in. Exact values, so a changed list of blocks
 * shows here first.
 */
const FLOORS: [address: string, floor: number, why: string][] = [
  ['2001:db8::', 21, 'shares 20 bits with Teredo 2001::/32'],
  ['2001:db9::', 21, 'the same'],
  ['2001:4860::', 18, 'shares 17 bits with Teredo'],
  ['2002:c000:200::', 16, 'inside 6to4 2002::/16'],
  ['2003::', 16, 'shares 15 bits with 6to4'],
  ['2400:cb00::', 6, 'shares 5 bits with 6to4 and Teredo'],
  ['::1', 96, 'inside IPv4-compatible ::/96'],
  ['::5', 96, 'the same'],
  ['::1:0:0', 96, 'shares 95 bits with ::/96 (80 with the mapped block)'],
  ['::fffe:0:0', 96, 'shares 95 bits with the mapped block'],
  ['::ffff:0:0:0', 96, 'inside SIIT ::ffff:0:0:0/96'],
  ['64:ff9b::a00:1', 96, 'inside the NAT64 well-known prefix'],
  ['fd00::', 1, 'shares no bit with any of them'],
];

test('IPv6 scope floor: the nearest IPv4-carrying block, exact per address', (t) => {
  for (const [text, floor, why] of FLOORS) t.is(ipv4BlocksScope(parseIp(text)), floor, `${text}: ${why}`);
});

test('IPv4 clients (and folded IPv4-mapped ones) have no floor: their scope is counted in IPv4 bits', (t) => {
  t.is(ipv4BlocksScope(parseIp('10.20.30.1')), 0);
  t.is(ipv4BlocksScope(parseIp('::ffff:10.20.30.1')), 0);
});

test('outside the IPv4-mapped block: one bit more than an IPv6 address shares with ::ffff:0:0', (t) => {
  t.is(outsideIpv4MappedScope(parseIp('2001:db8::')), 3);
  t.is(outsideIpv4MappedScope(parseIp('::1')), 81);
  t.is(outsideIpv4MappedScope(parseIp('::fffe:0:0')), 96);
  t.is(outsideIpv4MappedScope(parseIp('8000::')), 1);
});

import test from 'ava';
import { parseIp } from '../net/ipAddress.js';
import { clientNetworkKey, DEFAULT_CLIENT_NETWORK_PREFIX } from './metricView.js';

const key = (address: string, ipv6 = 48, ipv4 = 24) => clientNetworkKey(parseIp(address), { ipv4, ipv6 });

test('IPv4 client networks are the network number; IPv4-mapped IPv6 is the same network', (t) => {
  t.is(clientNetworkKey(parseIp('198.51.100.7'), DEFAULT_CLIENT_NETWORK_PREFIX), 12989284, '198 × 2¹⁶ + 51 × 2⁸ + 100');
  t.is(key('198.51.100.255'), 12989284);
  t.is(key('198.51.101.0'), 12989285);
  t.is(key('::ffff:198.51.100.7'), 12989284);
  t.is(key('0.0.0.0'), 0);
  t.is(key('255.255.255.255'), 0xffffff);
  t.is(key('198.51.100.7', 48, 32), 0xc6336407);
  t.is(key('198.51.100.7', 48, 1), 1);
});

test('IPv6 client networks of at most 52 bits are −1 − the network number: exact at the /48 boundaries', (t) => {
  t.is(key('2001:db8:1::'), -35188897218562, '−1 − 0x20010db80001');
  t.is(key('2001:db8:1:ffff:ffff:ffff:ffff:ffff'), -35188897218562, 'the last address of the /48');
  t.is(key('2001:db8:2::'), -35188897218563, 'the next /48');
  t.is(key('2001:db8:0:ffff::'), -35188897218561, 'the previous /48');
  t.is(key('::'), -1, 'the first IPv6 network is −1, never 0 (IPv4 0.0.0.0/24)');
  t.is(key('2001:db8:ffff::', 32), -1 - 0x20010db8);
  t.is(key('2001:db8:1:f000::', 52), -563022355496992);
  t.is(key('2001:db8:1:efff::', 52), -563022355496991);
  t.is(key('ffff:ffff:ffff:f000::', 52), -(2 ** 52), 'the largest 52-bit network is still exact');
  t.is(key('ffff:ffff:ffff:e000::', 52), -(2 ** 52) + 1);
  t.is(key('::ffff:0:0', 48), 0, '::ffff:0.0.0.0 is IPv4, not IPv6');
});

test('IPv6 client networks longer than 52 bits are keyed by their masked words', (t) => {
  t.is(key('2001:db8:1:7ff::1', 53), '6/536939960/65536/0/0');
  t.is(key('2001:db8:1:800::', 53), '6/536939960/67584/0/0');
  t.is(key('2001:db8:1:2:3:4:5:6', 128), '6/536939960/65538/196612/327686');
  t.is(key('2001:db8:1:2:3:4:5:6', 64), '6/536939960/65538/0/0');
});

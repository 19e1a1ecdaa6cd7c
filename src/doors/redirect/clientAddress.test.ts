import test from 'ava';
import { formatIp, parseIp } from '../../core/net/ipAddress.js';
import { ClientAddresses } from './clientAddress.js';

const clients = new ClientAddresses(['10.0.0.0/8', '2001:db8:ffff::/48']);
const clientOf = (peer: string, xff?: string): string => formatIp(clients.clientOf(parseIp(peer), xff));

test('without a trusted peer the header is ignored: a client cannot choose its own site', (t) => {
  t.is(clientOf('192.0.2.1', '198.51.100.7'), '192.0.2.1');
  t.is(clientOf('2001:db8::1', '198.51.100.7'), '2001:db8::1');
  t.is(clientOf('10.1.2.3'), '10.1.2.3', 'a trusted peer without the header is the client');
});

test('from a trusted proxy: the rightmost address that is not a trusted proxy', (t) => {
  t.is(clientOf('10.1.2.3', '198.51.100.7'), '198.51.100.7');
  t.is(clientOf('10.1.2.3', '198.51.100.7, 10.9.9.9'), '198.51.100.7', 'a chain of trusted proxies');
  t.is(clientOf('10.1.2.3', '203.0.113.5, 198.51.100.7'), '198.51.100.7', 'what the client wrote itself (left) is not believed');
  t.is(clientOf('10.1.2.3', '10.7.7.7, 10.8.8.8'), '10.7.7.7', 'all trusted: the leftmost');
  t.is(clientOf('::ffff:10.1.2.3', '2001:db8::99'), '2001:db8::99', 'an IPv4-mapped peer is an IPv4 proxy');
  t.is(clientOf('2001:db8:ffff::1', '198.51.100.7'), '198.51.100.7');
});

test('entries with ports or brackets are read; a malformed entry stops at the last address a trusted hop wrote', (t) => {
  t.is(clientOf('10.1.2.3', '198.51.100.7:4711'), '198.51.100.7');
  t.is(clientOf('10.1.2.3', '[2001:db8::7]:4711'), '2001:db8::7');
  t.is(clientOf('10.1.2.3', '[2001:db8::7]'), '2001:db8::7');
  t.is(clientOf('10.1.2.3', 'unknown'), '10.1.2.3');
  t.is(clientOf('10.1.2.3', '198.51.100.7, garbage, 10.8.8.8'), '10.8.8.8');
  t.is(clientOf('10.1.2.3', ''), '10.1.2.3');
});

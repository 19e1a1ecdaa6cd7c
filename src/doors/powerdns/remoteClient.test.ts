import test from 'ava';
import fc from 'fast-check';
import { formatIp, parseIp } from '../../core/net/ipAddress.js';
import { remoteClient, scopeMask } from './remoteClient.js';

const summary = (realRemote: string, remote: string): unknown => {
  const rc = remoteClient(realRemote, remote);
  return {
    client: `${formatIp(rc.client.address)}/${rc.client.sourcePrefix}`,
    fromEcs: rc.client.fromEcs,
    ecs: rc.ecs ? `${rc.ecs.family}:${rc.ecs.sourcePrefix}` : null,
    packetless: rc.packetless,
  };
};

test('the client of a lookup, as PowerDNS 4.7 passes remote and real-remote', (t) => {
  t.deepEqual(summary('0.0.0.0/0', '0.0.0.0'), { client: '0.0.0.0/32', fromEcs: false, ecs: null, packetless: true });
  t.deepEqual(summary('192.0.2.53/32', '192.0.2.53'), { client: '192.0.2.53/32', fromEcs: false, ecs: null, packetless: false });
  t.deepEqual(summary('2001:db8::53/128', '2001:db8::53'), { client: '2001:db8::53/128', fromEcs: false, ecs: null, packetless: false });
  t.deepEqual(summary('8.8.8.0/24', '192.0.2.53'), { client: '8.8.8.0/24', fromEcs: true, ecs: '1:24', packetless: false });
  t.deepEqual(summary('8.8.8.8/32', '192.0.2.53'), { client: '8.8.8.8/32', fromEcs: true, ecs: '1:32', packetless: false });
  t.deepEqual(summary('2001:67c:2e8::/48', '192.0.2.53'), { client: '2001:67c:2e8::/48', fromEcs: true, ecs: '2:48', packetless: false });
  t.deepEqual(summary('::ffff:193.0.14.0/120', '192.0.2.53'), { client: '193.0.14.0/24', fromEcs: true, ecs: '2:120', packetless: false });
  // ECS /0: the resolver is the client (RFC 7871 §7.1.2), the option is still echoed.
  t.deepEqual(summary('0.0.0.0/0', '192.0.2.53'), { client: '192.0.2.53/32', fromEcs: false, ecs: '1:0', packetless: false });
  t.deepEqual(summary('::/0', '192.0.2.53'), { client: '192.0.2.53/32', fromEcs: false, ecs: '2:0', packetless: false });
  // Host bits beyond the prefix are cleared.
  t.deepEqual(summary('8.8.8.9/24', '192.0.2.53'), { client: '8.8.8.0/24', fromEcs: true, ecs: '1:24', packetless: false });
});

test('IPv4-compatible ::a.b.c.d stays IPv6 (RFC 4291 §2.5.5.1), unlike IPv4-mapped ::ffff:a.b.c.d', (t) => {
  t.deepEqual(summary('::74.254.199.0/120', '192.0.2.53'), { client: '::4afe:c700/120', fromEcs: true, ecs: '2:120', packetless: false });
  t.deepEqual(summary('::ffff:74.254.199.0/120', '192.0.2.53'), { client: '74.254.199.0/24', fromEcs: true, ecs: '2:120', packetless: false });
});

test('invalid parameters name the parameter', (t) => {
  t.throws(() => remoteClient('8.8.8.0/24', 'resolver'), { message: /"remote" is not an address/ });
  t.throws(() => remoteClient('eight/24', '192.0.2.53'), { message: /"real-remote" is not addr\/len/ });
  t.throws(() => remoteClient('8.8.8.0/33', '192.0.2.53'), { message: /no valid prefix length/ });
  t.throws(() => remoteClient('8.8.8.0', '192.0.2.53'), { message: /no valid prefix length/ });
  t.throws(() => remoteClient('8.8.8.0/', '192.0.2.53'), { message: /no valid prefix length/ });
});

test('scopeMask is the standalone listener reply scope, or the decision scope without ECS', (t) => {
  t.is(scopeMask(remoteClient('8.8.8.0/24', '192.0.2.53'), 20), 20);
  t.is(scopeMask(remoteClient('8.8.8.0/24', '192.0.2.53'), 0), 0);
  t.is(scopeMask(remoteClient('0.0.0.0/0', '192.0.2.53'), 20), 0);
  t.is(scopeMask(remoteClient('::ffff:193.0.14.0/120', '192.0.2.53'), 20), 116);
  t.is(scopeMask(remoteClient('2001:67c:2e8::/48', '192.0.2.53'), 48), 48);
  t.is(scopeMask(remoteClient('192.0.2.53/32', '192.0.2.53'), 24), 24);
  t.is(scopeMask(remoteClient('0.0.0.0/0', '0.0.0.0'), 5), 5);
});

test('the fast address parser agrees with parseIp on every IPv4 and IPv6 form (property)', (t) => {
  const parsedLike = (text: string): string => {
    try {
      const a = parseIp(text);
      return a.family === 4 && !a.mapped ? `${formatIp(a)}/32` : `${formatIp(a)}/${a.mapped ? 128 : 128}`;
    } catch {
      return 'error';
    }
  };
  const fast = (text: string): string => {
    try {
      const rc = remoteClient(`${text}/${text.includes(':') ? 128 : 32}`, '192.0.2.1');
      return `${formatIp(rc.client.address)}/${rc.ecs ? rc.ecs.sourcePrefix : 'x'}`;
    } catch {
      return 'error';
    }
  };
  fc.assert(
    fc.property(
      fc.oneof(
        fc.ipV4(),
        fc.ipV6(),
        fc.ipV4Extended(),
        fc.string({ maxLength: 12 }),
        fc.constantFrom('::', '::1', '1::', '1:::2', ':1', '1:', '01.2.3.4', '1.2.3', '::ffff:1.2.3.4', 'fe80::1%eth0', '1.2.3.4.5'),
      ),
      (text) => {
        // ipaddr.js (behind parseIp) reads IPv4-compatible ::a.b.c.d as IPv4-mapped; the fast
        // parser reads it as the IPv6 address it is, as the standalone listener does from ECS bytes.
        if (/^[0:]*:(\d+\.){3}\d+$/.test(text) && text !== '::') return;
        t.is(fast(text), parsedLike(text), text);
      },
    ),
    { numRuns: 3000 },
  );
});

test('the resolver address is read from each lookup: the last one is reused only for the same text', (t) => {
  const remotes = ['192.0.2.53', '192.0.2.54', '2001:db8::53', '192.0.2.54', '::ffff:192.0.2.55', '192.0.2.53'];
  for (const remote of [...remotes, ...remotes]) {
    const expected = formatIp(parseIp(remote));
    t.is(formatIp(remoteClient('0.0.0.0/0', remote).client.address), expected, `ECS /0 from ${remote}`);
    t.is(formatIp(remoteClient(`${remote}/${remote.includes(':') ? 128 : 32}`, remote).client.address), expected, `no ECS from ${remote}`);
  }
  t.throws(() => remoteClient('8.8.8.0/24', '192.0.2.53x'), { message: /"remote" is not an address/ });
  t.is(formatIp(remoteClient('0.0.0.0/0', '192.0.2.53').client.address), '192.0.2.53');
});

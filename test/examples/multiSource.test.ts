import test from 'ava';
import { readFileSync } from 'node:fs';
import { SelectionHarness } from '../support/selectionHarness.js';

/** examples/multi-source.yaml loads, and each of its three records answers from its own source. */

function harness(): SelectionHarness {
  const h = new SelectionHarness(readFileSync(new URL('../../examples/multi-source.yaml', import.meta.url), 'utf8'), { seed: 3 });
  h.push('host', [
    { dc: 'us-east', status: 'up', cpu: 35 },
    { dc: 'eu-west', status: 'up', cpu: 50 },
    { dc: 'ap-northeast', status: 'up', cpu: 20 },
    { dc: 'sa-east', status: 'down' },
  ]);
  h.push('service', [
    { service: 'web', dc: 'us-east', healthyBackends: 12 },
    { service: 'web', dc: 'eu-west', healthyBackends: 8 },
    { service: 'web', dc: 'ap-northeast', healthyBackends: 3 },
    { service: 'web', dc: 'sa-east', healthyBackends: 20 },
  ]);
  h.push('client', [
    { network: '198.51.100.0/24', dc: 'eu-west', packetLoss: 0.2 },
    { network: '198.51.100.0/24', dc: 'us-east', packetLoss: 1.5 },
    { network: '198.51.100.0/24', dc: 'ap-northeast', packetLoss: 0.6 },
  ]);
  return h;
}

test('A by service.healthyBackends: one address in each of the 3 best gated-in DCs (sa-east is down)', (t) => {
  const h = harness();
  for (let i = 0; i < 20; i++) {
    const a = h.answer('www.example.test', 'A', '198.51.100.1');
    t.is(a.length, 3);
    t.true(['192.0.2.10', '192.0.2.11'].includes(a[0]!), 'us-east first (12 backends)');
    t.true(['198.51.100.10', '198.51.100.11'].includes(a[1]!), 'eu-west second (8)');
    t.is(a[2], '203.0.113.10', 'ap-northeast third (3)');
  }
});

test('MX by host.status: the exchangers of every DC that is up', (t) => {
  const a = harness().query('example.test', 'MX', '198.51.100.1');
  t.deepEqual(
    a.answers.map((r) => r.data),
    [
      { preference: 10, exchange: 'mx1.us-east.example.test' },
      { preference: 10, exchange: 'mx1.eu-west.example.test' },
      { preference: 20, exchange: 'mx1.ap-northeast.example.test' },
    ],
  );
  t.is(a.scope, 0);
});

test('CNAME by client.packetLoss: the cleanest path within 0.5 points, per /24', (t) => {
  const h = harness();
  const a = h.query('media.example.test', 'CNAME', '198.51.100.0/24');
  t.is(a.scope, 24);
  t.true(['edge-eu.cdn.example.net', 'edge-ap.cdn.example.net'].includes(a.answers[0]!.data as string), 'eu-west 0.2 and ap-northeast 0.6 tie within 0.5');
  t.deepEqual(h.answer('media.example.test', 'CNAME', '198.51.100.200'), [a.answers[0]!.data as string], 'stable for the network');
  t.is(a.answers.length, 1);
});

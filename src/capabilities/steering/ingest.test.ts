import test from 'ava';
import { metricsSchema } from './metricsSchema.js';
import { ingestBatch, type IngestOutcome } from './ingest.js';
import { MetricStore } from './metricStore.js';

const store = () => new MetricStore(metricsSchema.parse({}), ['a', 'b'], ['web']);
const body = (samples: unknown) => ({ samples });

/** Each bad push with the exact outcome; none of them changes the store. */
const rejected: [string, 'host' | 'service' | 'client', unknown, IngestOutcome][] = [
  ['no body', 'host', undefined, { ok: false, status: 400, problems: [{ path: '(body)', message: 'the body must be a JSON object {"samples": [...]}' }] }],
  ['samples not a list', 'host', { samples: 3 }, { ok: false, status: 400, problems: [{ path: 'samples', message: 'must be a list of samples' }] }],
  ['empty batch', 'host', body([]), { ok: false, status: 400, problems: [{ path: 'samples', message: 'must hold at least one sample' }] }],
  [
    'unknown top-level key',
    'host',
    { samples: [{ dc: 'a', cpu: 1 }], extra: 1 },
    { ok: false, status: 400, problems: [{ path: '(body)', message: 'unknown key "extra"' }] },
  ],
  [
    'misspelt metric',
    'host',
    body([{ dc: 'a', cpuu: 1 }]),
    {
      ok: false,
      status: 400,
      problems: [
        { path: 'samples[0]', message: 'unknown key "cpuu"' },
        { path: 'samples[0]', message: 'a sample carries at least one metric (cpu, mem, bw, status, packetLoss)' },
      ],
    },
  ],
  [
    'negative',
    'host',
    body([{ dc: 'a', cpu: -0.5 }]),
    { ok: false, status: 400, problems: [{ path: 'samples[0].cpu', message: 'must be a number from 0 to 100 (percent)' }] },
  ],
  [
    'over 100 percent',
    'host',
    body([{ dc: 'a', packetLoss: 101 }]),
    { ok: false, status: 400, problems: [{ path: 'samples[0].packetLoss', message: 'must be a number from 0 to 100 (percent)' }] },
  ],
  [
    'NaN',
    'host',
    body([{ dc: 'a', mem: Number.NaN }]),
    { ok: false, status: 400, problems: [{ path: 'samples[0].mem', message: 'must be a number from 0 to 100 (percent)' }] },
  ],
  [
    'Infinity (JSON 1e999)',
    'host',
    JSON.parse('{"samples":[{"dc":"a","bw":1e999}]}'),
    { ok: false, status: 400, problems: [{ path: 'samples[0].bw', message: 'must be a number from 0 to any (bits/s)' }] },
  ],
  [
    'a number as a string',
    'host',
    body([{ dc: 'a', cpu: '5' }]),
    { ok: false, status: 400, problems: [{ path: 'samples[0].cpu', message: 'must be a number from 0 to 100 (percent)' }] },
  ],
  [
    'status not a word',
    'host',
    body([{ dc: 'a', status: 1 }]),
    { ok: false, status: 400, problems: [{ path: 'samples[0].status', message: 'must be "up" or "down"' }] },
  ],
  [
    'fractional count',
    'service',
    body([{ service: 'web', dc: 'a', healthyBackends: 2.5 }]),
    {
      ok: false,
      status: 400,
      problems: [{ path: 'samples[0].healthyBackends', message: `must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER} (count)` }],
    },
  ],
  [
    'no metric',
    'host',
    body([{ dc: 'a' }]),
    { ok: false, status: 400, problems: [{ path: 'samples[0]', message: 'a sample carries at least one metric (cpu, mem, bw, status, packetLoss)' }] },
  ],
  ['missing dc', 'host', body([{ cpu: 1 }]), { ok: false, status: 400, problems: [{ path: 'samples[0].dc', message: 'must be a name' }] }],
  [
    'hops over 255',
    'client',
    body([{ network: '10.0.0.0', dc: 'a', hops: 256 }]),
    { ok: false, status: 400, problems: [{ path: 'samples[0].hops', message: 'must be a whole number from 0 to 255 (count)' }] },
  ],
  [
    'mos and raw path together',
    'client',
    body([{ network: '10.0.0.0', dc: 'a', mos: 4, latencyMs: 10, jitterMs: 1, packetLoss: 0 }]),
    { ok: false, status: 400, problems: [{ path: 'samples[0].mos', message: 'give "mos" or "latencyMs"/"jitterMs", not both' }] },
  ],
  [
    'raw path without loss',
    'client',
    body([{ network: '10.0.0.0', dc: 'a', latencyMs: 10, jitterMs: 1 }]),
    { ok: false, status: 400, problems: [{ path: 'samples[0].packetLoss', message: 'MOS from a path needs latencyMs, jitterMs and packetLoss together' }] },
  ],
  [
    'bad network',
    'client',
    body([{ network: '10.0.0.300', dc: 'a', hops: 1 }]),
    { ok: false, status: 400, problems: [{ path: 'samples[0].network', message: '"10.0.0.300" is not an IPv4 or IPv6 address' }] },
  ],
  [
    'network wider than /24',
    'client',
    body([{ network: '10.0.0.0/16', dc: 'a', hops: 1 }]),
    {
      ok: false,
      status: 400,
      problems: [{ path: 'samples[0].network', message: '"10.0.0.0/16" is wider than a client network (/24); push one sample per /24' }],
    },
  ],
  [
    'unknown data center',
    'host',
    body([
      { dc: 'a', cpu: 1 },
      { dc: 'zz', cpu: 1 },
    ]),
    { ok: false, status: 422, problems: [{ path: 'samples[1].dc', message: 'unknown data center "zz"' }] },
  ],
  [
    'unknown service',
    'service',
    body([{ service: 'api', dc: 'a', cpu: 1 }]),
    { ok: false, status: 422, problems: [{ path: 'samples[0].service', message: 'unknown service "api"' }] },
  ],
];

for (const [name, source, payload, outcome] of rejected) {
  test(`rejected whole: ${name}`, (t) => {
    const s = store();
    t.deepEqual(ingestBatch(s, source, payload, 0), outcome);
    t.deepEqual(s.stats(), { hostDcs: 0, serviceRows: 0, clientNetworks: 0, clientEvictions: 0 });
  });
}

test('accepted: every source, several metrics per sample', (t) => {
  const s = store();
  t.deepEqual(ingestBatch(s, 'host', body([{ dc: 'a', cpu: 0, mem: 100, bw: 1e10, status: 'up', packetLoss: 0.25 }]), 0), { ok: true, accepted: 1 });
  t.deepEqual(
    ingestBatch(
      s,
      'service',
      body([{ service: 'web', dc: 'b', cpu: 1, mem: 2, bw: 3, request: 4.5, connection: 6, session_new: 7.5, status: 'down', healthyBackends: 8 }]),
      0,
    ),
    { ok: true, accepted: 1 },
  );
  t.deepEqual(
    ingestBatch(
      s,
      'client',
      body([
        { network: '2001:db8::/48', dc: 'a', hops: 12, ttl: 52, packetLoss: 1, latencyMs: 30, jitterMs: 3 },
        { network: '10.0.0.0/24', dc: 'b', mos: 4.1 },
      ]),
      0,
    ),
    { ok: true, accepted: 2 },
  );
  t.deepEqual(s.stats(), { hostDcs: 1, serviceRows: 1, clientNetworks: 2, clientEvictions: 0 });
});

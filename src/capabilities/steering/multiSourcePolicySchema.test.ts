import test from 'ava';
import { ConfigError } from '../../core/config/load.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { multiSourceConfig } from '../../../test/support/multiSourceConfig.js';

/** Configuration errors of multi-source policies and the metrics section, with exact paths and messages. */

const errorsOf = (yaml: string): string[] => {
  try {
    parseConfigText(yaml, 'c.yaml');
  } catch (e) {
    if (e instanceof ConfigError) return e.problems.map((p) => `${p.path}: ${p.message}`);
    throw e;
  }
  return [];
};
const policy = (fields: string) => multiSourceConfig(`{ type: multi-source, ${fields} }`);

const cases: [string, string, string[]][] = [
  ['a valid policy', policy('source: host, metric: cpu, criterion: lowest'), []],
  [
    'unknown metric for the source',
    policy('source: client, metric: cpu, criterion: lowest'),
    ['records[0].policy.metric: "cpu" is not a client metric (hops, mos, packetLoss, ttl)'],
  ],
  [
    'unknown source',
    policy('source: planet, metric: cpu, criterion: lowest'),
    ['records[0].policy.source: Invalid option: expected one of "host"|"service"|"client"'],
  ],
  [
    'misspelt key',
    policy('source: host, metric: cpu, criterion: lowest, pickDCCount: 2'),
    ['records[0].policy.pickDCCount: unknown key (not part of the configuration schema; check the spelling)'],
  ],
  [
    'criterion word',
    policy('source: host, metric: cpu, criterion: smallest'),
    ['records[0].policy.criterion: must be lowest, highest, {equals: <number|up|down>} or {within: <number|"N%">, prefer: lowest|highest}'],
  ],
  [
    'within without prefer',
    policy('source: host, metric: cpu, criterion: { within: 5 }'),
    ['records[0].policy.criterion: must be lowest, highest, {equals: <number|up|down>} or {within: <number|"N%">, prefer: lowest|highest}'],
  ],
  [
    'within a bad margin',
    policy('source: host, metric: cpu, criterion: { within: "5 percent", prefer: lowest }'),
    ['records[0].policy.criterion.within: a margin is a number ≥ 0 in the metric\'s unit, or a percentage of the best value such as "10%"'],
  ],
  [
    'within on status',
    policy('source: host, metric: status, criterion: { within: 1, prefer: highest }'),
    ['records[0].policy.criterion.within: status is up or down; use {equals: up}'],
  ],
  [
    'status equals a number',
    policy('source: service, metric: status, criterion: { equals: 1 }'),
    ['records[0].policy.criterion.equals: status equals up or down'],
  ],
  [
    'a number metric equals up',
    policy('source: host, metric: cpu, criterion: { equals: up }'),
    ['records[0].policy.criterion.equals: up and down are status words; cpu is a number'],
  ],
  [
    'gate with an unknown metric',
    policy('source: host, metric: cpu, criterion: lowest, gate: "host.status == up && host.cpuu < 90"'),
    ['records[0].policy.gate: column 27: unknown host metric "cpuu" (host metrics: cpu, mem, bw, status, packetLoss) in "host.status == up && host.cpuu < 90"'],
  ],
  [
    'unknown rule',
    policy('source: host, metric: cpu, criterion: lowest, unknown: ignore'),
    ['records[0].policy.unknown: Invalid option: expected one of "rank-last"|"exclude"'],
  ],
  ['unknown policy service', policy('source: service, service: api, metric: cpu, criterion: lowest'), ['records[0].policy.service: unknown service "api"']],
  [
    'unknown balance algorithm',
    policy('source: host, metric: cpu, criterion: lowest, balanceAlgorithm: top-4'),
    [
      'records[0].policy.balanceAlgorithm: Invalid option: expected one of "all"|"round-robin"|"top-1"|"top-2"|"top-3"|"weighted-round-robin"|"random"|"weighted-random"|"nearest"',
    ],
  ],
  [
    'staleness shorter than the interval',
    multiSourceConfig('{ type: multi-source, source: host, metric: cpu, criterion: lowest }', {
      metrics: '{ host: { intervalSeconds: 60, staleAfterSeconds: 30 } }',
    }),
    ['metrics.host.staleAfterSeconds: must be at least intervalSeconds (60)'],
  ],
  [
    'client network length out of range',
    multiSourceConfig('{ type: multi-source, source: host, metric: cpu, criterion: lowest }', { metrics: '{ client: { ipv4Prefix: 33 } }' }),
    ['metrics.client.ipv4Prefix: Too big: expected number to be <=32'],
  ],
  [
    'unknown metrics key',
    multiSourceConfig('{ type: multi-source, source: host, metric: cpu, criterion: lowest }', { metrics: '{ host: { interval: 30 } }' }),
    ['metrics.host.interval: unknown key (not part of the configuration schema; check the spelling)'],
  ],
];

for (const [name, yaml, expected] of cases) {
  test(name, (t) => {
    t.deepEqual(errorsOf(yaml), expected);
  });
}

test('defaults: staleness is three intervals, client networks /24 and /48, 100,000 networks, MOS smoothing 0.5', (t) => {
  const c = parseConfigText(policy('source: host, metric: cpu, criterion: lowest'));
  t.deepEqual(c.metrics, {
    host: { intervalSeconds: 30, staleAfterSeconds: 90 },
    service: { intervalSeconds: 30, staleAfterSeconds: 90 },
    client: { intervalSeconds: 60, staleAfterSeconds: 180, ipv4Prefix: 24, ipv6Prefix: 48, maxNetworks: 100_000, mosSmoothing: 0.5 },
  });
  t.like(c.records[0]!.policy, { type: 'multi-source', pickDcCount: 1, balanceAlgorithm: 'round-robin', unknown: 'rank-last', criterion: { kind: 'lowest' } });
});

test('criteria parse to their typed form', (t) => {
  const crit = (text: string) =>
    (parseConfigText(policy(`source: host, metric: cpu, criterion: ${text}`)).records[0]!.policy as { criterion: unknown }).criterion;
  t.deepEqual(crit('highest'), { kind: 'highest' });
  t.deepEqual(crit('{ equals: 7.5 }'), { kind: 'equals', target: 7.5 });
  t.deepEqual(crit('{ within: "12.5%", prefer: highest }'), { kind: 'within', margin: 12.5, percent: true, prefer: 'highest' });
  t.deepEqual(crit('{ within: 3, prefer: lowest }'), { kind: 'within', margin: 3, percent: false, prefer: 'lowest' });
});

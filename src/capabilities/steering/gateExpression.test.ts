import test from 'ava';
import type { MetricSource, MetricView } from '../../core/views/metricView.js';
import { metricId } from './catalog.js';
import { evaluateGate, FALSE, GateSyntaxError, parseGate, TRUE, UNKNOWN } from './gateExpression.js';

/** A view over fixed values: `host.cpu` → 50 etc.; absent names are unknown. */
function view(values: Record<string, number>): MetricView {
  return {
    read(source: MetricSource, subject: string, _dc: string, metric: number) {
      const name = Object.keys(values).find((k) => k.startsWith(`${source}.`) && metricId(source, k.split('.')[1]!) === metric);
      if (source === 'service' && subject !== 'web') return NaN;
      return name === undefined ? NaN : values[name]!;
    },
    describe: () => ({ state: 'missing' }),
    clientNetworkPrefix: { ipv4: 24, ipv6: 48 },
  };
}

const run = (text: string, values: Record<string, number>) => evaluateGate(parseGate(text), view(values), 'web', 'dc1', 0);

test('the issue example: status up and cpu under 90', (t) => {
  const gate = 'host.status == up && host.cpu < 90';
  t.is(run(gate, { 'host.status': 1, 'host.cpu': 89.9 }), TRUE);
  t.is(run(gate, { 'host.status': 1, 'host.cpu': 90 }), FALSE);
  t.is(run(gate, { 'host.status': 0, 'host.cpu': 10 }), FALSE);
});

test('comparators, constants on either side, service metrics and parentheses', (t) => {
  t.is(run('90 > host.cpu', { 'host.cpu': 10 }), TRUE);
  t.is(run('host.mem <= 50', { 'host.mem': 50 }), TRUE);
  t.is(run('host.mem >= 50.5', { 'host.mem': 50 }), FALSE);
  t.is(run('host.mem != 50', { 'host.mem': 50 }), FALSE);
  t.is(run('service.healthyBackends >= 2', { 'service.healthyBackends': 3 }), TRUE);
  t.is(run('!(host.cpu > 50) || host.status == down', { 'host.cpu': 60, 'host.status': 1 }), FALSE);
  t.is(run('host.cpu > 50 || host.cpu < 10 && host.mem < 1', { 'host.cpu': 60, 'host.mem': 99 }), TRUE, '&& binds tighter than ||');
  t.is(run('host.bw < 1e9', { 'host.bw': 5e8 }), TRUE);
});

test('unknown metrics follow three-valued logic', (t) => {
  t.is(run('host.cpu < 90', {}), UNKNOWN);
  t.is(run('host.status == up && host.cpu < 90', { 'host.status': 0 }), FALSE, 'false && unknown = false');
  t.is(run('host.status == up && host.cpu < 90', { 'host.status': 1 }), UNKNOWN, 'true && unknown = unknown');
  t.is(run('host.status == up || host.cpu < 90', { 'host.status': 1 }), TRUE, 'true || unknown = true');
  t.is(run('host.status == down || host.cpu < 90', { 'host.status': 1 }), UNKNOWN, 'false || unknown = unknown');
  t.is(run('!(host.cpu < 90)', {}), UNKNOWN);
});

test('the gate lists the metrics it reads once each', (t) => {
  t.deepEqual(
    parseGate('host.cpu < 90 && host.status == up && host.cpu > 1 && service.status == up').metrics.map((m) => m.name),
    ['host.cpu', 'host.status', 'service.status'],
  );
});

const errors: [string, string][] = [
  ['', 'column 1: the gate is empty'],
  ['host.cpuu < 90', 'column 6: unknown host metric "cpuu" (host metrics: cpu, mem, bw, status, packetLoss)'],
  ['host.status == up && host.cpu < ', 'column 33: expected a metric (host.cpu), a number, up or down, found end of expression'],
  ['host.status = up', 'column 13: use "==" to compare'],
  ['host.status == up & host.cpu < 9', 'column 19: use "&&"'],
  ['host.cpu < 90 $', 'column 15: unexpected character "$"'],
  ['hots.cpu < 90', 'column 1: unknown name "hots" (write host.<metric>, service.<metric>, a number, up or down)'],
  ['client.mos > 3', 'column 1: client metrics cannot gate a data center (use them as the criterion)'],
  ['host.status < up', 'column 13: status compares only with == or != (up, down)'],
  ['host.status == 1', 'column 16: status is up or down, not a number'],
  ['host.cpu == up', 'column 13: "up" compares only with a status metric; host.cpu is a number'],
  ['host.status == host.cpu', 'column 16: cannot compare status with a number metric'],
  ['1 < 2', 'column 1: compares two constants; one side must be a metric'],
  ['(host.cpu < 90', 'column 15: expected ")", found end of expression'],
  ['host.cpu < 90 host.mem < 1', 'column 15: expected "&&", "||" or the end, found "host"'],
  ['host.cpu', 'column 9: expected a comparison (==, !=, <, <=, >, >=), found end of expression'],
  ['host.', 'column 6: expected a host metric after "host.", found end of expression'],
];

for (const [text, message] of errors) {
  test(`error at the column: ${JSON.stringify(text)}`, (t) => {
    const e = t.throws(() => parseGate(text), { instanceOf: GateSyntaxError });
    t.is(e.message, `${message} in "${text}"`);
  });
}

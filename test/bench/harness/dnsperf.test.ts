import test from 'ava';
import { parseDnsperfOutput } from './dnsperf.js';

const OUTPUT = `DNS Performance Testing Tool
Version 2.10.0

[Status] Testing complete (time limit)

Statistics:

  Queries sent:         308240
  Queries completed:    308200 (99.99%)
  Queries lost:         40 (0.01%)

  Response codes:       NOERROR 308100 (99.97%), REFUSED 100 (0.03%)
  Average packet size:  request 33, response 76
  Run time (s):         3.000787
  Queries per second:   102719.719860

  Average Latency (s):  0.000949 (min 0.000020, max 0.020128)
  Latency StdDev (s):   0.000758
`;

test('dnsperf statistics are parsed', (t) => {
  t.deepEqual(parseDnsperfOutput(OUTPUT), {
    queriesPerSecond: 102719.71986,
    completed: 308200,
    lost: 40,
    rcodes: { NOERROR: 308100, REFUSED: 100 },
    averageLatencyMs: 0.949,
    runSeconds: 3.000787,
  });
});

test('output without statistics is an error', (t) => {
  t.throws(() => parseDnsperfOutput('Error: could not open datafile'), { message: 'dnsperf output has no "Queries per second" line' });
});

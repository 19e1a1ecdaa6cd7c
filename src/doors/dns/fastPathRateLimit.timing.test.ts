import test from 'ava';
import { createSocket, type Socket } from 'node:dgram';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { buildQuery } from '../../../test/support/dnsClient.js';
import { THREE_DATA_CENTERS_YAML, threeDataCentersEngine } from '../../../test/support/threeDataCenters.js';
import { loadFastPathAddon } from './fastPathAddon.js';
import { DnsServer } from './dnsServer.js';
import { dnsBehaviourSchema } from './listenerSchema.js';

/**
 * Response-rate limiting of the fast path (README "Fast path", "Abuse: response-rate limiting"),
 * over real UDP on loopback: one source (127.0.0.1, block 127.0.0.0/24) floods the listener with
 * queries the threads answer from templates and queries they hand to JavaScript (DO set), while
 * another source (127.0.1.1, another /24) asks below the rate. The flood gets at most
 * `burst + rate × window + 1` answers, where the window runs from its first query sent to its last
 * answer received (every token is taken inside it: the bound holds however loaded the machine is),
 * and at least a quarter of the rate over the flood (a lower bound that only a thread starved for
 * most of the run would miss); those handed to JavaScript are limited the same way; every second
 * limited query gets an empty TC=1 reply (slip 2) and the others none; `/metrics` counts both; the
 * other source gets every answer, none truncated.
 */

const YAML = `zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, minimum: 60 }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
${THREE_DATA_CENTERS_YAML}records:
  - { name: www.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [us] } }
`;

const RATE = 200;
const BURST = 50;
const FLOOD_MS = 2000;

const { addon, error } = loadFastPathAddon();

async function bound(address: string): Promise<Socket> {
  const socket = createSocket({ type: 'udp4', recvBufferSize: 4 << 20 });
  await new Promise<void>((r) => socket.bind(0, address, r));
  return socket;
}

const truncated = (m: Buffer): boolean => (m[2]! & 0x02) !== 0;

test('a flood from one source block is held to the configured rate while another block keeps full service', async (t) => {
  if (!addon) return t.fail(error);
  const engine = threeDataCentersEngine(parseConfigText(YAML));
  const metrics = new EngineMetrics();
  const server = new DnsServer(
    {
      engine,
      metrics,
      log: engine.log,
      afterAnswer: [],
      behaviour: dnsBehaviourSchema.parse({ fastPath: { enabled: true, threads: 2, rateLimit: { responsesPerSecond: RATE, burst: BURST, slip: 2 } } }),
    },
    [{ address: '127.0.0.1', port: 0 }],
  );
  await server.start();
  t.teardown(() => server.stop());
  const { port } = server.bound[0]!;
  const flooder = await bound('127.0.0.1');
  const other = await bound('127.0.1.1');
  t.teardown(() => {
    flooder.close();
    other.close();
  });

  // The flood: templates (ECS, answered natively after the first) and DO-set queries (always JavaScript's), alternating.
  const flood = [
    buildQuery({ id: 1, name: 'www.example.test', type: 'A', edns: { ecs: '10.1.2.0/24' } }),
    buildQuery({ id: 2, name: 'www.example.test', type: 'A', edns: { dnssecOk: true } }),
  ];
  let answers = 0;
  let answersFromJs = 0;
  let slips = 0;
  let lastAnswerAt = 0;
  flooder.on('message', (m: Buffer) => {
    if (truncated(m)) slips++;
    else {
      answers++;
      if (m.readUInt16BE(0) === 2) answersFromJs++;
      lastAnswerAt = performance.now();
    }
  });
  const otherAnswered = new Set<number>();
  let otherTruncated = 0;
  other.on('message', (m: Buffer) => {
    if (truncated(m)) otherTruncated++;
    else otherAnswered.add(m.readUInt16BE(0));
  });

  const start = performance.now();
  let sent = 0;
  const floodDone = new Promise<void>((resolve) => {
    const tick = (): void => {
      if (performance.now() - start >= FLOOD_MS) return resolve();
      for (let i = 0; i < 64; i++) flooder.send(flood[sent++ % 2]!, port, '127.0.0.1');
      setTimeout(tick, 2);
    };
    tick();
  });
  // The other block: 40 queries at 25 ms spacing (40/s, a fifth of the rate) during the flood, each
  // with its own id. A question left without a reply is asked once more, still during the flood,
  // as a resolver would: the flood shares the server's socket, and the kernel may drop a datagram
  // of the other block when that socket's receive queue is full (1 of 40 in one CI run).
  const OTHER = 40;
  const otherQuery = (id: number): Buffer => buildQuery({ id, name: 'www.example.test', type: 'A', edns: { ecs: '10.3.4.0/24' } });
  for (let id = 1; id <= OTHER; id++) {
    other.send(otherQuery(id), port, '127.0.0.1');
    await new Promise((r) => setTimeout(r, 25));
  }
  let askedAgain = 0;
  for (let id = 1; id <= OTHER; id++) {
    if (otherAnswered.has(id)) continue;
    askedAgain++;
    other.send(otherQuery(id), port, '127.0.0.1');
    await new Promise((r) => setTimeout(r, 25));
  }
  const otherEnd = performance.now();
  await floodDone;
  const floodEnd = performance.now();
  await new Promise((r) => setTimeout(r, 500));

  const stats = server.fastPathStats()!;
  const windowS = (lastAnswerAt - start) / 1000;
  const upper = BURST + RATE * windowS + 1;
  const lower = BURST + (RATE * (floodEnd - start)) / 1000 / 4;
  t.log(
    `sent ${sent}, answered ${answers} (${answersFromJs} by JavaScript), slipped ${slips}, window ${windowS.toFixed(2)} s, bounds ${lower.toFixed(0)}–${upper.toFixed(0)}`,
  );
  t.log(JSON.stringify(stats));
  t.true(sent > 4 * upper, `the flood exceeds the rate: ${sent} sent`);
  t.true(answers <= upper, `at most burst + rate × window answered: ${answers} > ${upper.toFixed(1)}`);
  t.true(answers >= lower, `at least a quarter of the rate answered: ${answers} < ${lower.toFixed(1)}`);
  // Both kinds are limited: the JavaScript half cannot exceed the bound either (without limiting it would be half the flood).
  t.true(answersFromJs > 0 && answersFromJs <= upper, `answers by JavaScript ${answersFromJs}`);
  // Slip 2: one limited query in two gets a TC=1 reply (one bucket, one count: they differ by at most one).
  t.true(Math.abs(stats.slipped - stats.limited) <= 1, `slipped ${stats.slipped}, limited ${stats.limited}`);
  t.true(stats.slipped > 0);
  t.true(slips <= stats.slipped);
  // The other block gets everything, none truncated; its questions were all asked while the flood ran.
  t.log(`other block: ${askedAgain} asked again`);
  t.true(otherEnd < floodEnd, 'the other block asked during the flood');
  t.is(otherTruncated, 0);
  t.is(otherAnswered.size, OTHER);

  const datagrams = await metrics.registry.getSingleMetric('gslbd_dns_fastpath_datagrams_total')!.get();
  const outcome = (o: string): number => datagrams.values.find((v) => v.labels.outcome === o)?.value ?? 0;
  t.is(outcome('rate_limited'), stats.limited);
  t.is(outcome('slipped'), stats.slipped);
});

test('rate limiting is off by default', (t) => {
  t.is(dnsBehaviourSchema.parse({}).fastPath.rateLimit.responsesPerSecond, 0);
  t.is(dnsBehaviourSchema.parse({ fastPath: { enabled: true } }).fastPath.rateLimit.responsesPerSecond, 0);
});

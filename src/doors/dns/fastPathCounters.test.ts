import test from 'ava';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { Engine } from '../../pipeline/engine.js';
import { withHealthView } from '../../pipeline/snapshot.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { buildQuery } from '../../../test/support/dnsClient.js';
import { dcsDown } from '../../../test/support/selectionFixture.js';
import { createSocket } from 'node:dgram';
import { loadFastPathAddon } from './fastPathAddon.js';
import { DnsServer } from './dnsServer.js';
import { dnsBehaviourSchema } from './listenerSchema.js';
import { THREE_DATA_CENTERS_YAML, threeDataCentersEngine } from '../../../test/support/threeDataCenters.js';

/**
 * A query counts once in the engine's query counters whichever path answered it: the same query
 * mix through two listeners on two engines built alike, the Node listener and the native fast
 * path (most of whose answers are replayed from templates by its threads), leaves identical
 * values in `gslbd_dns_queries_total`, `gslbd_dns_queries_by_qtype_total`,
 * `gslbd_dns_queries_by_zone_total`, `gslbd_gslb_record_selections_total` and
 * `gslbd_dc_answers_total` — read while the listeners serve (scrape-time folding) and again
 * after they close (the last replays folded at close). The mix covers two zones, GSLB records
 * answering from one and two data centers, a CNAME to a GSLB record, static records, NXDOMAIN,
 * a name outside every zone (REFUSED), a rotating record (round-robin over two endpoints per data
 * center: always answered by JavaScript; with one endpoint per data center it would not rotate), IPv4 and
 * IPv6 clients by ECS and without ECS, and a data center going down in the middle.
 */

const YAML = `zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, minimum: 60 }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
      - { name: alias, type: CNAME, data: www.example.test }
      - { name: txt, type: TXT, data: "hello" }
  - name: other.test
    soa: { mname: ns1.other.test, rname: hostmaster.other.test, minimum: 60 }
    ns: [ns1.other.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.54 }
${THREE_DATA_CENTERS_YAML}  - name: pool
    endpoints:
      - { dc: eu, address: 192.0.2.11 }
      - { dc: eu, address: 192.0.2.12 }
      - { dc: us, address: 192.0.2.21 }
      - { dc: us, address: 192.0.2.22 }
      - { dc: ap, address: 192.0.2.31 }
      - { dc: ap, address: 192.0.2.32 }
records:
  - { name: www.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [us] } }
  - { name: two.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, pickDcCount: 2, default: [us] } }
  - { name: app.other.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [eu] } }
  - { name: rr.example.test, type: A, ttl: 30, service: pool, policy: { type: static-proximity, balanceAlgorithm: round-robin, default: [us] } }
`;

const SERIES = [
  'gslbd_dns_queries_total',
  'gslbd_dns_queries_by_qtype_total',
  'gslbd_dns_queries_by_zone_total',
  'gslbd_gslb_record_selections_total',
  'gslbd_dc_answers_total',
];

const { addon, error } = loadFastPathAddon();
const config = parseConfigText(YAML);
const engine = (): Engine => threeDataCentersEngine(config);

/** The query mix, ids by index. */
function queries(): Buffer[] {
  const specs: Parameters<typeof buildQuery>[0][] = [];
  const names = ['www.example.test', 'two.example.test', 'alias.example.test', 'app.other.test', 'rr.example.test', 'txt.example.test'];
  for (const name of [...names, 'nothere.example.test', 'example.test', 'elsewhere.invalid']) {
    for (let i = 0; i < 12; i++) specs.push({ name, type: 'A', edns: { ecs: `10.${1 + (i % 4)}.${i}.0/24` } });
    for (let i = 0; i < 4; i++) specs.push({ name, type: 'A', edns: { ecs: `2001:db8:${i % 3}::/48` } });
    specs.push({ name, type: 'A', edns: {} }, { name, type: 'A' }, { name, type: 'TXT', edns: { ecs: '10.1.0.0/24' } }, { name, type: 'AAAA', edns: {} });
  }
  return specs.map((s, i) => buildQuery({ ...s, id: i }));
}

/**
 * Sends every query to `address`:`port`, 32 in flight, and returns the replies by index (query `i`
 * carries ID `i`). A query is asked once: a resent query would be counted twice by one listener
 * only, so a lost reply fails the test (after 20 s) instead of being asked again.
 */
async function exchangeOnce(address: string, port: number, queries: readonly Buffer[]): Promise<Buffer[]> {
  const socket = createSocket({ type: address.includes(':') ? 'udp6' : 'udp4', recvBufferSize: 4 << 20 });
  await new Promise<void>((r) => socket.bind(0, address, r));
  const replies: Buffer[] = [];
  let next = 0;
  let done = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${queries.length - done} queries unanswered after 20 s`)), 20_000);
      const send = (): void => {
        while (next < queries.length && next - done < 32) socket.send(queries[next++]!, port, address);
      };
      socket.on('message', (msg: Buffer) => {
        const id = msg.readUInt16BE(0);
        if (replies[id] !== undefined) return;
        replies[id] = msg;
        if (++done === queries.length) {
          clearTimeout(timer);
          resolve();
        } else send();
      });
      send();
    });
  } finally {
    socket.close();
  }
  return replies;
}

/** The values of the query counters, one line per series and labels, sorted. */
async function counterValues(metrics: EngineMetrics): Promise<string[]> {
  const lines: string[] = [];
  for (const name of SERIES) {
    const metric = metrics.registry.getSingleMetric(name);
    if (!metric) throw new Error(`${name} is not registered`);
    for (const v of (await metric.get()).values) lines.push(`${name}${JSON.stringify(v.labels)} ${v.value}`);
  }
  return lines.sort();
}

test('the same query mix counts the same in the query counters with the fast path on and off', async (t) => {
  if (!addon) return t.fail(error);
  const addresses = [
    { address: '127.0.0.1', port: 0 },
    { address: '::1', port: 0 },
  ];
  const engines = [engine(), engine()];
  const metrics = [new EngineMetrics(), new EngineMetrics()];
  const deps = (i: number) => ({
    engine: engines[i]!,
    metrics: metrics[i]!,
    log: engines[i]!.log,
    afterAnswer: [],
    behaviour: dnsBehaviourSchema.parse({ fastPath: { enabled: i === 1, threads: 2 } }),
  });
  const plain = new DnsServer(deps(0), addresses);
  const fast = new DnsServer(deps(1), addresses);
  await plain.start();
  await fast.start();
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await plain.stop();
    await fast.stop();
  };
  t.teardown(stop);
  const qs = queries();
  for (let pass = 0; pass < 4; pass++) {
    if (pass === 2) for (const e of engines) e.publish(withHealthView(e.snapshot, dcsDown('eu')));
    for (let f = 0; f < 2; f++) {
      const node = await exchangeOnce(plain.bound[f]!.address, plain.bound[f]!.port, qs);
      const native = await exchangeOnce(fast.bound[f]!.address, fast.bound[f]!.port, qs);
      t.is(node.filter((r, k) => !r.equals(native[k]!)).length, 0, `pass ${pass} family ${f}: the answers differ`);
    }
  }
  const stats = fast.fastPathStats()!;
  t.true(stats.hits > qs.length, `most answers replayed natively: ${JSON.stringify(stats)}`);
  // The publish's templates were answered again (dns.fastPath.rewarmTemplates, on by default): answers nobody asked, counted nowhere.
  t.true(fast.fastPathRewarm()!.installed > 0, 'no template re-answered at the publish');
  const whileServing = await counterValues(metrics[0]!);
  t.true(whileServing.some((l) => l.startsWith('gslbd_dc_answers_total{"dc":"ap"}')));
  t.true(whileServing.some((l) => l.startsWith('gslbd_dns_queries_by_zone_total{"zone":"other.test"}')));
  t.deepEqual(await counterValues(metrics[1]!), whileServing);
  // Scraped twice: nothing is added twice.
  t.deepEqual(await counterValues(metrics[1]!), whileServing);
  // Queries after the last scrape, then the listeners close: the last replays are counted at close.
  for (let f = 0; f < 2; f++) {
    await exchangeOnce(plain.bound[f]!.address, plain.bound[f]!.port, qs);
    await exchangeOnce(fast.bound[f]!.address, fast.bound[f]!.port, qs);
  }
  await stop();
  t.deepEqual(await counterValues(metrics[1]!), await counterValues(metrics[0]!));
});

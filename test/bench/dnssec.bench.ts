import { performance } from 'node:perf_hooks';
import dnsPacket from 'dns-packet';
import { ALGORITHMS } from '../../src/capabilities/dnssec/algorithms.js';
import { AnswerSigner, type SignerZone } from '../../src/capabilities/dnssec/answerSigner.js';
import { keyFromFiles, parsePrivateKeyFile, parsePublicKeyFile, type DnssecKey } from '../../src/capabilities/dnssec/keyFiles.js';
import { generateKey } from '../../src/capabilities/dnssec/keyGeneration.js';
import { rrsigOf } from '../../src/capabilities/dnssec/rrsig.js';
import { SignatureCache } from '../../src/capabilities/dnssec/signatureCache.js';
import { zoneContents } from '../../src/capabilities/dnssec/zoneContents.js';
import { TYPE_CODES } from '../../src/core/dns/records.js';
import { formatIp, parseIp } from '../../src/core/net/ipAddress.js';
import { EngineMetrics } from '../../src/core/telemetry/engineMetrics.js';
import { createLogger } from '../../src/core/telemetry/logger.js';
import { systemContext } from '../../src/core/views/resolveContext.js';
import { MessageHandler } from '../../src/doors/dns/handleMessage.js';
import { Engine } from '../../src/pipeline/engine.js';
import { resolve } from '../../src/pipeline/zones/authoritative.js';
import { loadConfigFile } from '../../src/process/loadConfig.js';
import { pinAllThreads } from './harness/affinity.js';
import type { BenchContext, BenchGroup } from './harness/benchGroup.js';
import { clientMix, type MixClient } from './harness/clientMix.js';
import { measureInProcess } from './harness/inProcessRows.js';
import { QUICKSTART_CONFIG } from './harness/paths.js';
import { quickstartSnapshot } from './harness/quickstartSnapshot.js';

/** In-process rows run on this CPU. */
const CPU = '1';
/** Seconds per timed run of a listener row (after measureInProcess's 50,000 warm-up queries), and of a signing row. */
const RUN_SECONDS = 2;
const SIGN_SECONDS = 1;
/** ECS clients in the query mix (the listener group's mix and seed). */
const CLIENTS = 10_000;
const SEED = 42;

const T_LISTENER = 'dnssec-listener';
const T_SIGN = 'dnssec-sign';
const SIGN_ROWS: Readonly<Record<number, string>> = { 13: 'ecdsap256sha256', 15: 'ed25519' };

/**
 * Signed answers through the standalone listener's JavaScript path, in-process (no sockets): the
 * DNS door's message handler (`src/doors/dns/handleMessage.ts`: decode, resolve, the DNSSEC
 * signer as its after-answer hook, encode) on `www.example.test A` queries with ECS from the
 * listener group's client mix over the quickstart snapshot, with the DO bit against the very
 * same queries without it (the signer installed, and passing them through). After the timed runs,
 * the signature cache's hit rate over one pass of the mix. Then the cost of one fresh signature
 * over the `www` RRset per algorithm (RFC 4034 §3.1.8.1 signed data + the signature).
 */
const group: BenchGroup = {
  name: 'dnssec',
  description:
    'signed answers via the standalone listener message handler in-process: queries/s with DO vs without; signature cache hit rate; µs per fresh signature',
  tables: [
    {
      id: T_LISTENER,
      title: `standalone listener message handler in-process, www A with the ECS client mix (${CLIENTS} clients), signed zone, 1 core (CPU ${CPU})`,
      measure: 'queries/s',
      baseline: 'no-do',
      rows: [
        { id: 'no-do', label: 'without DO (answers unsigned; the signer passes them through)' },
        { id: 'do-warm', label: 'with DO, warm signature cache (ECDSA P-256 ZSK)' },
      ],
    },
    {
      id: T_SIGN,
      title: `one fresh RRSIG over the www A RRset (signed data + signature), 1 core (CPU ${CPU})`,
      measure: 'signatures/s',
      baseline: SIGN_ROWS[13],
      rows: [
        { id: SIGN_ROWS[13]!, label: 'algorithm 13, ECDSA P-256 SHA-256 (node:crypto)' },
        { id: SIGN_ROWS[15]!, label: 'algorithm 15, Ed25519 (node:crypto)' },
      ],
    },
  ],
  estimateSeconds: (runs) => 25 + runs * (2 * (RUN_SECONDS + 1.5) + 2 * (SIGN_SECONDS + 0.3)),
  run,
};
export default group;

/** A key pair as `gslbd dnssec keygen` writes it, read back as the signer reads key files. */
function benchKey(algorithm: 13 | 15): DnssecKey {
  const made = generateKey({ zone: 'example.test', algorithm: ALGORITHMS.get(algorithm)!, ksk: false, timing: {} });
  return keyFromFiles(parsePublicKeyFile(made.publicFile), parsePrivateKeyFile(made.privateFile), made.baseName, 'example.test');
}

/** `www.example.test A` with the client's ECS option, and the DO bit when asked. */
function packet(id: number, client: MixClient, dnssecOk: boolean): Buffer {
  const ecs = {
    code: 8,
    family: client.address.family === 4 ? 1 : 2,
    sourcePrefixLength: client.sourcePrefix,
    scopePrefixLength: 0,
    ip: formatIp(client.address),
  };
  return dnsPacket.encode({
    type: 'query',
    id,
    flags: 0,
    questions: [{ name: 'www.example.test', type: 'A', class: 'IN' }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: dnssecOk ? dnsPacket.DNSSEC_OK : 0, options: [ecs] } as unknown as dnsPacket.Answer],
  });
}

async function run(ctx: BenchContext): Promise<void> {
  const { snapshot, geo } = quickstartSnapshot();
  const { config } = loadConfigFile(QUICKSTART_CONFIG);
  const engine = new Engine(snapshot, systemContext(), createLogger('silent'));
  const zsk = benchKey(13);
  const contents = zoneContents(config);
  const zones = new Map<string, SignerZone | null>(config.zones.map((z) => [z.name, null]));
  zones.set('example.test', { config: { zone: 'example.test', keys: [zsk], dnskeyTtl: 3600, cds: false }, contents: contents.get('example.test')! });
  const cache = new SignatureCache(10_000);
  const timing = { validity: 8 * 86400, jitter: 6 * 3600, refresh: 2 * 86400, inceptionOffset: 3600 };
  const signer = new AnswerSigner({ zones, timing }, cache, () => Date.now(), { signature: () => {}, answer: () => {} });
  const handler = new MessageHandler({
    engine,
    metrics: new EngineMetrics(),
    log: engine.log,
    afterAnswer: [(query, answer) => signer.sign(query, answer)],
    behaviour: config.dns,
  });
  const peer = parseIp('127.0.0.1');
  const clients = clientMix(geo, CLIENTS, SEED);
  const plain = clients.map((c, i) => packet(i & 0xffff, c, false));
  const signed = clients.map((c, i) => packet(i & 0xffff, c, true));
  const answer = (packets: readonly Buffer[]) => (i: number) => (handler.handle(packets[i % packets.length]!, 'udp', peer) as Buffer).length;

  // The DO row must really sign and the other must not: check one reply of each.
  const rrsigs = (p: Buffer): number => (dnsPacket.decode(handler.handle(p, 'udp', peer) as Buffer).answers ?? []).filter((a) => a.type === 'RRSIG').length;
  if (rrsigs(signed[0]!) !== 1 || rrsigs(plain[0]!) !== 0) throw new Error('the DO query is not answered with one RRSIG, or the plain query is signed');

  await measureInProcess(ctx, T_LISTENER, { 'no-do': answer(plain), 'do-warm': answer(signed) }, { seconds: RUN_SECONDS, cpu: CPU });
  if (ctx.wants(T_LISTENER, 'do-warm')) {
    const [hits, misses] = [cache.hits, cache.misses];
    for (const p of signed) void handler.handle(p, 'udp', peer);
    const [h, m] = [cache.hits - hits, cache.misses - misses];
    ctx.note(
      `signature cache on one more pass of the ${CLIENTS}-client ECS mix after the timed runs: ${((100 * h) / (h + m)).toFixed(1)} % hits ` +
        `(${h} hits, ${m} misses); ${cache.size} RRsets held (one per answer variant: owner, TTL and addresses). ` +
        `Misses over the whole run: ${cache.misses} fresh RRsets signed of ${cache.hits + cache.misses} lookups.`,
    );
  }
  await measureSigning(ctx, snapshot);
}

/** Fresh signatures per second over the www RRset for each algorithm, with µs per signature. */
async function measureSigning(ctx: BenchContext, snapshot: ReturnType<typeof quickstartSnapshot>['snapshot']): Promise<void> {
  const wanted = Object.entries(SIGN_ROWS).filter(([, row]) => ctx.wants(T_SIGN, row));
  if (wanted.length === 0) return;
  const client = clientMix(quickstartSnapshot().geo, 1, SEED)[0]!;
  const rrset = resolve({ name: 'www.example.test', type: TYPE_CODES.A, client, transport: 'udp' }, snapshot, systemContext()).answers;
  const keys = new Map(wanted.map(([alg]) => [alg, benchKey(Number(alg) as 13 | 15)]));
  const restore = pinAllThreads(process.pid, CPU);
  try {
    for (let r = 1; r <= ctx.runs; r++) {
      for (const [alg, row] of wanted) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        const key = keys.get(alg)!;
        const now = Math.floor(Date.now() / 1000);
        let sink = 0;
        for (let i = 0; i < 2000; i++) sink += rrsigOf(rrset, key, 'example.test', { inception: now - 3600, expiration: now + i }).signature.length;
        let n = 0;
        const started = performance.now();
        const cpuBefore = process.cpuUsage();
        while (performance.now() - started < SIGN_SECONDS * 1000) {
          for (let k = 0; k < 64; k++) sink += rrsigOf(rrset, key, 'example.test', { inception: now - 3600, expiration: now + n++ }).signature.length;
        }
        const seconds = (performance.now() - started) / 1000;
        const cpu = process.cpuUsage(cpuBefore);
        if (sink === 0) throw new Error('no signature made');
        ctx.record(T_SIGN, row, n / seconds, { 'µs/signature (wall)': (seconds * 1e6) / n, 'CPU µs/signature': (cpu.user + cpu.system) / n });
        ctx.log(`run ${r} ${T_SIGN}/${row}: ${Math.round(n / seconds)} signatures/s`);
      }
      await new Promise((res) => setImmediate(res));
    }
  } finally {
    restore();
  }
}

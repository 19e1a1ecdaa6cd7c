import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AfterAnswerHook } from '../../core/contracts/frontDoor.js';
import { InProcessStateStore } from '../../core/contracts/stateStore.js';
import { RCODE } from '../../core/dns/rcode.js';
import { TYPE_CODES, type AnswerRecord, type DnskeyData, type RrsigData } from '../../core/dns/records.js';
import type { Answer, Query } from '../../core/model/query.js';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { allUpHealthView } from '../../core/views/healthView.js';
import { emptyMetricView } from '../../core/views/metricView.js';
import { resolve } from '../../pipeline/zones/authoritative.js';
import type { Snapshot } from '../../pipeline/snapshot.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { buildSnapshot } from '../../process/snapshot.js';
import { clientOf, fixedContext } from '../../../test/support/selectionFixture.js';
import { prefixLocationDb } from '../../../test/support/prefixLocationDb.js';
import { seededRandom } from '../../../test/support/seededRandom.js';
import { ALGORITHMS } from './algorithms.js';
import { dnssecCapability } from './capability.js';
import type { KeyTiming } from './keyFiles.js';
import { generateKey } from './keyGeneration.js';
import { signedData } from './rrsig.js';

/**
 * The signer on real engine answers (a snapshot of a small deployment: `www.example.test A`
 * answers by location — 10.1.0.0/16 NL → 192.0.2.10, 10.2.0.0/16 US → 192.0.2.20, 10.3.0.0/16 JP
 * → 192.0.2.30), run through the capability's after-answer hook with a clock the test sets.
 * Signatures are checked against the DNSKEYs the signer publishes; the validating resolvers'
 * verdicts are in test/e2e/dnssec.test.ts.
 */

const T0 = 1_800_000_000;

interface KeySpec {
  readonly ksk?: boolean;
  readonly timing: KeyTiming;
}

interface Signed {
  /** Sets the signer's clock (seconds since the epoch). */
  at(seconds: number): void;
  ask(name: string, type: string, client?: string, dnssecOk?: boolean): Answer;
  hook: AfterAnswerHook;
  query(name: string, type: string, client?: string, dnssecOk?: boolean): Query;
  explain(name: string, type: string, client?: string): Readonly<Record<string, unknown>>;
  metrics(): Promise<string>;
  snapshot: Snapshot;
}

function signedSetup(
  t: { teardown(fn: () => void): void },
  keys: readonly KeySpec[],
  signatures = '{ validity: 7200, jitter: 0, refresh: 1800 }',
  cacheEntries = 100,
): Signed {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-signer-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const names = keys.map((k) => {
    const key = generateKey({ zone: 'example.test', algorithm: ALGORITHMS.get(13)!, ksk: k.ksk === true, timing: k.timing });
    writeFileSync(join(dir, `${key.baseName}.key`), key.publicFile);
    writeFileSync(join(dir, `${key.baseName}.private`), key.privateFile, { mode: 0o600 });
    return key.baseName;
  });
  const statics = Array.from({ length: 10 }, (_, i) => `      - { name: s${i}, type: A, data: 198.51.100.${i + 1} }`).join('\n');
  const yaml = `zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, minimum: 60 }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
      - { name: txt, type: TXT, data: "hello" }
${statics}
datacenters:
  - { name: eu, location: Europe.NL, lat: 52.4, lon: 4.9 }
  - { name: us, location: North America.US, lat: 39.0, lon: -77.5 }
  - { name: ap, location: Asia.JP, lat: 35.7, lon: 139.7 }
services:
  - name: web
    endpoints:
      - { dc: eu, address: 192.0.2.10 }
      - { dc: us, address: 192.0.2.20 }
      - { dc: ap, address: 192.0.2.30 }
records:
  - { name: www.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [us] } }
dnssec:
  zones:
    - { zone: example.test, keys: [${names.join(', ')}], dnskeyTtl: 3600 }
  signatures: ${signatures}
  signatureCacheEntries: ${cacheEntries}
`;
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, yaml);
  const config = parseConfigText(yaml);
  const geo = prefixLocationDb([
    { cidr: '10.1.0.0/16', location: 'Europe.NL', lat: 52.37, lon: 4.9 },
    { cidr: '10.2.0.0/16', location: 'North America.US', lat: 39.0, lon: -77.5 },
    { cidr: '10.3.0.0/16', location: 'Asia.JP', lat: 35.7, lon: 139.7 },
  ]);
  const snapshot = buildSnapshot(file, config, { geo, health: allUpHealthView, metrics: emptyMetricView }, T0 * 1000);
  let now = T0;
  const metrics = new EngineMetrics();
  const runtime = dnssecCapability.start({
    file,
    log: createLogger('silent'),
    metrics,
    store: new InProcessStateStore(),
    now: () => now * 1000,
    generation: () => 1,
    publish: () => undefined,
    reload: () => Promise.resolve({ ok: false, error: 'not in this test' }),
  });
  runtime.prepare(config);
  runtime.commit(config);
  const ctx = fixedContext();
  const query = (name: string, type: string, client = '127.0.0.1', dnssecOk = true): Query => ({
    name,
    type: TYPE_CODES[type as 'A'] ?? Number(type),
    client: clientOf(client),
    transport: 'udp',
    dnssecOk,
  });
  return {
    at: (s) => (now = s),
    query,
    hook: runtime.afterAnswer,
    ask(name, type, client, dnssecOk) {
      const q = query(name, type, client, dnssecOk);
      return runtime.afterAnswer(q, resolve(q, snapshot, ctx)) as Answer;
    },
    explain(name, type, client) {
      const q = query(name, type, client);
      return runtime.afterAnswer.explain!(q, resolve(q, snapshot, ctx)).notes;
    },
    metrics: () => metrics.registry.metrics(),
    snapshot,
  };
}

/** The RRset of `type` at the head of `records` and the RRSIGs after it. */
function rrsetAndSigs(records: readonly AnswerRecord[], type: string): { rrset: AnswerRecord[]; sigs: AnswerRecord[] } {
  const rrset = records.filter((r) => r.type === type);
  const sigs = records.filter((r) => r.type === 'RRSIG' && (r.data as RrsigData).typeCovered === TYPE_CODES[type as 'A']);
  return { rrset, sigs };
}

/** True when `sig` is a valid signature of `rrset` by one of `dnskeys` (cryptographically; times are not checked here). */
function verifies(sig: AnswerRecord, rrset: readonly AnswerRecord[], dnskeys: readonly AnswerRecord[]): boolean {
  const { signature, ...fields } = sig.data as RrsigData;
  return dnskeys.some((k) => {
    const key = k.data as DnskeyData;
    return key.algorithm === fields.algorithm && ALGORITHMS.get(key.algorithm)!.verify(key.publicKey, signedData(rrset, fields), signature);
  });
}

const ALWAYS: KeyTiming = { publish: T0 - 86400, activate: T0 - 86400 };

test('two clients with different answers never receive each other’s signed RRsets; clients with the same answer share one signature', (t) => {
  const s = signedSetup(t, [{ ksk: true, timing: ALWAYS }, { timing: ALWAYS }]);
  const dnskeys = s.ask('example.test', 'DNSKEY').answers.filter((r) => r.type === 'DNSKEY');
  const random = seededRandom(7);
  const seen = new Map<string, AnswerRecord>();
  const variants = new Map<string, { rrset: AnswerRecord[]; sig: AnswerRecord }>();
  for (let i = 0; i < 300; i++) {
    const client = `10.${1 + Math.floor(random() * 3)}.${Math.floor(random() * 256)}.0/24`;
    const a = s.ask('www.example.test', 'A', client);
    const { rrset, sigs } = rrsetAndSigs(a.answers, 'A');
    t.is(rrset.length, 1);
    t.is(sigs.length, 1, 'signed by the ZSK only');
    t.true(verifies(sigs[0]!, rrset, dnskeys), `client ${client}: the RRSIG covers the RRset it came with`);
    const address = rrset[0]!.data as string;
    const earlier = seen.get(address);
    if (earlier) t.is(sigs[0], earlier, 'one signature per variant, reused');
    else seen.set(address, sigs[0]!);
    variants.set(address, { rrset, sig: sigs[0]! });
  }
  t.deepEqual([...seen.keys()].sort(), ['192.0.2.10', '192.0.2.20', '192.0.2.30']);
  for (const [x, a] of variants) {
    for (const [y, b] of variants) {
      if (x === y) continue;
      t.not(a.sig, b.sig);
      t.false(verifies(a.sig, b.rrset, dnskeys), `the signature of ${x} does not cover ${y}`);
    }
  }
});

test('the cache counts hits and misses and keeps at most signatureCacheEntries RRsets', async (t) => {
  const s = signedSetup(t, [{ timing: ALWAYS }], '{ validity: 7200, jitter: 0, refresh: 1800 }', 3);
  for (let round = 0; round < 2; round++) for (let i = 0; i < 10; i++) s.ask(`s${i}.example.test`, 'A');
  const text = await s.metrics();
  t.regex(text, /^gslbd_dnssec_signature_cache_entries 3$/m);
  t.regex(text, /^gslbd_dnssec_signature_cache_lookups_total\{result="miss"\} 20$/m, 'ten RRsets through a cache of three: every lookup misses');
  for (let i = 0; i < 5; i++) s.ask('s9.example.test', 'A');
  const after = await s.metrics();
  t.regex(after, /^gslbd_dnssec_signature_cache_lookups_total\{result="hit"\} 5$/m);
  t.regex(after, /^gslbd_dnssec_signatures_total\{algorithm="13"\} 20$/m);
  t.regex(after, /^gslbd_dnssec_answers_total\{kind="signed"\} 25$/m);
});

test('signatures are made afresh before they expire: at every moment the one served has more than `refresh` left (injected clock)', (t) => {
  const s = signedSetup(t, [{ timing: ALWAYS }], '{ validity: 7200, jitter: 0, refresh: 1800, inceptionOffset: 3600 }');
  const made = new Set<AnswerRecord>();
  for (let now = T0; now <= T0 + 10 * 3600; now += 300) {
    s.at(now);
    const { sigs } = rrsetAndSigs(s.ask('www.example.test', 'A', '10.1.0.0/24').answers, 'A');
    const sig = sigs[0]!.data as RrsigData;
    t.true(sig.expiration - now > 1800, `at +${now - T0} s the signature expires at +${sig.expiration - T0} s`);
    t.true(sig.inception <= now - 3600, 'inception backdated by an hour');
    made.add(sigs[0]!);
  }
  // Valid 7200 s, made afresh once 1800 s are left: a new signature every 5400 s (rounded to the 300 s steps).
  t.is(made.size, 7);
  s.at(T0 + 100);
  const first = rrsetAndSigs(s.ask('ns1.example.test', 'A').answers, 'A').sigs[0]!;
  s.at(T0 + 100 + 5399);
  t.is(rrsetAndSigs(s.ask('ns1.example.test', 'A').answers, 'A').sigs[0], first, 'still fresh: from the cache');
  s.at(T0 + 100 + 5400);
  t.not(rrsetAndSigs(s.ask('ns1.example.test', 'A').answers, 'A').sigs[0], first, 'refresh time reached: signed again');
});

test('expiration jitter spreads signatures made at the same time', (t) => {
  const s = signedSetup(t, [{ timing: ALWAYS }], '{ validity: 86400, jitter: 3600, refresh: 3600 }');
  const expirations = new Set<number>();
  for (let i = 0; i < 10; i++) expirations.add((rrsetAndSigs(s.ask(`s${i}.example.test`, 'A').answers, 'A').sigs[0]!.data as RrsigData).expiration);
  t.true(expirations.size > 1);
  for (const e of expirations) t.true(e > T0 + 86400 - 3600 && e <= T0 + 86400);
});

test('a pre-published ZSK rollover under the injected clock: every signature is by a key every cached DNSKEY RRset holds', (t) => {
  const h = 3600;
  const s = signedSetup(
    t,
    [
      { ksk: true, timing: ALWAYS },
      // The old ZSK stops signing at +3 h and leaves the DNSKEY RRset at +6 h; the new one is published at +1 h, signs from +3 h.
      { timing: { publish: T0 - 86400, activate: T0 - 86400, inactive: T0 + 3 * h, delete: T0 + 6 * h } },
      { timing: { publish: T0 + h, activate: T0 + 3 * h } },
    ],
    '{ validity: 7200, jitter: 0, refresh: 1800 }',
  );
  // A caching resolver: every DNSKEY RRset it fetched, kept for the RRset's TTL.
  const cached: { at: number; keys: AnswerRecord[] }[] = [];
  const signers = new Set<number>();
  for (let now = T0; now <= T0 + 9 * h; now += 600) {
    s.at(now);
    const keys = s.ask('example.test', 'DNSKEY').answers.filter((r) => r.type === 'DNSKEY');
    cached.push({ at: now, keys });
    for (const [name, client] of [
      ['www.example.test', '10.1.0.0/24'],
      ['www.example.test', '10.3.0.0/24'],
      ['ns1.example.test', '127.0.0.1'],
    ] as const) {
      const { rrset, sigs } = rrsetAndSigs(s.ask(name, 'A', client).answers, 'A');
      t.is(sigs.length, 1);
      signers.add((sigs[0]!.data as RrsigData).keyTag);
      for (const c of cached) {
        if (now - c.at >= 3600) continue;
        t.true(verifies(sigs[0]!, rrset, c.keys), `at +${(now - T0) / 60} min, a DNSKEY RRset cached at +${(c.at - T0) / 60} min validates ${name}`);
      }
    }
    const tags = keys.map((k) => k.data as DnskeyData).filter((k) => !(k.flags & 1));
    t.is(tags.length, now >= T0 + h && now < T0 + 6 * h ? 2 : 1, `ZSKs published at +${(now - T0) / 60} min`);
  }
  t.is(signers.size, 2, 'the old ZSK signed, then the new one');
});

test('answers for doors without a DO bit are untouched; without DO only the apex keys are answered; NXNAME is FORMERR', (t) => {
  const s = signedSetup(t, [{ timing: ALWAYS }]);
  const q = s.query('www.example.test', 'A', '10.1.0.0/24');
  const a = resolve(q, s.snapshot, fixedContext());
  const noDoBit: Query = { name: q.name, type: q.type, client: q.client, transport: q.transport };
  t.is(s.hook(noDoBit, a), a, 'the compact protocol and PowerDNS: the DNS server in front signs');
  t.is(s.hook({ ...noDoBit, type: TYPE_CODES.DNSKEY, name: 'example.test' }, a), a);
  t.is(s.hook({ ...q, dnssecOk: false }, a), a);
  const keys = s.ask('example.test', 'DNSKEY', undefined, false);
  t.deepEqual(
    keys.answers.map((r) => r.type),
    ['DNSKEY'],
  );
  const nxname = s.ask('www.example.test', '128');
  t.is(nxname.rcode, RCODE.FORMERR);
  t.is(s.ask('nothere.example.test', 'A', undefined, false).rcode, RCODE.NXDOMAIN);
  t.is(s.ask('nothere.example.test', 'A').rcode, RCODE.NOERROR);
  // What the hook says it leaves as the engine built it (the fast path replays only those answers) is what it does leave.
  const leaves = (query: Query): boolean => s.hook.leavesUnchanged!(query);
  t.true(leaves({ ...q, dnssecOk: false }) && s.hook({ ...q, dnssecOk: false }, a) === a);
  t.true(leaves(noDoBit));
  t.false(leaves(q), 'DO set: signed');
  t.false(leaves(s.query('example.test', 'DNSKEY', undefined, false)), 'the apex keys are answered without DO');
  t.false(leaves(s.query('example.test', 'CDS', undefined, false)));
  t.false(leaves(s.query('www.example.test', '128', undefined, false)), 'NXNAME: FORMERR');
});

test('/explain’s account: which RRsets were signed, and whether from the cache', (t) => {
  const s = signedSetup(t, [{ timing: ALWAYS }]);
  const first = s.explain('www.example.test', 'A', '10.2.0.0/24');
  t.like(first, { step: 'dnssec', signed: true });
  t.like((first.rrsets as unknown[])[0], { owner: 'www.example.test', type: 'A', fromCache: false });
  t.like((s.explain('www.example.test', 'A', '10.2.0.0/24').rrsets as unknown[])[0], { fromCache: true });
});

import test from 'ava';
import { emptyLocationDb } from '../core/location/locationDb.js';
import { emptyMetricView } from '../core/views/metricView.js';
import { CAPABILITIES } from '../process/capabilities.js';
import { readCandidateConfig } from '../process/candidateConfig.js';
import type { Config } from '../process/configSchema.js';
import { largeConfig } from '../../test/support/largeConfig.js';
import { ask, clientOf, dcsDown, fixedContext } from '../../test/support/selectionFixture.js';
import { compileSnapshot } from './snapshot.js';
import { nameRrsets } from './zones/nameRrsets.js';
import { encodeAnswer } from '../doors/compact/frameCodec.js';
import { lookupReply } from '../doors/powerdns/lookupReply.js';
import { remoteClient } from '../doors/powerdns/remoteClient.js';

/**
 * Issue 17, reloads that never stop answering: V8 marks the entries of every WeakMap as
 * ephemerons in the atomic pause of a full collection, and a reload of 20,000 records keeps two
 * snapshots alive. With a WeakMap entry per record (the health gate's stage → health and
 * outcome memos, the candidates stage's live lists), `mark.ephemeron.marking` was 50 of a 66 ms
 * pause in the engine (`--trace-gc-nvp`, the reload row of docs/BENCHMARKS.md). Per-record state
 * lives on the record's own objects instead; this counts `WeakMap.prototype.set` calls while
 * records are compiled and each is answered.
 */
/** The snapshot of a parsed configuration text (parsed first: the schema library keeps its own memo of what it parsed). */
function snapshotOf(text: string) {
  const { config } = readCandidateConfig('weakmaps.yaml', text);
  return () =>
    compileSnapshot<Config>({
      file: 'weakmaps.yaml',
      config,
      capabilities: CAPABILITIES,
      state: { geo: emptyLocationDb(), health: dcsDown(), metrics: emptyMetricView },
      nowMs: 1_700_000_000_000,
    });
}

/** Runs `work` while counting `WeakMap.prototype.set` calls per map; returns the counts. */
function weakMapSets(work: () => void): number[] {
  const sets = new Map<WeakMap<object, unknown>, number>();
  // The original method, to call as `this`'s and to put back.
  const set = Object.getOwnPropertyDescriptor(WeakMap.prototype, 'set')!.value as (
    this: WeakMap<object, unknown>,
    key: object,
    value: unknown,
  ) => WeakMap<object, unknown>;
  WeakMap.prototype.set = function (this: WeakMap<object, unknown>, key: object, value: unknown) {
    sets.set(this, (sets.get(this) ?? 0) + 1);
    return set.call(this, key, value);
  };
  try {
    work();
  } finally {
    WeakMap.prototype.set = set;
  }
  return [...sets.values()];
}

test('compiling and answering records adds no WeakMap entry per record', (t) => {
  const records = 500;
  const compile = snapshotOf(largeConfig({ records }));
  const sets = weakMapSets(() => {
    const snap = compile();
    const ctx = fixedContext();
    for (let i = 0; i < records; i++) t.is(ask(snap, ctx, `r${i}.big.test`, '192.0.2.1').data.length, 1);
  });
  t.true(Math.max(0, ...sets) < 10, `WeakMap entries set per map: ${sets.join(', ')}`);
});

test('answering static names through nameRrsets adds no WeakMap entry per name', (t) => {
  const names = 500;
  const statics = Array.from({ length: names }, (_, i) => `      - { name: s${i}, type: A, data: 192.0.2.${(i % 250) + 1} }\n`).join('');
  const snap = snapshotOf(largeConfig({ records: 1 }).replace('      - { name: ns1, type: A, data: 192.0.2.53 }\n', (ns) => ns + statics))();
  const ctx = fixedContext();
  const sets = weakMapSets(() => {
    // Twice: the second pass reads what the first kept.
    for (let pass = 0; pass < 2; pass++)
      for (let i = 0; i < names; i++) t.is(nameRrsets(snap, `s${i}.big.test`, clientOf('192.0.2.1'), ctx, 'A')!.rrsets[0]!.records.length, 1);
  });
  t.true(Math.max(0, ...sets) < 10, `WeakMap entries set per map: ${sets.join(', ')}`);
});

test('the compact and PowerDNS doors keep their encodings of reused decisions without a WeakMap entry per record', (t) => {
  // Issue 17: their tail and reply-text caches held an entry per record and door (an ephemeron
  // each in every full collection); right after a publish, inserting into those growing tables
  // held the event loop 46–51 ms in the reload row of docs/BENCHMARKS.md.
  const records = 500;
  const snap = snapshotOf(largeConfig({ records }))();
  const ctx = fixedContext();
  const rc = remoteClient('192.0.2.1/32', '192.0.2.1');
  const replies: string[] = [];
  const sets = weakMapSets(() => {
    // Three passes: the first decision is computed, the second reused (frozen records), the third replays the kept encodings.
    for (let pass = 0; pass < 3; pass++) {
      for (let i = 0; i < records; i++) {
        const name = `r${i}.big.test`;
        const contents = nameRrsets(snap, name, rc.client, ctx, 'A')!;
        const reply = lookupReply(JSON.stringify(name), contents, rc, 1, false);
        const frame = encodeAnswer(i, {
          rcode: 0,
          authoritative: true,
          notOurs: false,
          ecsScope: 0,
          clientScope: 0,
          answers: contents.rrsets[0]!.records,
          authority: [],
          additional: [],
        });
        if (pass > 0) {
          t.is(reply, replies[i]!);
          t.true(frame.includes(Buffer.from([10, 0, i % 200, 1])));
        } else replies.push(reply);
      }
    }
  });
  t.true(Math.max(0, ...sets) < 10, `WeakMap entries set per map: ${sets.join(', ')}`);
  t.regex(replies[7] ?? '', /^\{"result":\[\{"qname":"r7\.big\.test","qtype":"A","content":"10\.0\.7\.1","ttl":30\}\]\}\n$/);
});

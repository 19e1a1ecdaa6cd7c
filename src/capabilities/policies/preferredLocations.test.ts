import test from 'ava';
import { parseDottedLocation } from '../../core/location/location.js';
import { prefixLocationDb } from '../../../test/support/prefixLocationDb.js';
import { ask, dcsDown, fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { matchPreferred, type PreferredMatch } from './preferredLocations.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';
import { SEED002_APP_SERVICE } from '../../../test/support/seed002Service.js';

const loc = parseDottedLocation;

test('perfect, partial and no match as seed 002 defines them', (t) => {
  const table: [string, string, PreferredMatch][] = [
    // preferred, data center, expected
    ['*.UK.*.*', '*.UK.*.*', 'perfect'],
    ['*.UK.*.*', 'Europe.UK.*.*', 'perfect'],
    ['Europe.UK', 'Europe.EG', 'partial'],
    ['Asia.HK', 'Asia.IN', 'partial'],
    ['Asia.HK', 'Asia.jpn', 'partial'],
    ['Asia.HK', 'asia.hk', 'perfect'],
    ['Asia.HK', 'Europe.UK', 'no'],
    // A wildcard on the data center side equals only a wildcard (docs/PRODUCT.md §4).
    ['Europe.UK', '*.UK', 'partial'],
    ['Europe.*.*.*', '*', 'no'],
    ['Europe.*.*.*', 'Europe.UK', 'perfect'],
    // Normalisation: names and codes, alpha-3 and alpha-2, UK = GB.
    ['EU.GB', 'Europe.UK', 'perfect'],
    ['Africa.ZMB', 'AF.ZM', 'perfect'],
    ['North America.US.CA', 'NA.US.TX', 'partial'],
  ];
  for (const [p, dc, expected] of table) t.is(matchPreferred(loc(p), loc(dc)), expected, `${p} vs ${dc}`);
});

// Seed 002's worked example (docs/PRODUCT.md §4 and Sources): its eight services, action and policy.
const SEED_CONFIG = `
${EXAMPLE_ZONE}
datacenters:
  - { name: in, location: Asia.IN }
  - { name: jpn, location: Asia.jpn }
  - { name: hk, location: Asia.HK }
  - { name: uk, location: Europe.UK }
  - { name: ru, location: Europe.RU }
  - { name: eg, location: Europe.EG }
  - { name: sd, location: Africa.SD }
  - { name: zmb, location: Africa.zmb }
${SEED002_APP_SERVICE}
records:
  - { name: app.example.test, type: A, service: app }
actions:
  - { name: prefLoc11, type: preferred-locations, locations: ["Asia.HK", "Europe.UK"] }
policies:
  rules:
    - { name: dnsPolPrefLoc, when: { clientLocation: "*.ZMB.*.*" }, action: prefLoc11 }
`;

// A client in Zambia (41.0.0.0/8) and one in Britain (81.0.0.0/8); the rest is unknown.
const geo = prefixLocationDb([
  { cidr: '41.0.0.0/8', location: 'Africa.ZMB' },
  { cidr: '81.0.0.0/8', location: 'Europe.GB' },
]);

/** The data centers of `n` successive answers for the Zambian client. */
function answers(down: string[], n = 4): { dcs: string[]; scopes: number[] } {
  const snap = snapshotOf(SEED_CONFIG, geo, dcsDown(...down));
  const ctx = fixedContext();
  const out = { dcs: [] as string[], scopes: [] as number[] };
  for (let i = 0; i < n; i++) {
    const a = ask(snap, ctx, 'app.example.test', '41.1.2.0/24');
    out.dcs.push(...a.dcs);
    out.scopes.push(a.scope);
  }
  return out;
}

test('seed 002 worked example, step 1: the perfect match for Asia.HK answers while it is up', (t) => {
  t.deepEqual(answers([]), { dcs: ['hk', 'hk', 'hk', 'hk'], scopes: [8, 8, 8, 8] });
});

test('seed 002 worked example, step 2: Asia.HK down -> the perfect match for Europe.UK', (t) => {
  t.deepEqual(answers(['hk']).dcs, ['uk', 'uk', 'uk', 'uk']);
});

test('seed 002 worked example, step 3: HK and UK down -> partial matches of Asia.HK, balanced', (t) => {
  t.deepEqual(answers(['hk', 'uk']).dcs, ['in', 'jpn', 'in', 'jpn']);
  t.deepEqual(answers(['hk', 'uk', 'in']).dcs, ['jpn', 'jpn', 'jpn', 'jpn'], 'only one partial match up: that one');
});

test('seed 002 worked example, step 4: partials of Asia.HK down -> partial matches of Europe.UK, balanced', (t) => {
  t.deepEqual(answers(['hk', 'uk', 'in', 'jpn']).dcs, ['ru', 'eg', 'ru', 'eg']);
  t.deepEqual(answers(['hk', 'uk', 'in', 'jpn', 'eg']).dcs, ['ru', 'ru', 'ru', 'ru']);
});

test('seed 002 worked example, step 5: every match down -> all other up services, balanced', (t) => {
  t.deepEqual(answers(['hk', 'uk', 'in', 'jpn', 'ru', 'eg']).dcs, ['sd', 'zmb', 'sd', 'zmb']);
});

test('seed 002: a client outside *.ZMB.*.* is not bound by the policy (static proximity answers)', (t) => {
  const snap = snapshotOf(SEED_CONFIG, geo);
  const a = ask(snap, fixedContext(), 'app.example.test', '81.2.3.4');
  t.deepEqual(a.dcs, ['uk']);
  t.is(a.scope, 8);
});

test('seed 002: /explain shows the policy, each preferred location per service and the pass that decided', (t) => {
  const snap = snapshotOf(SEED_CONFIG, geo, dcsDown('hk', 'uk'));
  const a = ask(snap, fixedContext(), 'app.example.test', '41.1.2.3', 'A', true);
  const step = a.selections[0]!.steps.find((s) => s.stage === 'dns-policy')!;
  t.is(step.matched, 'dnsPolPrefLoc');
  t.deepEqual(step.action, { name: 'prefLoc11', type: 'preferred-locations' });
  const locations = step.preferredLocations as { location: string; services: Record<string, { match: string; up: boolean }> }[];
  t.deepEqual(
    locations.map((l) => [
      l.location,
      Object.entries(l.services)
        .map(([dc, m]) => `${dc}:${m.match}${m.up ? '' : '(down)'}`)
        .join(' '),
    ]),
    [
      ['AS.HK', 'in:partial jpn:partial hk:perfect(down) uk:no(down) ru:no eg:no sd:no zmb:no'],
      ['EU.GB', 'in:no jpn:no hk:no(down) uk:perfect(down) ru:partial eg:partial sd:no zmb:no'],
    ],
  );
  t.is(step.decidedBy, 'partial match for AS.HK');
  t.deepEqual(step.groups, [
    ['in', 'jpn'],
    ['ru', 'eg'],
    ['sd', 'zmb'],
  ]);
  const scope = a.selections[0]!.steps.filter((s) => s.stage === 'scope');
  t.deepEqual(scope, [
    {
      stage: 'scope',
      input: "answer class of the client's location (locations merged by identical decision for this record: 3 classes, 6 ranges)",
      representative: 'AF.ZM',
      prefix: 8,
      scopeSoFar: 8,
    },
  ]);
});

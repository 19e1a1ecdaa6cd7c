import test from 'ava';
import { asciiLower, canonicalName, configuredName, isInZone, ownerInZone, parentName } from './name.js';

/** Canonical names (RFC 4343 case folding, IDNA for configured names) and label arithmetic. */

test('only A–Z fold to lower case (RFC 4343 §3)', (t) => {
  t.is(asciiLower('WwW.ExAmPlE.TeSt'), 'www.example.test');
  t.is(asciiLower('ÀB\\195'), 'Àb\\195');
  t.is(canonicalName('Example.TEST.'), 'example.test');
  t.is(canonicalName('.'), '');
});

const configured: [text: string, canonical: string][] = [
  ['WWW.Example.Test.', 'www.example.test'],
  ['bücher.example', 'xn--bcher-kva.example'],
  ['*.Dyn.example.test', '*.dyn.example.test'],
  ['*', '*'],
  ['.', ''],
  ['_sip._tcp.example.test', '_sip._tcp.example.test'],
];
for (const [text, canonical] of configured) {
  test(`configuredName(${text}) = ${canonical}`, (t) => {
    t.is(configuredName(text), canonical);
  });
}

const badNames: [text: string, message: string][] = [
  ['a..b', '"a..b" has an empty label'],
  [`${'a'.repeat(64)}.test`, `"${'a'.repeat(64)}.test" has a label longer than 63 characters`],
  [`${'a.'.repeat(127)}test`, `"${'a.'.repeat(127)}test" is longer than 253 characters`],
  ['exa mple.test', '"exa mple.test" is not a valid internationalised domain name'],
  ['a/b.test', "\"a/b.test\" has a label with characters other than letters, digits, '-' and '_'"],
];
for (const [text, message] of badNames) {
  test(`configuredName rejects ${text.slice(0, 20)}…`, (t) => {
    t.throws(() => configuredName(text), { message });
  });
}

const parents: [name: string, parent: string][] = [
  ['a.b.c', 'b.c'],
  ['c', ''],
  ['', ''],
  ['a\\.b.c', 'c'], // one label "a.b" (a dot escaped on the wire, RFC 1035 §5.1)
  ['a\\\\.b.c', 'b.c'], // label "a\": the backslash is escaped, the dot is a boundary
  ['a\\\\\\.b.c', 'c'], // label "a\.b"
  ['a\\046b.c', 'c'], // \046 is a dot in decimal form: no boundary either
];
for (const [name, parent] of parents) {
  test(`parentName(${name}) = ${parent || "''"}`, (t) => {
    t.is(parentName(name), parent);
  });
}

test('isInZone compares whole labels', (t) => {
  t.true(isInZone('www.example.test', 'example.test'));
  t.true(isInZone('example.test', 'example.test'));
  t.true(isInZone('anything', ''));
  t.false(isInZone('wwwexample.test', 'example.test'));
  t.false(isInZone('example.test', 'www.example.test'));
  t.false(isInZone('www\\.example.test', 'example.test'), 'the label "www.example" lies under test, not example.test');
  t.true(isInZone('www\\\\.example.test', 'example.test'));
});

test('ownerInZone joins relative owners', (t) => {
  t.is(ownerInZone('@', 'example.test'), 'example.test');
  t.is(ownerInZone('www', 'example.test'), 'www.example.test');
  t.is(ownerInZone('*.dyn', 'example.test'), '*.dyn.example.test');
  t.is(ownerInZone('www', ''), 'www');
});
